"""`reconcile --suggest [--apply]`: for each finding kind, real dlt loads into DuckDB plant the
drift, the CLI writes the model patch, and the next sweep no longer finds it (and nothing
new); the patched file keeps the user's comments and passes ruff and mypy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.destinations.servers import Backend
from tests.detectors.test_nested_tables import (
    Loaded,
    loaded,  # noqa: F401  # the loaded-project fixture
)
from tests.detectors.test_removal_duckdb import _backdate, _load, _sql
from tests.detectors.test_rename import SOURCE as RENAME_SOURCE
from tests.detectors.test_rename import _load as _load_orders
from tests.detectors.test_type_narrowing import altered  # noqa: F401  # narrowed columns
from tests.profiles.conftest import SOURCE as PROFILED_SOURCE
from tests.profiles.conftest import load as load_profiled
from tests.projects import Project, checker_env

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
    mypy = subprocess.run([str(bin_dir / "mypy"), "--ignore-missing-imports",
                           "--follow-imports=silent", path.name],
                          cwd=path.parent, capture_output=True, text=True, env=checker_env())
    assert mypy.returncode == 0, mypy.stdout


def _apply(project: Project, before: list[tuple[str, list[str]]],
           gone: tuple[str, list[str]], *extra: str) -> str:
    """`--suggest --apply`, then: `gone` no longer found, nothing new, the file linted and
    its comments kept. The patched text."""
    assert gone in before
    diff = project.cli("reconcile", "--all", *DETECTORS, "--suggest", *extra)
    assert diff.returncode == 0, diff.stderr
    assert diff.stdout.startswith("--- a/src_mod.py\n+++ b/src_mod.py\n"), diff.stdout
    # the diff is a patch `git apply` takes as it is
    check = subprocess.run(["git", "apply", "--check", "-"], input=diff.stdout,
                           cwd=project.root, capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    applied = project.cli("reconcile", "--all", *DETECTORS, "--suggest", "--apply", *extra)
    assert applied.returncode == 0, applied.stderr
    assert "note: wrote src_mod.py" in applied.stderr
    after = _findings(project)
    assert gone not in after
    # again, the source's columns read back from the source cache this time
    assert _findings(project) == after
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


@pytest.mark.parametrize(("db_type", "field"), [
    ("VARCHAR", "score: Optional[str] = None  # points"),
    # a decimal too small for every int: the field declares the size the column holds
    ("DECIMAL(4,1)", "score: Optional[Decimal] = Field(default=None, max_digits=4, "
                     "decimal_places=1)  # points"),
])
def test_type_widened_to_what_the_column_holds(shop: Project, db_type: str, field: str) -> None:
    _load(shop, n=20)
    with _sql(shop) as con:
        con.execute(f'ALTER TABLE events_data.events ALTER COLUMN "score" TYPE {db_type}')
    before = _findings(shop)
    text = _apply(shop, before, ("type", ["score"]))
    assert f"    {field}\n" in text


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


def test_a_new_category_joins_the_declared_code_set(project: Project) -> None:
    # `other` is not declared: the newest load's 4% of it is a new category
    project.module("shop_mod", PROFILED_SOURCE.replace(
        'status: Literal["new", "paid", "shipped", "other"]',
        'status: Annotated[str, Semantics(categories=("new", "paid", "shipped"))]').replace(
        "from typing import Literal, Optional",
        "from typing import Annotated, Optional\n\nfrom dlt_contract_ops import Semantics"))
    project.config("[contract_ops]\nalert_sinks = []\n")
    project.source("shop", "shop_mod:shop", pipeline_name="shop_pipe", dataset_name="shop_data")
    load_profiled(project, *[{"batch": b} for b in range(6)], {"batch": 6, "drift": ["other"]})

    def metrics() -> list[tuple[str, str, str | None]]:
        proc = project.cli("reconcile", "--all", "--include-distribution", "--dry-run",
                           "--format", "json")
        return [(m["column"], m["metric"], m["category"]) for r in json.loads(proc.stdout)[
            "results"] for f in r["findings"] for m in f.get("metrics", [])]

    assert ("status", "new_category", "other") in metrics()
    applied = project.cli("reconcile", "--all", "--include-distribution", "--suggest", "--apply")
    assert applied.returncode == 0, applied.stderr
    path = project.root / "shop_mod.py"
    assert 'Semantics(categories=("new", "paid", "shipped", "other"))' in path.read_text()
    after = metrics()
    assert ("status", "new_category", "other") not in after
    # declared now, the value's share still moved from none to 4% against the baseline: the
    # finding stays as a share shift until the baseline holds the value
    assert ("status", "category_share", "other") in after
    _lint(path)


def test_apply_refuses_a_model_outside_the_project(project: Project, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "shared_models.py").write_text(
        "from typing import Optional\n\nfrom pydantic import BaseModel\n\n\n"
        "class Event(BaseModel):\n    id: int\n    kind: str\n"
        "    actor_login: Optional[str] = None\n    score: Optional[int] = None\n")
    project.module("src_mod", SOURCE.replace("\nclass Event(BaseModel):", (
        f"\nimport sys\nsys.path.insert(0, {str(elsewhere)!r})\n"
        "from shared_models import Event\n\n\nclass Unused(BaseModel):")))
    project.config("[contract_ops]\nalert_sinks = []\n")
    project.source("events_src", "src_mod:events_src", pipeline_name="events_pipe",
                   dataset_name="events_data")
    _load(project, n=20, extra=True)
    before = (elsewhere / "shared_models.py").read_text()
    shown = project.cli("reconcile", "--all", "--suggest")
    assert shown.returncode == 0, shown.stderr
    assert "lies outside the project" in shown.stderr
    refused = project.cli("reconcile", "--all", "--suggest", "--apply")
    assert refused.returncode == 2
    [line] = refused.stderr.strip().splitlines()
    assert "shared_models.py" in line
    assert "outside the project" in line
    assert (elsewhere / "shared_models.py").read_text() == before


B_MOD = """
# another source over the same pipeline: while the sweep builds it, another writer edits
# the first source's model file (when the test says so)
from pathlib import Path

