"""`reconcile --suggest --format markdown`: the model patches as a pull-request text: what
changed in the data, with its evidence (samples, first seen, coverage), then the diff."""

from __future__ import annotations

import json

from dlt_contract_ops.model.findings import DriftFinding
from dlt_contract_ops.suggest.found import Suggestions, diffs

_WHAT = {
    "additive": "new column(s) in the table: declared as nullable fields",
    "missing": "declared field(s) with no column in the table",
    "type": "column(s) whose type can no longer hold the declared one: fields widened",
    "rename": "a column renamed: field renamed, the old name kept as deprecated",
    "removal": "column(s) that went dark: fields made nullable and deprecated",
    "contract": "values outside a declared code set: added to it",
    "distribution": "new categories: added to the declared code set",
}


def _evidence(f: DriftFinding) -> list[str]:
    lines = []
    if f.first_seen:
        lines.append(f"first seen {f.first_seen}")
    for column, values in f.samples.items():
        shown = ", ".join(json.dumps(v, default=str) for v in values[:3])
        lines.append(f"samples of `{column}`: {shown}")
    for column, cov in (f.coverage or {}).items():
        base = "n/a" if cov.baseline is None else f"{cov.baseline:.0%}"
        recent = "n/a" if cov.recent is None else f"{cov.recent:.0%}"
        lines.append(f"coverage of `{column}`: {base} → {recent}")
    for column, typ in f.column_types.items():
        expected = (f.expected_types or {}).get(column)
        if f.drift_type == "type" and expected:
            lines.append(f"`{column}` is {typ} in the table, declared {expected}")
    return lines


def markdown(found: Suggestions, project_dir: str) -> str:
    """The pull-request text: a title, one section per finding patched, the diff."""
    patched = [(f, facts) for mf in found.files.values() if mf.path in found.patched
               for f, facts in mf.edits]
    out = [f"# Model changes for {len(patched)} drift finding(s)", ""]
    for f, facts in patched:
        out.append(f"## `{f.table}`: {f.drift_type} ({', '.join(f'`{c}`' for c in f.columns)})")
        out.append("")
        out.append(f"{_WHAT.get(f.drift_type, f.drift_type)}; model `{facts.qualname}`.")
        out.append("")
        out += [f"- {line}" for line in _evidence(f)]
        out.append("")
    if found.notes or found.refused:
        out += ["## Not patched", ""] + [f"- {n}" for n in (*found.refused, *found.notes)]
        out.append("")
    out += ["## Diff", "", "```diff", diffs(found, project_dir).rstrip("\n"), "```", ""]
    return "\n".join(out)
