"""A killed run's working files are removed by a later run, a live run's are kept: the
profile store's bulk-insert staging files (beside the store) and a remote sweep's local copies
(`dlt-contract-ops-reads-*` in TMPDIR). Real processes make them and die by `os._exit` or
SIGKILL, so no `finally` and no finalizer runs, as when the OOM killer ends a sweep."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dlt_contract_ops.profiles.store import ProfileStore, Scope, TableUpdate
from dlt_contract_ops.statefile import STALE_AFTER

# Makes one working file the way a run does, prints its path, then dies (`exit`) or waits
# for its standard input to close (`live`).
_MAKE = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    kind, end, where = sys.argv[1:4]
    if kind == "staging":
        from dlt_contract_ops.profiles.store import _Staging
        staging = _Staging(Path(where) / "profiles.duckdb").__enter__()
        path = staging._file([{"id": 1}, {"id": 2}])
    else:
        from fsspec.implementations.local import LocalFileSystem
        from dlt_contract_ops.destinations.lake_reads import sweep_reads
        reads = sweep_reads(LocalFileSystem(skip_instance_cache=True))
        with reads.open(str(Path(where) / "data.jsonl"), "rb") as fh:
            fh.read()
        path = reads.storage[-1]
        assert os.listdir(path)  # the copy is there
    print(path, flush=True)
    if end == "exit":
        os._exit(0)
    if end == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    sys.stdin.read()
""")


class _Run:
    """A process that made one working file: `path`; `alive` until `end()`."""

    def __init__(self, kind: str, end: str, where: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _MAKE, kind, end, str(where)], env=env, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        assert line, self.proc.stderr.read() if self.proc.stderr else ""
        self.path = Path(line)
        if end != "live":
            self.proc.wait()

    def end(self) -> None:
        self.proc.communicate("")


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    return {**os.environ, "TMPDIR": str(tmp)}


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_a_killed_runs_staging_files_are_removed_by_the_next_write(
    tmp_path: Path, env: dict[str, str]
) -> None:
    live = _Run("staging", "live", tmp_path, env)
    killed = _Run("staging", "exit", tmp_path, env)
    try:
        unowned = tmp_path / ".staging-k2j4h1.ndjson"  # named before names had an owner
        unowned.write_text("{}\n")
        recent_unowned = tmp_path / ".staging-a8b9c0.ndjson"
        recent_unowned.write_text("{}\n")
        _age(unowned, STALE_AFTER + 60)
        assert killed.path.exists()
        assert live.path.exists()

        ProfileStore(tmp_path / "profiles.duckdb").write(
            Scope("duckdb", "w.duckdb", "shop"), "shop", [TableUpdate("orders", [], total=0)])

        assert not killed.path.exists()
        assert not unowned.exists()
        assert live.path.exists()  # its process still runs
        assert recent_unowned.exists()  # whose it is cannot be told: kept until the bound
        assert sorted(p.name for p in tmp_path.glob(".staging-*")) == sorted(
            [live.path.name, recent_unowned.name])
    finally:
        live.end()


def test_a_killed_sweeps_local_copies_are_removed_by_the_next_sweep(
    tmp_path: Path, env: dict[str, str]
) -> None:
    (tmp_path / "data.jsonl").write_bytes(b'{"id": 1}\n')
    live = _Run("reads", "live", tmp_path, env)
    killed = _Run("reads", "kill", tmp_path, env)  # made its folder beside the live one's
    try:
        assert killed.path.is_dir()
        assert live.path.is_dir()
        assert killed.path.parent == Path(env["TMPDIR"])
        other = Path(env["TMPDIR"]) / "something-else"
        other.mkdir()

        later = _Run("reads", "live", tmp_path, env)  # a later sweep, still running
        left = sorted(p.name for p in Path(env["TMPDIR"]).iterdir())
        later.end()

        assert left == sorted([live.path.name, later.path.name, other.name])
    finally:
        live.end()
    # a sweep that ends as it should leaves nothing
    assert not live.path.exists()
    assert not later.path.exists()


@pytest.mark.parametrize(
    ("owner", "age", "removed"),
    [
        ("this process", STALE_AFTER * 2, False),  # the run's own, however old
        ("a live process", 60.0, False),
        ("a live process", STALE_AFTER + 60, True),  # that old, its id was reused
        ("another host", 60.0, False),  # its process cannot be checked from here
        ("another host", STALE_AFTER + 60, True),
        ("no owner", 60.0, False),
        ("no owner", STALE_AFTER + 60, True),
    ],
)
def test_what_is_stale(tmp_path: Path, owner: str, age: float, removed: bool) -> None:
    from dlt_contract_ops.statefile import owner_tag, remove_stale

    with subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                          stdin=subprocess.PIPE) as other:
        tag = {"this process": owner_tag(), "no owner": "x1y2z3",
               "a live process": owner_tag().replace(str(os.getpid()), str(other.pid), 1),
               "another host": f"{other.pid}.00000000"}[owner]
        path = tmp_path / f".staging-{tag}-abc.ndjson"
        path.write_text("{}\n")
        _age(path, age)
        assert remove_stale(tmp_path, ".staging-") == ([path] if removed else [])
        assert path.exists() is not removed
        other.communicate(b"")
