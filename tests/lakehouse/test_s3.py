"""An S3 bucket served on loopback by moto: dlt loads Parquet files and Delta tables through its
own `s3://` credentials and `endpoint_url`, and `reconcile` reads them through dlt's fsspec
client registered on DuckDB. Credentials that do not reach the bucket are one error naming the
bucket, and the other sources still run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.lakehouse import lake, sweeps
from tests.projects import Project
from tests.servers import S3Server


def _objects(server: S3Server, url: str) -> dict[str, str]:
    """Every object of the bucket with its ETag."""
    bucket = url.removeprefix("s3://")
    pages = server.client().get_paginator("list_objects_v2").paginate(Bucket=bucket)
    return {o["Key"]: o["ETag"] for page in pages for o in page.get("Contents", [])}


@pytest.mark.parametrize("table_format", [None, "delta", "iceberg"])
def test_drift_in_an_s3_bucket(project: Project, s3_server: S3Server, s3_bucket: str,
                               table_format: str | None) -> None:
    project.secrets(s3_server.secrets())
    lake.setup(project, s3_bucket, "parquet", table_format=table_format)
    before = _objects(s3_server, s3_bucket)
    assert any(k.startswith("lake/events/") for k in before)  # dlt really wrote to S3

    _, found = lake.planted_drift(project)
    assert found[("additive", "events")]["column_types"] == {"payload_size": "BIGINT"}
    assert len(found[("additive", "events")]["samples"]["payload_size"]) == 5
    assert found[("removal", "events")]["coverage"]["actor_login"] == {
        "baseline": 0.8, "recent": 0.0}
    assert f"{s3_bucket}/lake/events" in found[("removal", "events")]["reproduce"]
    assert _objects(s3_server, s3_bucket) == before  # nothing written, renamed or removed


def test_credentials_that_do_not_reach_the_bucket(project: Project, s3_server: S3Server,
                                                  s3_bucket: str, tmp_path: Path) -> None:
    """A second pipeline's bucket refuses its key: one error naming that bucket, exit 1; the
    local lake's source is checked as usual."""
    lake.setup(project, tmp_path / "local", "parquet", shared_by=__name__)
    project.source("remote", "telemetry_src:telemetry", pipeline_name="remote_lake",
                   destination="filesystem", dataset_name="lake")
    project.config(f'[remote_lake.destination.filesystem]\nbucket_url = "{s3_bucket}"\n')
    project.secrets(s3_server.secrets("remote_lake.destination.filesystem",
                                      key="AKIANOTAUSER"))

    code, doc, stderr = lake.reconcile_json(project, "--all", "--dry-run")

    assert code == 1, stderr
    errors = {r["source"]: r["error"] for r in doc["results"] if r["error"]}
    assert list(errors) == ["remote"], errors
    assert f"`{s3_bucket}`" in errors["remote"]
    assert "Access Key Id you provided does not exist" in errors["remote"]  # moto's words
    assert "credentials" in errors["remote"]
    assert ".." not in errors["remote"]
    local = [r for r in doc["results"] if r["source"] == "telemetry"]
    assert {f["table"] for r in local for f in r["findings"]} == {"events", "readings"}


