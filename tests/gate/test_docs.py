"""docs/gate.md stays true to the code: the policy table, the outcomes, the signature, the
exit codes, and the TOML it shows."""

from __future__ import annotations

import inspect
import re
import sys
from dataclasses import fields
from pathlib import Path

from dlt_contract_ops.commands.common import EXIT_DRIFT, EXIT_OK, EXIT_SOURCE_ERROR, EXIT_USAGE
from dlt_contract_ops.core.ingest import GatePolicy
from dlt_contract_ops.ingest.run import gated_run
from dlt_contract_ops.settings.specs import GateSpec
from tests.gate.seed import REASONS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "gate.md").read_text(encoding="utf-8")
ROW = re.compile(r"^\| `(\w+)` \| `?([^|`]+)`? \|")
#: the keys of `[contract_ops.gate]`
KEYS = {f.name for f in fields(GateSpec) if not f.name.startswith("_")}


def _section(heading: str) -> str:
    return DOC.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def test_the_policy_table_lists_every_key_with_its_default() -> None:
    rows = {m.group(1): m.group(2).strip()
            for line in _section("The policy").splitlines() if (m := ROW.match(line))}
    assert set(rows) == KEYS
    defaults = GatePolicy()
    for field in fields(GatePolicy):
        value = getattr(defaults, field.name)
        shown = "[]" if value == frozenset() else str(value).lower()
        assert rows[field.name] == shown, field.name


def test_the_outcomes_table_shows_the_reasons_the_gate_gives() -> None:
    table = _section("The five outcomes")
    for reason in REASONS.values():
        assert f"`{reason}`" in table
    assert "`added: orders.currency (approved)`" in table


def test_the_signature_is_the_function_s() -> None:
    shown = " ".join(DOC.split("`gated_run(pipeline, data, *, ", 1)[1].split(")`", 1)[0].split())
    params = list(inspect.signature(gated_run).parameters.values())[2:]
    rendered = ", ".join(
        f"**{p.name}" if p.kind is p.VAR_KEYWORD else f"{p.name}={p.default!r}" for p in params)
    assert shown == rendered


def test_the_exit_codes() -> None:
    codes = {int(m.group(1)) for m in re.finditer(r"^\| (\d) \|", _section("`gate check`"),
                                                  flags=re.M)}
    assert codes == {EXIT_OK, EXIT_DRIFT, EXIT_SOURCE_ERROR, EXIT_USAGE}


def test_the_toml_parses() -> None:
    [block] = re.findall(r"```toml\n(.*?)```", DOC, flags=re.S)
    config = tomllib.loads(block)
    assert set(config["contract_ops"]["gate"]) <= KEYS
    assert set(config["sources"]["eu_shop"]["contract_ops"]["gate"]) <= KEYS
