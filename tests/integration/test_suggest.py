"""`reconcile --suggest [--apply]`: for each finding kind, real dlt loads into DuckDB plant the
drift, the CLI writes the model patch, and the next sweep no longer finds it (and nothing
new); the patched file keeps the user's comments and passes ruff and mypy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.detectors.test_removal_duckdb import _backdate, _load, _sql
from tests.detectors.test_rename import SOURCE as RENAME_SOURCE
from tests.detectors.test_rename import _load as _load_orders
from tests.projects import Project

SOURCE = '''
# the shop's event feed: this comment must survive every patch
from datetime import datetime, timezone
from typing import Optional

import dlt
from pydantic import BaseModel


class Event(BaseModel):
    """One event of the feed."""

    id: int  # the key
    kind: str
    # who did it
    actor_login: Optional[str] = None
    score: Optional[int] = None  # points


@dlt.resource(columns=Event, write_disposition="append", schema_contract={"columns": "evolve"})
def events(start=0, n=20, dark=False, extra=False):
    for i in range(start, start + n):
        row = {"id": i, "kind": "push", "score": i,
               "actor_login": None if dark or i % 5 == 0 else f"user{i}"}
        if extra:
            row.update({"class": "gold", "note": f"n{i}",
                        "seen_at": datetime(2026, 1, 1, tzinfo=timezone.utc)})
        yield row


@dlt.source(name="events_src")
def events_src(start=0, n=20, dark=False, extra=False):
    return events(start, n, dark, extra)
'''

DETECTORS = ("--include-removal",)


@pytest.fixture
def shop(project: Project) -> Project:
    project.module("src_mod", SOURCE)
    project.config("[contract_ops]\nalert_sinks = []\n")
    project.source("events_src", "src_mod:events_src", pipeline_name="events_pipe",
                   dataset_name="events_data")
    return project


def _findings(project: Project) -> list[tuple[str, list[str]]]:
    proc = project.cli("reconcile", "--all", *DETECTORS, "--dry-run", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [r["error"] for r in doc["results"]] == [None] * len(doc["results"])
    return sorted((f["drift_type"], f["columns"]) for r in doc["results"]
                  for f in r["findings"])


def _lint(path: Path) -> None:
    """ruff and mypy (this environment's) pass on the patched file."""
    bin_dir = Path(sys.executable).parent
    ruff = subprocess.run([str(bin_dir / "ruff"), "check", "--isolated",
                           "--select", "E4,E7,E9,F", path.name],
                          cwd=path.parent, capture_output=True, text=True)
    assert ruff.returncode == 0, ruff.stdout
    mypy = subprocess.run([str(bin_dir / "mypy"), "--no-incremental", "--ignore-missing-imports",
                           "--follow-imports=silent", path.name],
                          cwd=path.parent, capture_output=True, text=True)
    assert mypy.returncode == 0, mypy.stdout


def _apply(project: Project, before: list[tuple[str, list[str]]],
           gone: tuple[str, list[str]], *extra: str) -> str:
    """`--suggest --apply`, then: `gone` no longer found, nothing new, the file linted and
    its comments kept. The patched text."""
    assert gone in before
    diff = project.cli("reconcile", "--all", *DETECTORS, "--suggest", *extra)
    assert diff.returncode == 0, diff.stderr
    assert diff.stdout.startswith("--- a/src_mod.py\n+++ b/src_mod.py\n"), diff.stdout
    applied = project.cli("reconcile", "--all", *DETECTORS, "--suggest", "--apply", *extra)
    assert applied.returncode == 0, applied.stderr
    assert "# wrote src_mod.py" in applied.stdout
    after = _findings(project)
    assert gone not in after
    assert set(map(str, after)) <= set(map(str, before))
    path = project.root / "src_mod.py"
    text = path.read_text()
    for comment in ("# the shop's event feed: this comment must survive every patch",
                    "# who did it", "# points", '"""One event of the feed."""'):
        assert comment in text
    _lint(path)
    return text


def test_additive_columns_become_nullable_fields(shop: Project) -> None:
    _load(shop, n=20, extra=True)
    before = _findings(shop)
    text = _apply(shop, before, ("additive", ["class", "note", "seen_at"]))
    assert 'class_: Optional[str] = Field(default=None, alias="class")' in text
    assert "note: Optional[str] = None  # new column, first seen" in text
    assert 'seen_at: Optional[Annotated[datetime, Semantics(timezone="UTC")]] = None' in text
    assert "from pydantic import BaseModel, Field" in text
    assert "from dlt_contract_ops import Semantics" in text


def test_missing_field_removed_or_kept(shop: Project) -> None:
    _load(shop, n=20)
    path = shop.root / "src_mod.py"
    path.write_text(path.read_text().replace(
        "    score: Optional[int] = None  # points\n",
        "    score: Optional[int] = None  # points\n    region: Optional[date] = None\n").replace(
        "from datetime import datetime", "from datetime import date, datetime"))
    before = _findings(shop)
    kept = shop.cli("reconcile", "--all", "--suggest", "--keep")
    assert kept.returncode == 0, kept.stderr
    assert "region: Optional[date] = None  # kept: column `region` not in the table yet" in (
        kept.stdout)
    text = _apply(shop, before, ("missing", ["region"]))
    assert "region" not in text
    # `date` served only the removed field: its import goes too
    assert "from datetime import datetime, timezone\n" in text


def test_type_widened_to_what_the_column_holds(shop: Project) -> None:
    _load(shop, n=20)
    with _sql(shop) as con:
        con.execute('ALTER TABLE events_data.events ALTER COLUMN "score" TYPE VARCHAR')
    before = _findings(shop)
    text = _apply(shop, before, ("type", ["score"]))
    assert "    score: Optional[str] = None  # points\n" in text


def test_dark_column_deprecated_with_its_load(shop: Project) -> None:
    _load(shop, n=20)
    _backdate(shop)
    _load(shop, start=100, n=10, dark=True)
    before = _findings(shop)
    text = _apply(shop, before, ("removal", ["actor_login"]))
    assert "actor_login: Optional[str] = Field(default=None, deprecated=\"went dark in" in text


def test_rename_renames_the_field_and_deprecates_the_old(project: Project) -> None:
    commented = "# the shop's orders\n" + RENAME_SOURCE
    project.module("shop_mod", commented)
    project.config("[contract_ops]\nalert_sinks = []\n")
    project.source("shop", "shop_mod:shop", pipeline_name="shop_pipe", dataset_name="shop_data")
    _load_orders(project, 3, start=0)
    _load_orders(project, 0, start=100, field="sale_date")

    def found() -> list[str]:
        doc = json.loads(project.cli("reconcile", "--all", "--include-removal", "--dry-run",
                                     "--format", "json").stdout)
        return [f["drift_type"] for r in doc["results"] for f in r["findings"]]

    assert found() == ["rename"]
    applied = project.cli("reconcile", "--all", "--include-removal", "--suggest", "--apply")
    assert applied.returncode == 0, applied.stderr
    assert found() == []
    path = project.root / "shop_mod.py"
    text = path.read_text()
    assert "sale_date: Optional[date] = None  # renamed from `order_date`" in text
    assert 'order_date: Optional[date] = Field(default=None, deprecated="renamed to' in text
    assert text.startswith("# the shop's orders\n")
    _lint(path)


def test_markdown_pull_request_text(shop: Project) -> None:
    _load(shop, n=20, extra=True)
    proc = shop.cli("reconcile", "--all", "--suggest", "--format", "markdown")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# Model changes for 1 drift finding(s)\n")
    assert "## `events`: additive (`class`, `note`, `seen_at`)" in proc.stdout
    assert '- samples of `note`: "n' in proc.stdout
    assert "- first seen " in proc.stdout
    assert "```diff\n--- a/src_mod.py" in proc.stdout


@pytest.mark.parametrize(("args", "message"), [
    (("--apply",), "--apply and --keep go with --suggest"),
    (("--suggest", "--format", "json"), "--suggest prints a diff"),
    (("--format", "markdown"), "--suggest prints a diff"),
])
def test_bad_flag_combinations(shop: Project, args: tuple[str, ...], message: str) -> None:
    proc = shop.cli("reconcile", "--all", *args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
