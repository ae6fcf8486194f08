"""JSON: the one writer of every JSON document the package prints (`json_text`), and the
documents of the commands beside `reconcile` and `contract` (`acks`, `gate check`, `sinks`,
`models infer`, `profile`, `validate`), each from the value its command's work returned.

Imports nothing heavy: each command imports it when it prints.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import datetime as dt

    from dlt_contract_ops.acks.store import Ack
    from dlt_contract_ops.engine.validation import Report
    from dlt_contract_ops.infer.service import InferReport
    from dlt_contract_ops.model.gate import GateReport
    from dlt_contract_ops.registry import SinkInfo


def json_text(document: Any) -> str:
    """`document` as every `--format json` prints it: indented by two, characters beyond
    ASCII as themselves; no newline at the end.

    >>> print(json_text({"table": "café", "rows": [1]}))
    {
      "table": "café",
      "rows": [
        1
      ]
    }
    """
    return json.dumps(document, indent=2, ensure_ascii=False)


def acks_json(entries: Sequence[Ack], now: dt.datetime) -> str:
    """`acks --format json`: every acknowledgement, as the file holds it: where the drift is
    (`source`, `table`, `detector`, `columns`), what it said when acknowledged (`summary`,
    `content`, `digest`: `model.content`), then `{id, until, reason, by, created}`, and
    whether it has `expired` at `now` (as the text listing says it). An entry written before
    content was recorded has `null` there (it covers its id whatever the content); one
    written before where was recorded, `null` and `[]`."""
    return json_text([{
        "id": a.id,
        "source": a.source,
        "table": a.table,
        "detector": a.detector,
        "columns": list(a.columns),
        "summary": a.summary,
        "content": None if a.content is None else list(a.content),
        "digest": a.digest,
        **a.document(),
        "expired": a.expired(now),
    } for a in entries])


def gate_json(report: GateReport) -> str:
    """`gate check --format json`: the gate's report on the batch."""
    return json_text(report.model_dump(mode="json"))


def sinks_json(catalog: Sequence[SinkInfo], missing: Sequence[str]) -> str:
    """`sinks --format json`: the registered sinks, and the enabled names none registers."""
    return json_text({"sinks": [asdict(s) for s in catalog],
                      "enabled_but_not_registered": list(missing)})


def infer_json(report: InferReport) -> str:
    """`models infer --format json`: each module, its binding, the notes, the binding TOML."""
    return json_text({
        "written": report.written,
        "models": [{"source": m.source, "resource": m.resource, "table": m.table,
                    "path": str(m.path), "ref": m.ref} for m in report.models],
        "notes": list(report.notes),
        "bindings": report.bindings,
        "config_file": str(report.config_file),
        "queries": dict(report.queries),
    })


def profile_json(source: str, history: Mapping[str, Any]) -> str:
    """`profile --format json`: each root table's per-load history."""
    return json_text({"source": source, "tables": history})


def validation_json(report: Report) -> str:
    """`validate --format json`: the project's problems with their files and keys."""
    return json_text({
        "ok": report.ok,
        "sources": report.sources,
        "alert_sinks": report.sinks,
        "problems": [{"rule": p.rule, "file": p.file, "key": p.key, "message": p.message}
                     for p in report.problems],
        "notes": report.notes,
    })