from src_mod import events_src

if Path("edit_now").exists():
    with open(Path(__file__).with_name("src_mod.py"), "a") as out:
        out.write("# edited meanwhile\\n")
"""


def test_apply_refuses_a_file_changed_since_the_sweep(shop: Project) -> None:
    shop.module("b_mod", B_MOD)
    shop.source("z_src", "b_mod:events_src", pipeline_name="events_pipe",
                dataset_name="events_data")
    _load(shop, n=20, extra=True)
    # both sources find the same columns of the same model: one edit, not two
    shown = shop.cli("reconcile", "--all", "--suggest")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("+    note: Optional[str] = None") == 1
    (shop.root / "edit_now").touch()
    shop.module("b_mod", B_MOD + "# changed: built afresh\n")
    refused = shop.cli("reconcile", "--all", "--suggest", "--apply")
    assert refused.returncode == 2, (refused.stdout, (shop.root / "src_mod.py").read_text())
    [line] = refused.stderr.strip().splitlines()
    assert "src_mod.py` changed since the sweep read it: nothing written" in line
    text = (shop.root / "src_mod.py").read_text()
    assert "note:" not in text, text
    assert text.endswith("# edited meanwhile\n")


def test_a_child_table_s_column_joins_the_item_model(loaded: Loaded) -> None:  # noqa: F811
    loaded.load({"n": 10}, {"start": 100, "n": 5, "priority": True})
    [finding] = loaded.sweep("additive")["additive"].findings
    assert (finding.table, finding.columns) == ("users__labels", ["priority"])
    applied = loaded.project.cli("reconcile", "--all", "--suggest", "--apply")
    assert applied.returncode == 0, applied.stderr
    path = loaded.project.root / "people_mod.py"
    text = path.read_text()
    assert "    color: Optional[str] = None\n    priority: Optional[int] = None  # new" in text
    after = loaded.sweep("additive", "missing", "type")
    assert [f for r in after.values() for f in r.findings] == []
    _lint(path)


def test_a_column_made_outside_dlt_is_a_note(shop: Project) -> None:
    # columns added behind dlt's back: `ip-address` is no name snake_case gives a field
    _load(shop, n=20)
    with _sql(shop) as con:
        con.execute('ALTER TABLE events_data.events ADD COLUMN "ip-address" VARCHAR')
        con.execute("ALTER TABLE events_data.events ADD COLUMN payload_size BIGINT")
    assert _findings(shop) == [("additive", ["ip-address", "payload_size"])]
    applied = shop.cli("reconcile", "--all", "--suggest", "--apply")
    assert applied.returncode == 0, applied.stderr
    assert ("column `ip-address` is not a name dlt's naming gives a field (it gives "
            "`ip_address`)") in applied.stderr
    assert "    payload_size: Optional[int] = None  # new column" in (
        shop.root / "src_mod.py").read_text()
    assert _findings(shop) == [("additive", ["ip-address"])]


#: per backend, the narrowed columns no Python type fits (a 32-bit integer or float)
UNFIT = {"duckdb": ["fee", "units"], "postgres": ["fee"], "mariadb": ["fee"]}


def test_narrowed_columns_on_each_destination(
    altered: tuple[Project, Backend],  # noqa: F811
) -> None:
    project, backend = altered
    applied = project.cli("reconcile", "-s", "narrow", "--suggest", "--apply")
    assert applied.returncode == 0, applied.stderr
    for column in UNFIT[backend.kind]:
        assert f"no Python type declares what `{column}`" in applied.stderr
    after = project.cli("reconcile", "-s", "narrow", "--dry-run", "--format", "json")
    found = [(f["drift_type"], f["columns"]) for r in json.loads(after.stdout)["results"]
             for f in r["findings"]]
    # every other narrowed column's field now declares what the column holds
    assert found == [("type", UNFIT[backend.kind])], (project.root / "types_src.py").read_text()
    _lint(project.root / "types_src.py")
