"""The loopback S3 server the lakehouse tests share (moto in server mode, one per module)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.servers import S3Server, start_s3_server, stop_process

_buckets = itertools.count()


@pytest.fixture(scope="module")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    proc, server = start_s3_server(tmp_path_factory.mktemp("moto") / "requests.log")
    try:
        yield server
    finally:
        stop_process(proc)


@pytest.fixture
def s3_bucket(s3_server: S3Server) -> str:
    """A new, empty bucket on the loopback S3 server: its `s3://` URL."""
    name = f"lake-{next(_buckets)}"
    s3_server.client().create_bucket(Bucket=name)
    return f"s3://{name}"


@pytest.fixture
def stores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The profile store the sweeps use; `sweeps.fresh()` points at a new, empty one."""
    used = [tmp_path / "profiles-0.duckdb"]
    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(used[0]))
    return used
