"""Which loads removal adds whole from their profiled time range, and which it re-counts.

Pure: `by_axis_range` over hand-made profiles. The coverage query counts a row in the recent
window when its time is at or after the recent start, in the baseline when at or after the
baseline start and before the recent start, and nowhere when its time is NULL.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from dlt_contract_ops.core.load_profile import ColumnProfile, LoadProfile
from dlt_contract_ops.detectors.removal import by_axis_range

RECENT = datetime(2026, 12, 1, 6, 0, tzinfo=timezone.utc)
BASELINE = RECENT - timedelta(days=7)


def load(load_id: str, low: str | None, high: str | None, rows: int = 10,
         with_time: int = 10, note: int = 10) -> LoadProfile:
    return LoadProfile(load_id, rows, {
        "at": ColumnProfile("at", with_time, None, low, high),
        "note": ColumnProfile("note", note),
    })


def split(*loads: LoadProfile) -> tuple[object, list[str]] | None:
    return by_axis_range(list(loads), ["note"], "at", RECENT, BASELINE)


def test_whole_loads_are_added_to_their_window_and_straddlers_returned() -> None:
    out = split(
        load("1", "2026-11-20T00:00:00+00:00", "2026-11-20T01:00:00+00:00"),  # before both
        load("2", "2026-11-28T00:00:00+00:00", "2026-11-28T01:00:00+00:00", note=7),
        load("3", "2026-12-01T05:00:00+00:00", "2026-12-01T07:00:00+00:00"),  # straddles
        load("4", "2026-12-01T06:00:00+00:00", "2026-12-01T08:00:00+00:00", note=0),
    )
    assert out is not None
    counts, straddling = out
    assert straddling == ["3"]
    assert (counts.baseline_rows, counts.recent_rows) == (10, 10)  # type: ignore[attr-defined]
    assert counts.baseline_non_null == {"note": 7}  # type: ignore[attr-defined]
    assert counts.recent_non_null == {"note": 0}  # type: ignore[attr-defined]


def test_a_load_with_null_times_is_counted_by_the_query_unless_before_both_windows() -> None:
    out = split(
        load("1", "2026-11-28T00:00:00+00:00", "2026-11-28T01:00:00+00:00", with_time=9),
        load("2", "2026-11-01T00:00:00+00:00", "2026-11-01T01:00:00+00:00", with_time=9),
        load("3", None, None, with_time=0),  # every time NULL: in no window
    )
    assert out is not None
    assert out[1] == ["1"]


def test_a_time_without_a_zone_must_clear_the_start_by_more_than_any_zone_offset() -> None:
    near = RECENT + timedelta(hours=20)
    far = RECENT + timedelta(hours=30)
    out = split(
        load("1", near.replace(tzinfo=None).isoformat(), near.replace(tzinfo=None).isoformat()),
        load("2", far.replace(tzinfo=None).isoformat(), far.replace(tzinfo=None).isoformat()),
        load("3", "2026-11-28", "2026-11-28"),  # a date: its whole day
    )
    assert out is not None
    counts, straddling = out
    assert straddling == ["1"]
    assert counts.recent_rows == 10  # type: ignore[attr-defined]
    assert counts.baseline_rows == 10  # type: ignore[attr-defined]


def test_a_range_that_is_not_a_time_or_a_missing_column_means_a_full_scan() -> None:
    assert split(load("1", "17", "42")) is None
    missing = LoadProfile("2", 10, {"at": ColumnProfile("at", 10, None, "2026-11-28",
                                                        "2026-11-28")})
    assert split(missing) is None
