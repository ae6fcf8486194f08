"""`reconcile --output FILE`: every format goes to the file instead of stdout, and the exit
code is the one the run has without it."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from dlt_contract_ops.output import FORMATS
from tests.formats.conftest import declare_broken
from tests.projects import Project

#: how each document is recognised in the file
LOOKS_RIGHT = {
    "text": lambda doc: doc.startswith("Dry-run: alert emission suppressed"),
    "json": lambda doc: json.loads(doc)["format_version"] == 1,
    "junit": lambda doc: ET.fromstring(doc).tag == "testsuites",
    "github": lambda doc: doc.startswith("::warning "),
    "sarif": lambda doc: json.loads(doc)["version"] == "2.1.0",
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_output_file_instead_of_stdout(drifted: Project, fmt: str) -> None:
    out = drifted.root / f"report.{fmt}"
    declare_broken(drifted)
    proc = drifted.cli("reconcile", "-s", "shop", "-s", "nope", "--fail-on-drift",
                       "--dry-run", "--format", fmt, "--output", str(out))
    assert proc.returncode == 1, proc.stderr  # errors win over drift, as on stdout
    assert proc.stdout == ""
    document = out.read_text(encoding="utf-8")
    assert LOOKS_RIGHT[fmt](document), document[:300]


@pytest.mark.parametrize(("args", "code"), [((), 0), (("--fail-on-drift",), 3)])
def test_exit_codes_with_output_are_unchanged(
    drifted: Project, args: tuple[str, ...], code: int
) -> None:
    out = drifted.root / "drift.sarif"
    proc = drifted.cli("reconcile", "-s", "shop", *args, "--dry-run", "--format", "sarif",
                       "--output", str(out))
    assert proc.returncode == code, proc.stderr
    assert LOOKS_RIGHT["sarif"](out.read_text(encoding="utf-8"))


def test_an_unwritable_output_is_a_usage_error(drifted: Project) -> None:
    target = drifted.root / "no" / "such" / "dir" / "drift.json"
    proc = drifted.cli("reconcile", "-s", "shop", "--dry-run", "--format", "json",
                       "--output", str(target))
    assert proc.returncode == 2
    assert f"cannot write `{target}`" in proc.stderr
    assert proc.stdout == ""