@pytest.mark.parametrize("file_format", ["parquet", "jsonl", "iceberg"])
def test_a_repeat_sweep_in_an_s3_bucket_reads_only_the_new_loads_files(
    project: Project, s3_server: S3Server, s3_bucket: str, stores: list[Path],
    monkeypatch: pytest.MonkeyPatch, file_format: str,
) -> None:
    """The shop's backdated loads in the loopback bucket (Parquet and JSONL files built
    locally and uploaded, an Iceberg table loaded there with backdated load ids): a repeat
    sweep after one more real load into the bucket profiles its file alone (a JSONL file of
    it lacks `note`, NULL in every row; an Iceberg table's file is picked by its manifest
    bounds), and finds what a fresh sweep of the bucket finds."""
    project.secrets(s3_server.secrets())
    sweeps.setup(project, s3_bucket)
    fs = s3_server.filesystem()
    iceberg = file_format == "iceberg"
    opened = {"table_format": "iceberg"} if iceberg else {}
    written = "parquet" if iceberg else file_format
    properties = {"s3.endpoint": s3_server.endpoint, "s3.access-key-id": s3_server.key,
                  "s3.secret-access-key": s3_server.secret, "s3.region": "us-east-1"}

    def files() -> list[str]:
        if iceberg:
            return sweeps.open_files(s3_bucket, "iceberg", fs=fs, properties=properties)
        return sweeps.data_files(s3_bucket, fs=fs)

    if iceberg:  # its metadata names the bucket's paths: loaded there, already backdated
        sweeps.load(project, *[{**b, **opened} for b in sweeps.STEADY], file_format=written,
                    backdated=20)
    else:  # loaded and backdated locally (or copied), then uploaded
        sweeps.steady_in_s3(project, s3_server, s3_bucket, sweeps.STEADY,
                            file_format=file_format)
    first, read = sweeps.observed(project)
    assert first == {}
    steady = files()
    assert len(steady) == 6
    assert read == steady

    sweeps.load(project, {**sweeps.DRIFTED, **opened}, file_format=written)
    [new] = sorted(set(files()) - set(steady))
    repeat, read = sweeps.observed(project)
    if file_format == "jsonl":  # the table's row count reads every JSONL file (no footers)
        assert read == sorted([*steady, new])
    else:
        assert read == [new]  # the drifted load's file, not the six before it
    assert sorted(repeat) == [("distribution", "orders"), ("removal", "orders")]

    sweeps.fresh(stores, monkeypatch)  # the same bucket, swept from scratch
    full, read = sweeps.observed(project)
    assert read == sorted([*steady, new])
    assert repeat == full


@pytest.mark.parametrize("file_format", ["jsonl", "parquet"])
def test_a_sweep_answers_file_sizes_from_its_listing(
    project: Project, s3_server: S3Server, s3_bucket: str, file_format: str,
) -> None:
    """DuckDB asks each file's size and time many times while it reads it; a sweep answers
    them from the table folder's listing (dlt's `read_only` client), not with a HEAD request
    each (34 a JSONL file before)."""
    project.secrets(s3_server.secrets())
    sweeps.setup(project, s3_bucket)
    # the repeat-sweep test's loads (shared): six files
    sweeps.steady_in_s3(project, s3_server, s3_bucket, sweeps.STEADY, file_format=file_format)
    heads, gets = (s3_server.requests(m, s3_bucket) for m in ("HEAD", "GET"))

    code, doc, stderr = sweeps.sweep(project)

    assert code == 0, stderr
    assert {r["error"] for r in doc["results"]} == {None}
    assert s3_server.requests("GET", s3_bucket) > gets  # the files were read
    assert s3_server.requests("HEAD", s3_bucket) == heads


@pytest.mark.parametrize("file_format", ["jsonl", "parquet"])
def test_a_sweep_fetches_each_small_file_once(
    project: Project, s3_server: S3Server, s3_bucket: str, file_format: str,
) -> None:
    """A sweep opens each data file many times (its footer, the view, every query); the
    first open fetches it and the others read that copy: one GET a file a sweep (14 a
    Parquet file before), and the next sweep fetches it again (a copy lives for one sweep)."""
    project.secrets(s3_server.secrets())
    sweeps.setup(project, s3_bucket)
    sweeps.steady_in_s3(project, s3_server, s3_bucket, sweeps.STEADY, file_format=file_format)
    prefix = s3_bucket + "/"
    data = [f.removeprefix(prefix) for f in sweeps.data_files(s3_bucket, fs=s3_server.filesystem())]
    assert len(data) == 6
    for sweep_number in (1, 2):
        before = s3_server.requests_by_object("GET", s3_bucket)

        code, doc, stderr = sweeps.sweep(project)

        assert code == 0, stderr
        assert {r["error"] for r in doc["results"]} == {None}
        gets = s3_server.requests_by_object("GET", s3_bucket) - before
        assert {key: gets[key] for key in data} == dict.fromkeys(data, 1), sweep_number
