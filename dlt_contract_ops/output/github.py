"""GitHub Actions workflow commands: one annotation per finding, one per error.

A finding is an annotation at its severity (`::error`, `::warning`; `info`: `::notice`)
titled with its drift type and table, its message naming the columns, the worst first; an
acknowledged one is a `::notice` whose title starts with "acknowledged" and whose
message says by whom, why and until when; an errored source or detector is an `::error`.
Values are escaped by the workflow command rules, so a column name holding `%`, a line
break, `:` or `,` cannot end a command early or forge another one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the contracts' annotations use this module: no pydantic at import time
    from dlt_contract_ops.model.findings import ReconcileResult


def escape_data(text: str) -> str:
    r"""A command's message: `%`, CR and LF percent-encoded.

    >>> escape_data("50%\nof: a,b")
    '50%25%0Aof: a,b'
    """
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    r"""A command's property value (`title=`): the message escapes, plus `:` and `,`.

    >>> escape_property("additive drift in `t`: a,b")
    'additive drift in `t`%3A a%2Cb'
    """
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(
    level: str, title: str, message: str, *, file: tuple[str, int] | None = None
) -> str:
    """One workflow command line, e.g. `::warning title=...::message`; `file` is the
    (path, line) it annotates.

    >>> command("error", "a:b", "x", file=("m.py", 3))
    '::error file=m.py,line=3,title=a%3Ab::x'
    """
    where = f"file={escape_property(file[0])},line={file[1]}," if file is not None else ""
    return f"::{level} {where}title={escape_property(title)}::{escape_data(message)}"


def to_github(results: Sequence[ReconcileResult]) -> str:
    """The results as workflow commands (`reconcile --format github`); empty when clean.

    >>> from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult
    >>> f = DriftFinding(drift_type="additive", source="shop", resource="Orders",
    ...                  table="orders", columns=["ip"])
    >>> print(to_github([ReconcileResult(source="shop", findings=[f])]), end="")
    ::warning title=additive drift in shop.orders::shop: additive drift in table `orders` \
(resource Orders): 1 column(s): ip
    """
    from dlt_contract_ops.model.findings import by_severity
    from dlt_contract_ops.model.severity import level
    from dlt_contract_ops.output.text import text_name
    from dlt_contract_ops.output.wording import acknowledgement, summary

    lines: list[str] = []
    for r in results:
        for f in by_severity(r.findings):
            title = f"{f.drift_type} drift in {text_name(r.source)}.{text_name(f.table)}"
            message = f"{r.source}: {summary(f)}"
            if f.acknowledged:
                title, message = f"acknowledged {title}", f"{message} ({acknowledgement(f)})"
            shown = "notice" if f.acknowledged else level("github", f.severity)
            lines.append(command(shown, title, message))
        if r.error:
            title = f"{text_name(r.source)} ({r.detector}) errored"
            lines.append(command("error", title, r.error))
    return "".join(line + "\n" for line in lines)
