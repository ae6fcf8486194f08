"""docs/contracts.md and examples/contracts stay true to the code."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from dlt_contract_ops.contracts.rules import Rule
from tests.inprocess import run_cli

ROOT = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| `([a-z_.]+)` \| [^|]+ \| (\w+) \| (\w+) \| (yes|no) \|$")


def test_rule_table_in_the_docs_matches_the_code() -> None:
    text = (ROOT / "docs" / "contracts.md").read_text(encoding="utf-8")
    documented = {
        m.group(1): (m.group(2), m.group(3), m.group(4) == "yes")
        for m in (ROW.match(line) for line in text.splitlines())
        if m
    }
    actual = {
        r.rule_id: (r.severity("consumer").value, r.severity("producer").value, r.structural)
        for r in Rule
    }
    assert documented == actual


def test_python_api_snippet_in_the_docs_runs(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "contracts.md").read_text(encoding="utf-8")
    snippet = text.split("## Python API", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    example = ROOT / "examples" / "contracts" / "contracts" / "orders" / "1.0.0"
    for version in ("1.0.0", "1.1.0"):
        shutil.copytree(example, tmp_path / "contracts" / "orders" / version)
    newer = tmp_path / "contracts" / "orders" / "1.1.0" / "order_lines.json"
    newer.write_text(newer.read_text().replace('"version": "1.0.0"', '"version": "1.1.0"'))
    proc = subprocess.run([sys.executable, "-c", snippet], cwd=tmp_path, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("READY none\n")
    assert "<testsuites" in proc.stdout


def test_example_project_matches_its_released_contract(tmp_path: Path) -> None:
    # a copy, so the run leaves no bytecode or state in the repository
    project = tmp_path / "contracts_example"
    shutil.copytree(ROOT / "examples" / "contracts", project,
                    ignore=shutil.ignore_patterns("__pycache__"))
    proc = run_cli(["contract", "check", "-s", "orders", "--transitive"], project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "✓ no contract changes" in proc.stdout
