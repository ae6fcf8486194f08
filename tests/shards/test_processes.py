"""N real processes (`dlt-contract-ops reconcile --all --shard I/N`, started at once) against
one state dir: the state they share stays whole. Each unacknowledged finding is posted to the
loopback webhook once and the acknowledged one never; the source that cannot be built is one
alert; the dedup state holds every alerted finding, settled; the finding index has each
shard's line and every finding; the profile store holds what one whole sweep writes. A second
round at once alerts no finding again.

What only processes show: N interpreters racing for the same lock files, DuckDB files and
line files (`statefile.locked`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb

from dlt_contract_ops.history.index import found_file, index_file
from dlt_contract_ops.settings.files import project_context
from tests.projects import Project
from tests.servers import Receiver

COUNT = 3
SWEEP = ("reconcile", "--all", "--include-removal")


def _at_once(project: Project, count: int) -> list[subprocess.CompletedProcess[str]]:
    """The N shards' processes, all started before any is waited for."""
    procs = [subprocess.Popen(
        [sys.executable, "-m", "dlt_contract_ops.cli", *SWEEP, "--shard", f"{i}/{count}",
         "--format", "json"],
        cwd=project.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i in range(1, count + 1)]
    done = []
    for p in procs:
        out, err = p.communicate()
        done.append(subprocess.CompletedProcess(p.args, p.returncode, out, err))
    return done


def _store_rows(data_dir: Path) -> set[tuple[Any, ...]]:
    """The profile store's loads and column counts, without where the store lives."""
    path = data_dir / "contract_ops" / "profiles.duckdb"
    with duckdb.connect(str(path), read_only=True) as con:
        loads = con.execute("SELECT 'load', dataset, tbl, load_id, source, n_rows, NULL "
                            "FROM loads").fetchall()
        columns = con.execute("SELECT 'column', dataset, tbl, load_id, col, non_null, "
                              "distinct_count FROM columns").fetchall()
    return set(loads) | set(columns)


def _posted(hook: Receiver, kind: str) -> list[dict[str, Any]]:
    return [r.json() for r in hook.requests if r.json()["type"] == kind]


def test_n_processes_at_once_keep_the_shared_state_whole(wh: Project, tmp_path: Path) -> None:
    data_dir = Path(os.environ["DLT_DATA_DIR"])
    # one whole sweep in a state dir of its own: what the profile store should hold
    whole_dir = tmp_path / "whole_data"
    whole = wh.cli_process(*SWEEP, "--format", "json", env={"DLT_DATA_DIR": str(whole_dir)})
    assert whole.returncode == 1, whole.stderr  # `broken` cannot be built
    findings = {f["id"]: f for r in json.loads(whole.stdout)["results"] for f in r["findings"]}
    assert len(findings) == 7  # the warehouse's drift (`tests/shards/warehouse.py`)
    [acked] = [i for i, f in findings.items() if f["table"] == "refunds"]
    wh.cli("reconcile", "-s", "shop", "--dry-run")  # the finding index learns the ids
    assert wh.cli("ack", acked, "--until", "14d", "--reason", "expected", "--by",
                  "alice").returncode == 0

    with Receiver() as hook:
        config = (wh.root / ".dlt" / "config.toml").read_text()
        wh.config(config.replace("alert_sinks = []", 'alert_sinks = ["webhook"]'))
        wh.secrets(f'[contract_ops.alert_sink.webhook]\nurl = "{hook.url}/hook"\n')

        done = _at_once(wh, COUNT)
        assert [p.returncode for p in done] == [1] * COUNT, [p.stderr for p in done]
        shown = Counter(f["id"] for p in done for r in json.loads(p.stdout)["results"]
                        for f in r["findings"])
        assert shown == Counter(list(findings))  # each finding shown by one shard

        # the webhook: each unacknowledged finding once, the acknowledged one never
        posted = Counter(d["finding"]["id"] for d in _posted(hook, "schema_drift"))
        assert posted == Counter(i for i in findings if i != acked)
        assert [d["error"]["source"] for d in _posted(hook, "reconciler_error")] == ["broken"]

        # the dedup state: every alerted finding, delivered to the webhook, nothing pending
        [state_file] = (data_dir / "contract_ops" / "alert_state").glob("*.json")
        alerts = json.loads(state_file.read_text())["alerts"]
        assert set(alerts) == set(posted)
        for entry in alerts.values():
            record = entry["sinks"]["webhook"]
            assert "pending" not in record
            assert "last_alerted" in record

        # the finding index: one line per shard, every finding described
        with project_context(wh.root):
            lines = [json.loads(x) for x in index_file(wh.root).read_text().splitlines()]
            found = {json.loads(x)["id"] for x in found_file(wh.root).read_text().splitlines()}
        assert sorted(line["shard"] for line in lines) == [f"{i}/{COUNT}" for i in
                                                             range(1, COUNT + 1)]
        assert Counter(i for line in lines for i in line["ids"]) == Counter(list(findings))
        assert set(findings) <= found

        # the profile store: what one whole sweep writes, written by three processes
        assert _store_rows(data_dir) == _store_rows(whole_dir)
        assert {row[2] for row in _store_rows(data_dir)} >= {"orders", "users", "events"}

        # a second round at once: nothing alerted again, the broken source once more
        before = len(_posted(hook, "schema_drift"))
        again = _at_once(wh, COUNT)
        assert [p.returncode for p in again] == [1] * COUNT
        assert len(_posted(hook, "schema_drift")) == before
        assert [d["error"]["source"] for d in _posted(hook, "reconciler_error")] == [
            "broken", "broken"]
        with project_context(wh.root):
            assert len(index_file(wh.root).read_text().splitlines()) == 2 * COUNT
