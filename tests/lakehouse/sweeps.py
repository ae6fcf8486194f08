"""A shop whose orders a real dlt pipeline loads into a local `file://` bucket, one load per
batch: steady loads stamped days back on `loaded_at`, then a drifted one (a dark `note`, a
shifted `status` share). For the profile sweep on dlt's `filesystem` destination."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from filelock import FileLock

from tests.duckdb_baselines import BASELINES, pipeline_dir
from tests.projects import Project

PIPELINE = "shop_lake"
DATASET = "shop"

SOURCE = """
from datetime import datetime, timedelta, timezone
from typing import Literal, Optional

import dlt
from pydantic import BaseModel


class Order(BaseModel):
    id: int
    status: Literal["new", "paid", "shipped", "other"]
    note: Optional[str] = None
    amount: Optional[float] = None
    loaded_at: Optional[datetime] = None


def rows(batch, n, drift, days_ago, first=0):
    when = datetime.now(timezone.utc) - timedelta(days=days_ago)
    for i in range(n):
        wobble = (batch * 7 + i) % 10
        status = "new" if wobble < 5 else "paid" if wobble < 8 else "shipped"
        if drift and i % 4 == 0:
            status = "other"
        yield {"id": first + batch * 1000 + i, "status": status, "amount": float(i % 17),
               "note": None if drift or i % 10 == 0 else "n", "loaded_at": when}


@dlt.source(name="shop")
def shop(batch=0, n=100, drift=False, days_ago=0, disposition="append", table_format=None,
         first=0):
    hints = {"primary_key": "id"} if disposition == "merge" else {}
    if table_format:
        hints["table_format"] = table_format
    return dlt.resource(rows(batch, n, drift, days_ago, first), name="orders", columns=Order,
                        write_disposition=disposition, **hints)
