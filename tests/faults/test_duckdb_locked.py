"""A DuckDB file another process holds for writing: the error says so first (not a
credentials problem), names the file, and the run exits 1."""

from __future__ import annotations

from tests.integration import shop
from tests.projects import Project
from tests.warehouses import held_by_a_writer


def test_a_file_held_by_a_writer_is_named_as_locked(shop_project: Project) -> None:
    db = shop_project.root / shop.DB_FILE
    with held_by_a_writer(db) as holder:
        proc = shop_project.cli("reconcile", "-s", "shop", "--dry-run")
    assert proc.returncode == 1
    assert "is locked by a writer" in proc.stdout
    assert f"(process {holder.pid})" in proc.stdout
    assert "Check host, port" not in proc.stdout
    # the holder is gone: the same run works again
    again = shop_project.cli("reconcile", "-s", "shop", "--dry-run")
    assert again.returncode == 0, again.stderr
