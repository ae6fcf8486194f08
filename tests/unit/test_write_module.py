"""A project's Python file written by `reconcile --suggest --apply` or `models infer` is what
the next import reads, even when the edit keeps the file's size within the second of its last
write (Python then trusts the old `__pycache__` copy), and it keeps its permissions."""

from __future__ import annotations

import importlib
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from dlt_contract_ops.sources.project_imports import write_module


@pytest.fixture
def on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    # bytecode written whatever the shell says (`PYTHONDONTWRITEBYTECODE`): `make test` writes it
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    sys.path.insert(0, str(tmp_path))
    yield tmp_path
    sys.path.remove(str(tmp_path))
    sys.modules.pop("same_size_mod", None)


def _import() -> object:
    sys.modules.pop("same_size_mod", None)
    importlib.invalidate_caches()
    return importlib.import_module("same_size_mod")


@pytest.mark.parametrize("write", ["plain", "write_module"])
def test_a_same_size_edit_in_the_same_second_is_imported(on_path: Path, write: str) -> None:
    path = on_path / "same_size_mod.py"
    path.write_text("score: int = 1\n", encoding="utf-8")
    os.chmod(path, 0o644)
    old = os.stat(path)
    assert _import().__annotations__ == {"score": int}  # its `__pycache__` copy is written
    new = "score: str = 1\n"  # the size of the old text
    if write == "plain":
        path.write_text(new, encoding="utf-8")
    else:
        write_module(path, new)
    os.utime(path, ns=(old.st_atime_ns, old.st_mtime_ns))  # within the same second
    seen = _import().__annotations__
    if write == "plain":  # what Python does on its own: the stale copy (why write_module)
        assert seen == {"score": int}
    else:
        assert seen == {"score": str}
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
