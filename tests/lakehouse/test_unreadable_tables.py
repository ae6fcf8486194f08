"""A lake table whose files cannot be read (a JSONL file cut short or ending in garbage, a
Delta log with a gap or naming a deleted data file, an Iceberg table without its metadata)
is an error for that table alone: it is there, so never a `missing` finding, never paged,
never in the finding index; the other table is checked and alerted as usual, and the run
exits 1. `profile` refuses a table it could read only in part, naming the table and the
file (exit 1), rather than show the loads it could read as the table's history."""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from dlt_contract_ops.history.index import read_history
from tests.lakehouse import lake, sweeps
from tests.projects import Project
from tests.servers import Receiver


def _jsonl_lines(path: Path, edit: Callable[[bytes], bytes]) -> None:
    """Rewrite a JSONL file dlt wrote (gzip or plain) with `edit` applied to its text."""
    gz = path.suffix == ".gz"
    text = gzip.decompress(path.read_bytes()) if gz else path.read_bytes()
    changed = edit(text)
    path.write_bytes(gzip.compress(changed) if gz else changed)


def _last_line_cut(folder: Path) -> str:
    newest = sorted(p for p in folder.iterdir() if p.is_file())[-1]
    # the last line cut off after its first 9 characters, as a write that broke off
    _jsonl_lines(newest, lambda t: t[: t.rstrip(b"\n").rfind(b"\n") + 1 + 9])
    return str(newest)


def _garbage_last_line(folder: Path) -> str:
    newest = sorted(p for p in folder.iterdir() if p.is_file())[-1]
    _jsonl_lines(newest, lambda t: t + b"\x00\x17 not json at all\n")
    return str(newest)


def _delta_log_gap(folder: Path) -> str:
    (folder / "_delta_log" / "00000000000000000000.json").unlink()  # 1 is there: a gap
    return str(folder)


def _delta_data_file_gone(folder: Path) -> str:
    """The data file the newest log entry adds: deleted (the log still names it)."""
    entry = (folder / "_delta_log" / "00000000000000000001.json").read_text()
    [added] = [a["add"]["path"] for a in map(json.loads, entry.splitlines()) if "add" in a]
    gone = folder / added
    gone.unlink()
    return str(gone)


def _iceberg_metadata_gone(folder: Path) -> str:
    shutil.rmtree(folder / "metadata")
    return str(folder)


#: damage -> (loader file format, table format, what it does to `events`' folder, returning
#: the path the error must name)
DAMAGES: dict[str, tuple[str, str | None, Callable[[Path], str]]] = {
    "jsonl-last-line-cut-short": ("jsonl", None, _last_line_cut),
    "jsonl-garbage-last-line": ("jsonl", None, _garbage_last_line),
    "delta-log-gap": ("parquet", "delta", _delta_log_gap),
    "delta-data-file-deleted": ("parquet", "delta", _delta_data_file_gone),
    "iceberg-metadata-deleted": ("parquet", "iceberg", _iceberg_metadata_gone),
}


@pytest.fixture(scope="module")
def iceberg_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("iceberg-home")


def _damaged(project: Project, tmp_path: Path, iceberg_home: Path, damage: str,
             sinks: tuple[str, ...] = ()) -> str:
    """The telemetry lake loaded, then `damage` done to `events`: the path it names."""
    file_format, table_format, do = DAMAGES[damage]
    bucket = (sweeps.same_path_bucket(iceberg_home) if table_format == "iceberg"
              else tmp_path / "bucket")
    lake.setup(project, bucket, file_format, table_format=table_format, shared_by=__name__,
               sinks=sinks)
    return do(bucket / "lake" / "events")


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_an_unreadable_table_is_an_error_not_a_missing_table(
    project: Project, tmp_path: Path, iceberg_home: Path, damage: str
) -> None:
    with Receiver() as hook:
        project.secrets(f'[contract_ops.alert_sink.webhook]\nurl = "{hook.url}"\n')
        named = _damaged(project, tmp_path, iceberg_home, damage, sinks=("webhook",))

        code, doc, stderr = lake.reconcile_json(project, "-s", "telemetry")

        assert code == 1, stderr
        errors = [r["error"] for r in doc["results"] if r["error"]]
        assert len(errors) == 1, errors
        assert "table `events`" in errors[0], errors
        assert named in errors[0], errors
        # `events` is there, unreadable: no finding about it, no note that it is gone
        found = lake.by_kind(doc)
        assert sorted(found) == [("additive", "readings")], sorted(found)
        assert found[("additive", "readings")]["columns"] == ["unit"]  # still checked
        notes = [n for r in doc["results"] for n in r["notes"]]
        assert not any("no longer exists" in n for n in notes), notes
        # paged: the other table's drift, and the error (as a failed query is); nothing
        # about `events` as drift
        sent = [r.json() for r in hook.requests]
        drift = [s["finding"] for s in sent if s["type"] == "schema_drift"]
        assert [(f["drift_type"], f["table"]) for f in drift] == [("additive", "readings")]
        [error] = [s["error"] for s in sent if s["type"] == "reconciler_error"]
        assert "table `events`" in error["message"]
        assert named in error["message"]
    # the finding index holds this sweep's findings: the other table's only
    assert set(read_history(project.root).seen) == {found[("additive", "readings")]["id"]}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_profile_of_an_unreadable_table_is_an_error_naming_it(
    project: Project, tmp_path: Path, iceberg_home: Path, damage: str
) -> None:
    named = _damaged(project, tmp_path, iceberg_home, damage)

    for args in ((), ("--table", "events")):
        proc = project.cli("profile", "-s", "telemetry", *args)
        assert proc.returncode == 1, (args, proc.stdout, proc.stderr)
        assert proc.stdout == ""
        [line] = proc.stderr.splitlines()[-1:]
        assert line.startswith("Error: "), proc.stderr
        assert "table `events`" in line, line
        assert named in line, line

    # the other table is profiled as usual
    proc = project.cli("profile", "-s", "telemetry", "--table", "readings", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["tables"]["readings"]
    assert len({r["load_id"] for r in rows}) == 2


def test_profile_of_a_table_with_a_truncated_parquet_file(project: Project,
                                                         tmp_path: Path) -> None:
    """Three loads, the second's file cut in half: not a history of two loads, exit 0, but
    an error naming the table and the file."""
    bucket = tmp_path / "bucket"
    sweeps.setup(project, bucket)
    sweeps.steady(project, bucket, sweeps.STEADY[:3])
    files = sorted((bucket / sweeps.DATASET / "orders").glob("*.parquet"))
    assert len(files) == 3
    data = files[1].read_bytes()
    files[1].write_bytes(data[: len(data) // 2])

    for args in ((), ("--table", "orders")):
        proc = project.cli("profile", "-s", "shop", *args)
        assert proc.returncode == 1, (args, proc.stdout, proc.stderr)
        assert proc.stdout == ""
        line = proc.stderr.splitlines()[-1]
        assert "table `orders`" in line, line
        assert str(files[1]) in line, line
