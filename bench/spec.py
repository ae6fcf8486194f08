"""What a benchmark workload is: its shape, the drift planted in it, and the named presets."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, replace
from typing import Any

#: model columns every table has besides the generated `c_NNN` ones
FIXED_COLUMNS = ("id", "loaded_at")
#: the configured load timestamp column: the removal windows are cut on it
LOAD_TIMESTAMP_COLUMN = "loaded_at"
#: the time axes a workload can be swept on (`Spec.axis`)
AXES = ("loaded_at", "load_id")
SOURCE_NAME = "bench"
PIPELINE_NAME = "bench_pipeline"
DATASET_NAME = "bench_data"


@dataclass(frozen=True)
class Spec:
    """One synthetic warehouse.

    `columns` counts every model field (`id`, `loaded_at` and the generated ones). `rows` is
    per table over all loads: `loads` baseline loads spread over the last `days` days, then
    one recent load. In the recent load the first `drifted` tables carry `extra_columns`
    columns their models do not declare (additive drift) and the last `dark` tables carry
    NULL in `dark_columns` declared columns (removal drift).
    """

    tables: int = 50
    columns: int = 30
    rows: int = 200_000
    drifted: int = 5
    dark: int = 5
    loads: int = 3
    days: float = 3.0
    extra_columns: int = 2
    dark_columns: int = 2
    batch_rows: int = 100_000
    #: the time axis removal cuts its windows on: `loaded_at` (a configured
    #: `load_timestamp_column`) or `load_id` (none configured: `_dlt_load_id`, what every dlt
    #: pipeline without a timestamp column gets). The data are the same either way
    axis: str = "loaded_at"

    def validate(self) -> Spec:
        """Raise ValueError naming the parameter when the shape cannot be built."""
        problems = []
        if self.tables < 1:
            problems.append("--tables must be at least 1")
        if self.columns < len(FIXED_COLUMNS) + max(1, self.dark_columns):
            problems.append(
                f"--columns must be at least {len(FIXED_COLUMNS) + max(1, self.dark_columns)} "
                f"(id, loaded_at and the {self.dark_columns} dark columns)"
            )
        if self.loads < 1:
            problems.append("--loads must be at least 1 (baseline loads before the recent one)")
        if self.rows < self.loads + 1:
            problems.append(f"--rows must be at least {self.loads + 1}: one per load")
        if self.drifted < 0 or self.dark < 0 or self.drifted + self.dark > self.tables:
            problems.append("--drifted + --dark must be between 0 and --tables (disjoint sets)")
        if self.axis not in AXES:
            problems.append(f"--axis must be one of {', '.join(AXES)}")
        # up to 8 days: an hourly cron's store holds loads older than the windows (7 d + 6 h)
        if not 0.5 <= self.days <= 8.0:
            problems.append("--days must be between 0.5 and 8 (the baseline window is 7 days)")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @property
    def label(self) -> str:
        return f"{self.tables}x{self.columns}x{_human(self.rows)}"

    @property
    def recent_rows(self) -> int:
        return max(1, self.rows // (self.loads + 1))

    @property
    def baseline_rows(self) -> int:
        return self.rows - self.recent_rows

    def drifted_tables(self) -> list[int]:
        return list(range(self.drifted))

    def dark_tables(self) -> list[int]:
        return list(range(self.tables - self.dark, self.tables))

    def key(self) -> str:
        """A short hash of the shape, for reusing a built warehouse."""
        # `loader`: how loads are made; 2 names each load for its `load_at` (bench/load.py)
        # `axis` is configuration only: one warehouse serves both axes
        shape = {k: v for k, v in asdict(self).items() if k != "axis"}
        blob = json.dumps({**shape, "loader": 2}, sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:10]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def table_name(i: int) -> str:
    return f"t_{i:05d}"


def column_name(j: int) -> str:
    return f"c_{j:03d}"


def extra_column_name(k: int) -> str:
    return f"x_new_{k:02d}"


def _human(n: int) -> str:
    for unit, size in (("M", 1_000_000), ("k", 1_000)):
        if n >= size and n % size == 0:
            return f"{n // size}{unit}"
    return str(n)


def parse_count(text: str) -> int:
    """`200k` -> 200000, `1.5M` -> 1500000, `2000` -> 2000."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*", text)
    if not m:
        raise ValueError(f"{text!r} is not a count: write e.g. 2000, 200k or 1.5M")
    scale = {"": 1, "k": 1_000, "m": 1_000_000}[m.group(2).lower()]
    return int(float(m.group(1)) * scale)


def parse_shape(text: str) -> Spec:
    """`TABLESxCOLUMNSxROWS`, e.g. `50x30x200k`."""
    parts = text.lower().split("x")
    if len(parts) != 3:
        raise ValueError(f"{text!r} is not a shape: write TABLESxCOLUMNSxROWS, e.g. 50x30x200k")
    tables, columns, rows = (parse_count(p) for p in parts)
    return Spec(tables=tables, columns=columns, rows=rows)


_SMALL = Spec(tables=8, columns=12, rows=4_000, drifted=2, dark=2, loads=2, days=2)
#: the test suite's smoke run: every step of the bench on the least warehouse that still has a
#: drifted, a dark and a clean table and two baseline loads days apart (figures meaningless)
_TINY = Spec(tables=3, columns=6, rows=1_200, drifted=1, dark=1, loads=2, days=2)
_WIDE = Spec(tables=50, columns=30, rows=200_000, drifted=5, dark=5)
_MANY = Spec(tables=200, columns=30, rows=2_000, drifted=20, dark=20, loads=2)
_MANY_X10 = replace(_MANY, tables=2000, drifted=200, dark=200)
_BIG = Spec(tables=20, columns=30, rows=2_000_000)
#: one load an hour for 8 days (192 loads, the last 6 hours' dark: `project.load_times`) on
#: `_dlt_load_id`: the profile store holds 192 loads x 30 columns of each of the 50 tables
_HOURLY = Spec(tables=50, columns=30, rows=200_000, loads=191, days=191 / 24, axis="load_id")

#: preset name -> the workloads it runs, in order
PRESETS: dict[str, tuple[Spec, ...]] = {
    "tiny": (_TINY,),
    "small": (_SMALL,),
    "50x30x200k": (_WIDE,),
    "200x30x2k": (_MANY,),
    "2000x30x2k": (_MANY_X10,),
    "linearity": (_MANY, _MANY_X10),  # 200 -> 2000 tables, all else equal
    "default": (_WIDE, _MANY),
    # removal from load profiles: full scan, first sweep, repeat after one new load
    "incremental": (_WIDE,),
    "hourly": (_HOURLY,),
    # the profile sweeps against a plain scan on `_dlt_load_id` (issue 40): the hourly
    # store, then few loads of small, wide and big tables (`report.scan_table`)
    "store": (_HOURLY, *(replace(s, axis="load_id") for s in (_MANY, _WIDE, _BIG))),
}
#: presets that run the incremental steps (bench/incremental.py) instead of the modes
INCREMENTAL_PRESETS = frozenset({"incremental", "hourly", "store"})
