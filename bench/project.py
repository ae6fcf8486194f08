"""Lay out a bench project on disk and load its warehouse through a real dlt pipeline.

One layout serves both reconcilers: `<root>/bench_pipeline/source/bench_source.py` is where
dlt-ops discovers sources, and `bench_pipeline.source.bench_source:bench` is the `ref`
dlt-contract-ops imports. `.dlt/config.toml` holds both tools' settings.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from bench.spec import (
    DATASET_NAME,
    LOAD_TIMESTAMP_COLUMN,
    PIPELINE_NAME,
    SOURCE_NAME,
    Spec,
)

BENCH_DIR = Path(__file__).resolve().parent
TEMPLATE = BENCH_DIR / "templates" / "bench_source.py"
#: a reused warehouse must have its recent load inside the 6 h recent window, with margin
MAX_REUSE_AGE = timedelta(hours=4)
#: the product's recent window: a baseline load stamped within it of the build is built as
#: the recent load is (dark and drifted columns), so a run's recent window holds only such
#: loads however many there are (one an hour: `spec._HOURLY`)
RECENT_WINDOW = timedelta(hours=6)

CONFIG = f"""\
[runtime]
dlthub_telemetry = false
# arrow and model hints differ in nullability; dlt warns once per table and load
log_level = "ERROR"

# arrow loads get `_dlt_load_id` like object loads do
[normalize.parquet_normalizer]
add_dlt_load_id = true

[contract_ops]
{{axis}}

[sources.{SOURCE_NAME}.contract_ops]
ref = "{PIPELINE_NAME}.source.bench_source:{SOURCE_NAME}"
pipeline_name = "{PIPELINE_NAME}"
destination = "duckdb"
dataset_name = "{DATASET_NAME}"

# the same workload for the peer, dlt-ops 0.1.0 (`--peer`)
[dlt_ops]
default_destination = "duckdb"
default_dataset = "{DATASET_NAME}"
{{axis}}

[sources.{SOURCE_NAME}.dlt_ops]
schedule = "@daily"
"""


@dataclass(frozen=True)
class Workload:
    """A built project: where it is and when its loads were stamped."""

    spec: Spec
    root: Path
    anchor: datetime  # the "now" the loads were stamped relative to
    build_seconds: float
    reused: bool

    @property
    def database(self) -> Path:
        return self.root / f"{PIPELINE_NAME}.duckdb"

    @property
    def data_dir(self) -> Path:
        return self.root / "_dlt_data"

    def env(self) -> dict[str, str]:
        """Environment for any process that touches this project with dlt."""
        return {
            **os.environ,
            "RUNTIME__DLTHUB_TELEMETRY": "false",
            "DLT_DATA_DIR": str(self.data_dir),
        }


def load_times(spec: Spec, anchor: datetime) -> list[tuple[datetime, int, bool]]:
    """(stamp, rows, recent) per load: baseline loads spread over `days`, then a recent one;
    a baseline load within `RECENT_WINDOW` of `anchor` is recent too.

    >>> from bench.spec import Spec
    >>> a = datetime(2026, 1, 8, tzinfo=timezone.utc)
    >>> [(t.isoformat(), n, r) for t, n, r in load_times(Spec(rows=8, loads=3, days=3), a)]
    ... # doctest: +NORMALIZE_WHITESPACE
    [('2026-01-05T00:00:00+00:00', 2, False), ('2026-01-06T00:00:00+00:00', 2, False),
     ('2026-01-07T00:00:00+00:00', 2, False), ('2026-01-07T23:30:00+00:00', 2, True)]
    >>> [r for _, _, r in load_times(Spec(rows=96, loads=47, days=47 / 24), a)][-8:]
    [False, True, True, True, True, True, True, True]
    """
    per_load, rest = divmod(spec.baseline_rows, spec.loads)
    out = []
    for j in range(spec.loads):
        stamp = anchor - timedelta(days=spec.days * (spec.loads - j) / spec.loads)
        out.append((stamp, per_load + (1 if j < rest else 0), anchor - stamp <= RECENT_WINDOW))
    out.append((anchor - timedelta(minutes=30), spec.recent_rows, True))
    return out


def _write(root: Path, spec: Spec) -> None:
    source_dir = root / PIPELINE_NAME / "source"
    source_dir.mkdir(parents=True, exist_ok=True)
    (root / PIPELINE_NAME / "__init__.py").touch()
    (source_dir / "__init__.py").touch()
    shutil.copyfile(TEMPLATE, source_dir / "bench_source.py")
    write_config(root, spec)
    (root / "bench_spec.json").write_text(json.dumps(spec.to_json(), indent=2))


def write_config(root: Path, spec: Spec) -> None:
    """`.dlt/config.toml` for the spec's time axis (`Spec.axis`): `load_id` configures no
    `load_timestamp_column`, so removal cuts its windows on `_dlt_load_id`."""
    axis = f'load_timestamp_column = "{LOAD_TIMESTAMP_COLUMN}"' if spec.axis == "loaded_at" \
        else "# no load_timestamp_column: windows on _dlt_load_id"
    (root / ".dlt").mkdir(exist_ok=True)
    (root / ".dlt" / "config.toml").write_text(CONFIG.replace("{axis}", axis))


def _manifest(root: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((root / "bench_manifest.json").read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def build(spec: Spec, workdir: Path, *, reuse: bool = True, log: Any = print) -> Workload:
    """Build (or reuse, when fresh) the project for `spec` under `workdir`."""
    root = workdir.resolve() / f"{spec.label}-{spec.key()}"
    manifest = _manifest(root) if reuse else None
    if manifest is not None:
        anchor = datetime.fromisoformat(manifest["anchor"])
        if datetime.now(timezone.utc) - anchor < MAX_REUSE_AGE and (
            root / f"{PIPELINE_NAME}.duckdb"
        ).exists():
            log(f"reusing {root} (loaded {anchor:%H:%M} UTC)")
            write_config(root, spec)  # the axis is configuration: the data serve both
            return Workload(spec, root, anchor, float(manifest["build_seconds"]), True)
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    _write(root, spec)
    anchor = datetime.now(timezone.utc).replace(microsecond=0)
    workload = Workload(spec, root, anchor, 0.0, False)
    plan = [
        {"load_at": t.isoformat(), "rows": n, "recent": r} for t, n, r in load_times(spec, anchor)
    ]
    log(f"building {spec.label}: {len(plan)} loads of {spec.tables} tables into {root}")
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "bench.load", str(root), json.dumps(plan)],
        cwd=root,
        env={**workload.env(), "PYTHONPATH": str(BENCH_DIR.parent)},
        check=True,
    )
    seconds = round(time.perf_counter() - started, 2)
    (root / "bench_manifest.json").write_text(
        json.dumps({"anchor": anchor.isoformat(), "build_seconds": seconds, "plan": plan})
    )
    return Workload(spec, root, anchor, seconds, False)
