"""A DuckDB file another process holds for writing: the error says so first (not a
credentials problem), names the file, and the run exits 1."""

from __future__ import annotations

import subprocess
import sys

from tests.integration import shop
from tests.projects import Project


def test_a_file_held_by_a_writer_is_named_as_locked(shop_project: Project) -> None:
    db = shop_project.root / shop.DB_FILE
    holder = subprocess.Popen(
        [sys.executable, "-c",
         f"import duckdb, sys, time; c = duckdb.connect({str(db)!r}); "
         "print('held', flush=True); time.sleep(120)"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        proc = shop_project.cli("reconcile", "-s", "shop", "--dry-run")
    finally:
        holder.kill()
        holder.wait(30)
    assert proc.returncode == 1
    assert "is locked by a writer" in proc.stdout
    assert f"(process {holder.pid})" in proc.stdout
    assert "Check host, port" not in proc.stdout
    # the holder is gone: the same run works again
    again = shop_project.cli("reconcile", "-s", "shop", "--dry-run")
    assert again.returncode == 0, again.stderr
