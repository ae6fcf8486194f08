"""Parse a waiver file: accepted breaks, each with a reason and an expiry date.

```toml
[[waivers]]
rule = "unit.changed"
resource = "order_lines"
column = "unit_price"
reason = "cents migration agreed with finance (FIN-231)"
expires = 2026-03-31
```

Pure: the caller reads the file and passes its text and path.
"""

from __future__ import annotations

import datetime as dt
import sys
from typing import Any

from dlt_contract_ops.contracts.release import Waiver
from dlt_contract_ops.contracts.rules import Rule
from dlt_contract_ops.errors import WaiverError, did_you_mean

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

_KEYS = ("rule", "resource", "column", "reason", "expires")


def _date(value: Any, where: str) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            pass
    raise WaiverError(f"{where}: `expires` must be a date like 2026-03-31, got {value!r}.")


def _text(entry: dict[str, Any], key: str, where: str, *, required: bool = True) -> str | None:
    value = entry.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        state = "is missing" if value is None else "must be a non-empty string"
        raise WaiverError(f"{where}: `{key}` {state}.")
    return value


def parse_waivers(text: str, path: str) -> tuple[Waiver, ...]:
    """The waivers in TOML `text` read from `path`; errors name the file and the entry.

    >>> w = parse_waivers('[[waivers]]\\nrule = "unit.changed"\\nresource = "r"\\n'
    ...                   'column = "c"\\nreason = "agreed"\\nexpires = 2026-01-31\\n', "w.toml")
    >>> w[0].expires.isoformat(), w[0].where
    ('2026-01-31', 'w.toml, waiver #1')
    """
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise WaiverError(f"`{path}` is not valid TOML: {exc}.") from exc
    unknown = [k for k in doc if k != "waivers"]
    if unknown:
        raise WaiverError(
            f"`{path}`: unknown top-level key `{unknown[0]}`; list waivers as `[[waivers]]` "
            "tables."
        )
    entries = doc.get("waivers", [])
    if not isinstance(entries, list):
        raise WaiverError(f"`{path}`: `waivers` must be an array of tables (`[[waivers]]`).")
    rule_ids = sorted(r.rule_id for r in Rule)
    out: list[Waiver] = []
    for i, entry in enumerate(entries, start=1):
        where = f"{path}, waiver #{i}"
        if not isinstance(entry, dict):
            raise WaiverError(f"{where}: must be a table with {', '.join(_KEYS)}.")
        for key in entry:
            if key not in _KEYS:
                raise WaiverError(f"{where}: unknown key `{key}`.{did_you_mean(key, _KEYS)}")
        rule = _text(entry, "rule", where) or ""
        if Rule.by_id(rule) is None:
            raise WaiverError(
                f"{where}: `rule` is `{rule}`, which is no rule id.{did_you_mean(rule, rule_ids)} "
                "Rule ids are listed in docs/contracts.md."
            )
        resource = _text(entry, "resource", where) or ""
        column = _text(entry, "column", where, required=False)
        reason = _text(entry, "reason", where) or ""
        if "expires" not in entry:
            raise WaiverError(
                f"{where}: `expires` is missing; every waiver needs an expiry date, so an "
                "accepted break is revisited."
            )
        expires = _date(entry["expires"], where)
        out.append(Waiver(rule, resource, column, reason, expires, where))
    return tuple(out)
