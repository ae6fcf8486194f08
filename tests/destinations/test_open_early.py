"""A sweep's adapter starts opening its connection before its first query
(`Capabilities.opens_early`, `ClientSession.open_soon`): what the open meets is still the
first query's to say, and an adapter closed while it opens leaves no connection behind. Real
DuckDB files, held and written by other processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest
from dlt.common.schema import Schema

from dlt_contract_ops.destinations.capabilities import Capabilities
from dlt_contract_ops.destinations.connect import open_adapter, resolve_target
from dlt_contract_ops.destinations.protocol import capability_problems
from dlt_contract_ops.errors import DestinationError
from tests.integration import shop
from tests.projects import Project
from tests.warehouses import held_by_a_writer

#: closes right after the open started: each one races the open at another point
ROUNDS = 8


def _adapter(project: Project, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.chdir(project.root)
    target = resolve_target("shop", shop.PIPELINE, "duckdb", shop.DATASET, str(project.root))
    return open_adapter(target, Schema("shop"), connect=True)


def _write(db: Path) -> subprocess.CompletedProcess[str]:
    """Another process opens the file for writing and writes to it."""
    return subprocess.run(
        [sys.executable, "-c", f"import duckdb; duckdb.connect({str(db)!r})"
         ".execute('CREATE TABLE IF NOT EXISTS early_probe (i INTEGER)')"],
        capture_output=True, text=True, check=False,
    )


def test_an_adapter_closed_while_it_opens_leaves_the_file_free(
    shop_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = shop_project.root / shop.DB_FILE
    for _ in range(ROUNDS):
        adapter = _adapter(shop_project, monkeypatch)
        adapter.close()  # the open may be queued, running or done

        written = _write(db)
        assert written.returncode == 0, written.stderr  # no read-only connection is left


def test_the_first_query_says_what_the_early_open_met(
    shop_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = shop_project.root / shop.DB_FILE
    with held_by_a_writer(db):
        adapter = _adapter(shop_project, monkeypatch)  # the open fails on its thread
        try:
            with pytest.raises(DestinationError, match="is locked by a writer"):
                adapter.list_columns()
        finally:
            adapter.close()
    adapter = _adapter(shop_project, monkeypatch)
    try:
        assert adapter.list_columns()  # the holder is gone: the same adapter kind works
    finally:
        adapter.close()


def test_opens_early_promises_open_soon() -> None:
    class Promising:
        name: ClassVar[str] = "fakedb_early"
        capabilities: ClassVar[Capabilities] = Capabilities(
            "duckdb", "read-only by the renderer", opens_early=True)

    assert capability_problems(Promising) == ["`capabilities.opens_early` without `open_soon`"]
