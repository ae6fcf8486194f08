"""Run the bench source's loads into DuckDB: `python -m bench.load PROJECT_DIR PLAN_JSON`.

A separate process so the timing process never holds the loader's Arrow buffers or its dlt
pipeline state. Each load is one `pipeline.run`, so every load gets its own `_dlt_load_id`.

dlt names a load by the wall clock of its run (`create_load_id`). The bench loads days of
data in a minute, so each load is named for the moment it stands for (`load_at`), as a pipeline
that ran then would have named it: ids a day apart, not a few seconds (a DuckDB zone map keeps
only the first 8 characters of a text column, so ids seconds apart could never be pruned).
"""

from __future__ import annotations

import importlib
import itertools
import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from bench.spec import DATASET_NAME, PIPELINE_NAME

RESOURCES_PER_RUN = 400


@contextmanager
def load_ids_at(load_at: str) -> Iterator[None]:
    """Name the loads of one step for `load_at` (ISO 8601), one millisecond apart, in dlt's
    own format (`str` of the epoch seconds): still increasing, as dlt requires."""
    import dlt.extract.storage as extract_storage

    epoch = datetime.fromisoformat(load_at).timestamp()
    step = itertools.count()
    original = extract_storage.create_load_id
    extract_storage.create_load_id = lambda: str(epoch + next(step) / 1000)
    try:
        yield
    finally:
        extract_storage.create_load_id = original


def main(argv: list[str]) -> int:
    """Load every step of the plan; print one line per load."""
    root, plan = argv[0], json.loads(argv[1])
    sys.path.insert(0, root)
    import dlt

    module = importlib.import_module(f"{PIPELINE_NAME}.source.bench_source")
    pipeline = dlt.pipeline(
        pipeline_name=PIPELINE_NAME, destination="duckdb", dataset_name=DATASET_NAME
    )
    first_id = 0
    for step in plan:
        first_id = step.get("first_id", first_id)  # an appended load continues the ids
        started = time.perf_counter()
        source = module.bench(
            load_at=step["load_at"], rows=step["rows"], recent=step["recent"], first_id=first_id
        )
        names = list(source.resources)
        # dlt's extract recurses once per exhausted resource in a row and overflows the stack
        # past ~1000 resources; a run per group of tables keeps the depth bounded
        with load_ids_at(step["load_at"]):
            for start in range(0, len(names), RESOURCES_PER_RUN):
                pipeline.run(source.with_resources(*names[start : start + RESOURCES_PER_RUN]))
        first_id += step["rows"]
        kind = step.get("kind") or ("recent" if step["recent"] else "baseline")
        print(
            f"  load {kind:<8} {step['load_at']}  {step['rows']:>9,} rows/table  "
            f"{time.perf_counter() - started:6.1f} s",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