"""

STEADY = [{"batch": b, "days_ago": 3} for b in range(6)]
DRIFTED = {"batch": 6, "drift": True}


def setup(project: Project, bucket: Path | str) -> None:
    """The project on `bucket`: a local folder, or a bucket URL whose credentials the caller
    configures."""
    project.module("shop_lake_src", SOURCE)
    url = bucket.as_uri() if isinstance(bucket, Path) else bucket
    project.config(
        "[runtime]\ndlthub_telemetry = false\n\n[contract_ops]\nalert_sinks = []\n\n"
        f"[destination.filesystem]\nbucket_url = {json.dumps(url)}\n")
    project.source("shop", "shop_lake_src:shop", pipeline_name=PIPELINE,
                   destination="filesystem", dataset_name=DATASET,
                   load_timestamp_column="loaded_at")


def load(project: Project, *batches: dict[str, Any], file_format: str = "parquet",
         backdated: float | None = None) -> None:
    """Run the pipeline once per batch (keyword arguments of `shop`): one load each.
    `backdated` (hours): the n-th of N loads made (N - n) * `backdated` hours ago, rather than
    rewritten afterwards (`backdate`): for the first loads of a pipeline. dlt's new load id is
    the time of the load; the loads run in a process whose clock (`time.time`, read by dlt as
    it imports) is set back that far, as `faketime` would set it, never patching dlt."""
    if backdated is None:
        project.python(f"""
            import json, dlt
            from shop_lake_src import shop
            p = dlt.pipeline({PIPELINE!r}, destination="filesystem", dataset_name={DATASET!r})
            for kw in json.loads({json.dumps(json.dumps(list(batches)))}):
                p.run(shop(**kw), loader_file_format={file_format!r})
            """)
        return
    project.python_process(f"""
        import json, time
        batches = json.loads({json.dumps(json.dumps(list(batches)))})
        hours, real = {backdated!r}, time.time
        ago = [len(batches) * hours * 3600]  # the first load's, before dlt reads the clock
        time.time = lambda: real() - ago[0]
        import dlt
        from shop_lake_src import shop
        p = dlt.pipeline({PIPELINE!r}, destination="filesystem", dataset_name={DATASET!r})
        for n, kw in enumerate(batches):
            ago[0] = (len(batches) - n) * hours * 3600  # later loads later: ids increase
            p.run(shop(**kw), loader_file_format={file_format!r})
        """)


def steady(project: Project, bucket: Path, batches: list[dict[str, Any]], *,
           file_format: str = "parquet", backdated: bool = True) -> None:
    """`load(project, *batches)` into the fresh local bucket, then (`backdated`) `backdate`,
    or an open table's `backdate_open`: built once per test run and copied (`shared`; many
    tests start from the same loads). Local `file://` buckets whose files name no absolute
    path only (not Iceberg)."""
    assert not any(b.get("table_format") == "iceberg" for b in batches)
    opened = {b.get("table_format") for b in batches} - {None}

    def build() -> None:
        load(project, *batches, file_format=file_format)
        if backdated and opened:
            backdate_open(bucket, *opened)
        elif backdated:
            backdate(bucket)

    shared(project, bucket, PIPELINE, [SOURCE, batches, file_format, backdated], build)


def shared(project: Project, bucket: Path, pipeline: str, key: Any,
           build: Callable[[], None], *, files: tuple[str, ...] = ()) -> None:
    """`build()`: loads by `pipeline` into the fresh local bucket, built once per test run
    under `key` (JSON: everything `build` does) and copied, bucket and dlt's pipeline folder,
    into this test's. The copy is what the real loads left: the same files, load ids and
    pipeline state; the pipeline's later loads go on from it. Local `file://` buckets whose
    files name no absolute path only (not Iceberg), or every test's at the same path
    (`same_path_bucket`: part of `key`, Iceberg's metadata names it). `files`: the project's
    own files the loads leave too (an Iceberg catalog), copied as they are."""
    assert not bucket.exists(), "not a fresh bucket"
    assert not pipeline_dir(pipeline).exists(), "not a fresh pipeline"
    digest = hashlib.sha256(json.dumps([pipeline, key], sort_keys=True).encode()).hexdigest()
    saved = BASELINES[0] / f"lake-{digest[:16]}"
    with FileLock(str(saved) + ".lock"):
        if saved.exists():
            _restore(saved, project, bucket, pipeline)
            for name in files:
                shutil.copyfile(saved / "project" / name, project.root / name)
            return
        build()
        staging = saved.with_name(saved.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        shutil.copytree(bucket, staging / "bucket")
        shutil.copytree(pipeline_dir(pipeline), staging / "pipeline")
        (staging / "project").mkdir()
        for name in files:
            shutil.copyfile(project.root / name, staging / "project" / name)
        (staging / "paths.json").write_text(json.dumps(_paths(project, bucket)))
        staging.rename(saved)


def same_path_bucket(folder: Path) -> Path:
    """The local bucket every test of a module builds its Iceberg loads in (`folder`: a
    module's own temporary folder), emptied: metadata the loads write names absolute paths,
    so a shared copy (`shared`, with this path in its key) must be restored at the path it
    was built at. The tests that use it run one at a time (a module's tests stay on one
    worker)."""
    bucket = folder / "bucket"
    shutil.rmtree(bucket, ignore_errors=True)
    return bucket


def _paths(project: Project, bucket: Path) -> list[str]:
    """The absolute paths dlt writes into its pipeline folder: the project (the run's cwd,
    `_local` in the state), the data dir (the load packages' own), the bucket (the
    `.reference` files of a Delta load)."""
    return [str(project.root), str(Path(os.environ["DLT_DATA_DIR"])), str(bucket)]


def _restore(saved: Path, project: Project, bucket: Path, pipeline: str) -> None:
    """Copy a kept baseline into this test's bucket and data dir, every path of the builder's
    test in the pipeline folder's files replaced by this test's (its state, the loaded
    packages' state and references). The builder's `trace.pickle` is left behind (a pickle
    of that run, for `dlt pipeline trace` only: the test's next load writes its own)."""
    shutil.copytree(saved / "bucket", bucket)
    target = pipeline_dir(pipeline)
    shutil.copytree(saved / "pipeline", target, ignore=shutil.ignore_patterns("trace.pickle"))
    pairs = sorted(zip(json.loads((saved / "paths.json").read_text()), _paths(project, bucket),
                       strict=True), key=lambda pair: len(pair[0]), reverse=True)
    for file in target.rglob("*"):
        if not file.is_file() or file.suffix in (".parquet", ".gz"):
            continue
        try:
            text = file.read_text()
        except UnicodeDecodeError:  # no path in a binary file dlt keeps there
            continue
        changed = text
        for old, new in pairs:
            changed = changed.replace(old, new)
        if changed != text:
            file.write_text(changed)


def sweep(project: Project, *args: str) -> tuple[int, dict[str, Any], str]:
    """`reconcile -s shop --include-removal --include-distribution --dry-run ARGS` as JSON."""
    proc = project.cli("reconcile", "-s", "shop", "--include-removal", "--include-distribution",
                       "--dry-run", "--format", "json", *args)
    try:
        doc = json.loads(proc.stdout)
    except ValueError as exc:
        raise AssertionError(f"not JSON: {proc.stdout!r}\nstderr: {proc.stderr}") from exc
    return proc.returncode, doc, proc.stderr


def observed(project: Project) -> tuple[dict[tuple[str, str], dict[str, Any]], list[str]]:
    """One sweep: its findings, and the `orders` files its queries scanned."""
    from dlt_contract_ops.engine.sweep_stats import observe_sweeps

    with observe_sweeps() as seen:
        code, doc, stderr = sweep(project)
    assert code == 0, stderr
    read = sorted({f for s in seen for f in s.files_read if "/orders/" in f})
    return findings(doc), read


def fresh(stores: list[Path], monkeypatch: Any) -> None:
    """Point the sweeps at a new, empty profile store (`stores`: the fixture's list)."""
    stores.append(stores[0].with_name(f"profiles-{len(stores)}.duckdb"))
    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(stores[-1]))


def findings(doc: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """(drift type, table) -> finding, without what differs between two runs (times)."""
    out = {}
    for r in doc["results"]:
        assert r["error"] is None, r["error"]
        for f in r["findings"]:
            kept = {k: v for k, v in f.items()
                    if k not in ("detected_at", "first_seen", "fingerprint", "reproduce")}
            out[(f["drift_type"], f["table"])] = kept
    return out


def _moved_ids(root: str, hours: float, fs: Any = None) -> dict[str, str]:
    """Every load so far (its `_dlt_loads` record under `root`, the dataset folder, on `fs`,
    an fsspec filesystem: local by default), the n-th of N moved to (N - n) * `hours` ago,
    its record renamed and rewritten: old id -> new id."""
    import time

    import fsspec

    fs = fs or fsspec.filesystem("file")
    records = sorted(fs.ls(f"{root}/_dlt_loads", detail=False))
    ids = [p.rsplit("/", 1)[-1].split("__", 1)[1].removesuffix(".jsonl") for p in records]
    now = time.time()
    moved = {old: f"{now - (len(ids) - n) * hours * 3600:.6f}" for n, old in enumerate(ids)}
    for path, old in zip(records, ids, strict=True):
        record = json.loads(fs.cat_file(path))
        record["load_id"] = moved[old]
        fs.pipe_file(f"{root}/_dlt_loads/{DATASET}__{moved[old]}.jsonl",
                     (json.dumps(record) + "\n").encode())
        fs.rm_file(path)
    return moved


def _restamped(table: Any, old: str, new: str) -> Any:
    """The rows of `table` (Arrow) of load `old`, stamped `new`."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    part = table.filter(pc.equal(table["_dlt_load_id"], old))
    column = part.schema.get_field_index("_dlt_load_id")
    return part.set_column(column, part.schema.field(column),
                           pa.array([new] * part.num_rows, part.schema.field(column).type))


def backdate(bucket: Path, hours: float = 20) -> dict[str, str]:
    """Every load so far moved back, the n-th of N to (N - n) * `hours` ago, as dlt would have
    written it then: its Parquet or JSONL files renamed and their `_dlt_load_id` rewritten,
    its `_dlt_loads` record too. `bucket`: a local folder. Old id -> new id."""
    import gzip

    import fsspec
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    fs = fsspec.filesystem("file")
    root = f"{bucket}/{DATASET}"
    moved = _moved_ids(root, hours, fs)
    for path in sorted(fs.ls(f"{root}/orders", detail=False)):
        folder, name = path.rsplit("/", 1)
        old = next(i for i in moved if name.startswith(f"{i}."))
        target = f"{folder}/{moved[old]}{name[len(old):]}"
        if name.endswith(".parquet"):
            with fs.open(path, "rb") as file:
                rows = _restamped(pq.read_table(file), old, moved[old])
            with fs.open(target, "wb") as file:
                pq.write_table(rows, file)
        else:  # JSONL, gzip or plain
            data = fs.cat_file(path)
            packed = name.endswith(".gz")
            lines = (gzip.decompress(data) if packed else data).decode().splitlines()
            text = "".join(json.dumps({**json.loads(line), "_dlt_load_id": moved[old]}) + "\n"
                           for line in lines if line.strip()).encode()
            fs.pipe_file(target, gzip.compress(text) if packed else text)
        fs.rm_file(path)
    return moved


def backdate_open(bucket: Path, table_format: str, hours: float = 20) -> dict[str, str]:
    """`backdate` for a Delta table in a local bucket: its rows written again through
    `write_deltalake`, one commit per load, the first replacing the table's current version.
    (An Iceberg table is loaded with backdated load ids instead: `load(..., backdated=)`.)"""
    assert table_format == "delta", table_format
    from deltalake import DeltaTable, write_deltalake

    moved = _moved_ids(_folder(bucket), hours)
    location = str(Path(bucket) / DATASET / "orders")
    rows = DeltaTable(location).to_pyarrow_table()
    for n, (old, new) in enumerate(moved.items()):
        write_deltalake(location, _restamped(rows, old, new),
                        mode="append" if n else "overwrite")
    return moved


def _folder(bucket: Path | str) -> str:
    """The dataset's folder: a local path, or the bucket's path on its fsspec filesystem."""
    return f"{str(bucket).removeprefix('s3://')}/{DATASET}"


def _metadata_file(bucket: Path | str, fs: Any = None) -> str:
    """The newest metadata file of the Iceberg table `orders`, as a URL."""
    import fsspec

    found = (fs or fsspec.filesystem("file")).ls(f"{_folder(bucket)}/orders/metadata",
                                                 detail=False)
    newest = max((p for p in found if p.endswith(".metadata.json")),
                 key=lambda p: int(p.rsplit("/", 1)[-1].split("-", 1)[0]))
    return Path(newest).as_uri() if isinstance(bucket, Path) else f"s3://{newest}"


def open_files(bucket: Path | str, table_format: str, *, fs: Any = None,
               properties: dict[str, str] | None = None) -> list[str]:
    """The data files of the current version of an open table `orders`, as the adapter
    names them."""
    if table_format == "delta":
        from deltalake import DeltaTable

        return sorted(DeltaTable(str(Path(bucket) / DATASET / "orders")).file_uris())
    from pyiceberg.table import StaticTable

    table = StaticTable.from_metadata(_metadata_file(bucket, fs), properties=properties or {})
    return sorted(t.file.file_path for t in table.scan().plan_files())


def data_files(bucket: Path | str, table: str = "orders", fs: Any = None) -> list[str]:
    """A table's files: local paths, or `s3://` URLs of a bucket on `fs` (`bucket` its
    `s3://` URL)."""
    if fs is None:
        return sorted(str(p) for p in (Path(bucket) / DATASET / table).iterdir()
                      if p.is_file())
    name = str(bucket).removeprefix("s3://")
    return sorted(f"s3://{p}" for p in fs.ls(f"{name}/{DATASET}/{table}", detail=False))


def steady_in_s3(project: Project, server: Any, url: str, batches: list[dict[str, Any]], *,
                 file_format: str = "parquet", backdated: bool = True) -> None:
    """`steady` for a bucket on the loopback S3 server (`url`, its `s3://` URL, configured as
    the project's bucket): the loads built, or copied, in a local folder as `steady` does,
    then uploaded as they are (data files, `_dlt_loads` records, state and schema), one
    request a file. dlt's pipeline folder is this test's, as after those loads; the
    pipeline's later loads go to the bucket. For tests about what happens after the loads
    (sweeps, their requests), not the loads' own writes to S3."""
    import os

    local = project.root / "_s3_staging"
    key = "DESTINATION__FILESYSTEM__BUCKET_URL"
    os.environ[key] = local.as_uri()  # the loads go to the local folder, not the bucket
    try:
        steady(project, local, batches, file_format=file_format, backdated=backdated)
    finally:
        del os.environ[key]
    client, name = server.client(), url.removeprefix("s3://")
    for path in sorted(p for p in local.rglob("*") if p.is_file()):
        client.put_object(Bucket=name, Key=path.relative_to(local).as_posix(),
                          Body=path.read_bytes())
    shutil.rmtree(local)
