"""The synthetic bench source: one resource per table, each with its own Pydantic model.

Copied by the bench into `<project>/bench_pipeline/source/bench_source.py`; the shape comes
from `<project>/bench_spec.json`. Models are generated with `pydantic.create_model` when the
module is imported, as a user's module would define them at import. Rows are produced as
Arrow tables (imported lazily, so reconciling never needs pyarrow).

Both reconcilers call `bench()` with no arguments to read the models; the loader passes
`load_at`, `rows` and `recent` to produce one load.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, Optional

import dlt
from pydantic import BaseModel, create_model

SPEC: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[2] / "bench_spec.json").read_text()
)
GENERATED = SPEC["columns"] - 2  # besides `id` and `loaded_at`
KINDS: tuple[type[Any], ...] = (int, float, str, bool)


def _model(i: int) -> type[BaseModel]:
    fields: dict[str, Any] = {"id": (int, ...), "loaded_at": (datetime, ...)}
    for j in range(GENERATED):
        fields[f"c_{j:03d}"] = (Optional[KINDS[j % len(KINDS)]], None)  # noqa: UP045
    return create_model(f"Table{i:05d}", **fields)


MODELS = [_model(i) for i in range(SPEC["tables"])]
DRIFTED = set(range(SPEC["drifted"]))
DARK = set(range(SPEC["tables"] - SPEC["dark"], SPEC["tables"]))


class _Columns:
    """Arrow columns of one batch length, built once and shared by every table."""

    def __init__(self, n: int) -> None:
        import pyarrow as pa  # type: ignore[import-untyped]  # no stubs; bench-only

        valid = [k % 10 != 0 for k in range(n)]  # 10% NULL in every column
        self.n = n
        self.by_kind = {
            int: pa.array([k % 1000 if v else None for k, v in enumerate(valid)], pa.int64()),
            float: pa.array([k * 0.5 if v else None for k, v in enumerate(valid)], pa.float64()),
            str: pa.array([f"v{k % 97}" if v else None for k, v in enumerate(valid)], pa.string()),
            bool: pa.array([k % 2 == 0 if v else None for k, v in enumerate(valid)], pa.bool_()),
        }
        self.extra = pa.array([f"new-{k % 13}" for k in range(n)], pa.string())


_CACHE: dict[int, _Columns] = {}


def _batches(i: int, load_at: datetime, rows: int, recent: bool, first_id: int) -> Iterator[Any]:
    import pyarrow as pa
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    batch = SPEC.get("batch_rows", 100_000)
    ts_type = pa.timestamp("us", tz="UTC")
    done = 0
    while done < rows:
        n = min(batch, rows - done)
        cols = _CACHE.get(n) or _CACHE.setdefault(n, _Columns(n))
        arrays: dict[str, Any] = {
            "id": pc.add(pa.array(range(n), pa.int64()), first_id + done),
            "loaded_at": pa.repeat(pa.scalar(load_at, ts_type), n),
        }
        for j in range(GENERATED):
            kind = KINDS[j % len(KINDS)]
            dark = recent and i in DARK and j < SPEC["dark_columns"]
            arrays[f"c_{j:03d}"] = pa.nulls(n, cols.by_kind[kind].type) if dark else (
                cols.by_kind[kind]
            )
        if recent and i in DRIFTED:
            for k in range(SPEC["extra_columns"]):
                arrays[f"x_new_{k:02d}"] = cols.extra
        yield pa.table(arrays)
        done += n


@dlt.source(name="bench")
def bench(
    load_at: Optional[str] = None,  # noqa: UP045
    rows: int = 0,
    recent: bool = False,
    first_id: int = 0,
) -> list[Any]:
    """One resource per table; yields `rows` rows stamped `load_at` when loading.

    The resources evolve (a model alone would discard undeclared columns), so the columns
    planted in the recent load land although the models do not declare them.
    """
    when = datetime.fromisoformat(load_at) if load_at else None
    resources = []
    for i, model in enumerate(MODELS):
        data: Any = _batches(i, when, rows, recent, first_id) if when is not None else iter(())
        resources.append(
            dlt.resource(
                data,
                name=f"t_{i:05d}",
                columns=model,
                write_disposition="append",
                schema_contract="evolve",
            )
        )
    return resources
