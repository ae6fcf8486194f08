"""`reconcile --shard I/N` as a user runs it (the real click group, in process): a bad shard
is one line and exit 2 before anything runs; a shard's sweep is recorded in the finding
index as that shard's, so N shard lines make one sweep and none speaks for another's tables."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import pytest

from dlt_contract_ops.core.history import Sweep
from dlt_contract_ops.core.shard import Shard
from dlt_contract_ops.history.index import index_file, read_history
from dlt_contract_ops.settings.files import project_context
from tests.projects import Project
from tests.shards.warehouse import CHILD, TABLES


@pytest.mark.parametrize("bad", ["0/3", "4/3", "a/b", "3", "1/0", "2-3"])
def test_a_bad_shard_is_one_line_and_exit_2(wh: Project, bad: str) -> None:
    proc = wh.cli("reconcile", "--all", "--shard", bad)
    assert proc.returncode == 2, proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"Error: shard `{bad}`")
    assert "e.g. `2/3`" in line
    assert proc.stdout == ""
    with project_context(wh.root):
        assert not index_file(wh.root).exists()  # nothing ran


def test_suggest_refuses_a_shard(wh: Project) -> None:
    proc = wh.cli("reconcile", "--all", "--shard", "1/2", "--suggest")
    assert proc.returncode == 2
    assert "--suggest patches every table of a model: drop --shard." in proc.stderr


def _lines(wh: Project) -> list[dict[str, Any]]:
    with project_context(wh.root):
        return [json.loads(x) for x in index_file(wh.root).read_text().splitlines()]


def test_each_shard_records_its_line_and_what_it_covered(wh: Project) -> None:
    count = 3
    found: dict[int, set[str]] = {}
    for i in range(1, count + 1):
        proc = wh.cli("reconcile", "--all", "--shard", f"{i}/{count}", "--format", "json")
        assert proc.returncode == 1, proc.stderr  # `broken` cannot be built: every shard says so
        document = json.loads(proc.stdout)
        found[i] = {f["id"] for r in document["results"] for f in r["findings"]}
    lines = _lines(wh)
    assert [line["shard"] for line in lines] == ["1/3", "2/3", "3/3"]
    assert [set(line["ids"]) for line in lines] == [found[1], found[2], found[3]]
    covered = [(s, t) for line in lines for s, ts in line["covered"].items() for t in ts]
    every = [(s, t) for s, ts in TABLES.items() for t in ts] + [CHILD[:2]]
    assert sorted(covered) == sorted(every)  # each table covered by exactly one shard
    with project_context(wh.root):
        history = read_history(wh.root)
    assert history.sweeps == 1  # three shard lines are one sweep
    assert {i for ids in found.values() for i in ids} == set(history.seen)
    assert all(seen.sweeps == 1 for seen in history.seen.values())


def test_a_shard_line_speaks_only_for_its_tables(wh: Project) -> None:
    wh.cli("reconcile", "--all", "--shard", "1/3")
    wh.cli("reconcile", "--all")
    shard, whole = _lines(wh)
    covered = tuple((s, tuple(t)) for s, t in shard["covered"].items())
    parsed = Sweep(datetime.now(timezone.utc), (), Shard(1, 3), covered)
    assert parsed.covers("shop", "refunds")  # shard 1/3's (`tests/shards/test_shard_cases.py`)
    assert not parsed.covers("shop", "orders")
    assert "shard" not in whole  # a whole sweep covers everything
    assert "covered" not in whole


def test_shard_1_of_1_is_the_whole_sweep(wh: Project) -> None:
    sharded = wh.cli("reconcile", "--all", "--shard", "1/1", "--format", "json")
    whole = wh.cli("reconcile", "--all", "--format", "json")
    assert sharded.returncode == whole.returncode == 1
    ids = [{f["id"] for r in json.loads(p.stdout)["results"] for f in r["findings"]}
           for p in (sharded, whole)]
    assert ids[0] == ids[1]
    assert len(ids[0]) >= 6
    assert all("shard" not in line for line in _lines(wh))
