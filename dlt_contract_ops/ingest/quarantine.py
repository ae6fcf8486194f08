"""Where a rejected batch is kept: `<quarantine_dir>/<pipeline>/<UTC stamp>/` with `diff.json`,
the rows as the source sent them (`raw/<resource>.jsonl`) and the extracted dlt package.

The folder is written under a hidden temporary name beside it (`.<stamp>.partial`) and renamed
when whole, so a quarantine folder is always complete: a write that fails removes what it wrote
and raises `QuarantineError` naming what could not be kept."""

from __future__ import annotations

import json
import math
import numbers
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from dlt_contract_ops.errors import QuarantineError
from dlt_contract_ops.statefile import state_dir


def quarantine(
    staged: Any, folder: Path, report: dict[str, Any], raw: Mapping[str, list[Any]]
) -> Path:
    """Copy the staged batch's extracted packages, write the raw rows (a model that refused
    the batch leaves no package, and one that coerced it changed the values) and `diff.json`;
    the folder's path. Raises QuarantineError (nothing left behind) when any of it cannot be
    written."""
    from dlt_contract_ops.contracts.store import resource_filename

    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    # absolute: the report and the alert name it long after the cwd changed
    target: Path = (folder / str(staged.pipeline_name) / stamp).absolute()
    partial = target.with_name(f".{stamp}.partial")
    try:
        with _writing(target, "the quarantine folder"):
            partial.mkdir(parents=True)
        for load_id in staged.list_extracted_load_packages():
            with _writing(target, f"the extracted package `{load_id}`"):
                info = staged.get_load_package_info(load_id)
                shutil.copytree(info.package_path, partial / load_id)
        with _writing(target, "`raw/`"):
            (partial / "raw").mkdir()
        for resource, items in raw.items():
            name = f"raw/{resource_filename(resource)[: -len('.json')]}.jsonl"
            with _writing(target, f"`{name}` (the rows of resource `{resource}`)"), \
                    open(partial / name, "wb") as out:
                for row in _rows(items):
                    out.write(_json_line(row))
        with _writing(target, "`diff.json`"):
            (partial / "diff.json").write_bytes(
                json.dumps(report, indent=2, ensure_ascii=False, default=str)
                .encode("utf-8", "backslashreplace")
            )
        with _writing(target, "the quarantine folder"):
            partial.rename(target)
    except BaseException:
        # whatever stopped it (a failed write, Ctrl-C): no half folder is left to be taken
        # for a kept batch
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return target


@contextmanager
def _writing(target: Path, what: str) -> Iterator[None]:
    """Name what was being written when a write fails (not Ctrl-C: that stops the gate)."""
    try:
        yield
    except Exception as exc:
        raise QuarantineError(target, what, exc) from exc


def _rows(items: list[Any]) -> Iterator[Any]:
    """The items as rows: an Arrow table or a data frame the source yielded is its rows."""
    for item in items:
        if hasattr(item, "to_pylist"):  # pyarrow Table, RecordBatch
            yield from item.to_pylist()
        elif type(item).__module__.startswith("pandas") and hasattr(item, "to_dict"):
            yield from item.to_dict(orient="records")  # a DataFrame
        else:
            yield item


#: as dlt writes JSON lines: no spaces
_COMPACT = (",", ":")


def _json_line(row: Any) -> bytes:
    """`row` as one line of JSON that keeps every value: integers of any size exactly (dlt's
    encoder refuses one over 64 bits), a float JSON cannot hold (NaN, infinity) and anything
    no JSON encoder knows as text, the rest as dlt writes it (dates ISO, decimals as text,
    bytes base64). A lone surrogate (bytes a source decoded badly) is written as its JSON
    escape. Only a value that cannot be written at all raises (a row that contains itself)."""
    from dlt.common.json import custom_encode

    try:
        text = json.dumps(row, default=custom_encode, allow_nan=False, ensure_ascii=False,
                          separators=_COMPACT)
    except (TypeError, ValueError):
        text = json.dumps(_as_text(row), allow_nan=False, ensure_ascii=False,
                          separators=_COMPACT)
    return (text + "\n").encode("utf-8", "backslashreplace")


def _as_text(value: Any) -> Any:
    """`value` with what JSON cannot hold turned into text, for `_json_line` (a value that
    contains itself ends in a RecursionError)."""
    from dlt.common.json import custom_encode

    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, numbers.Integral):  # numpy's integers
        return int(value)
    if isinstance(value, Mapping):
        return {k if isinstance(k, str) else str(k): _as_text(v)
                for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_as_text(v) for v in value]
    try:
        encoded = custom_encode(value)
    except TypeError:
        return str(value)
    return _as_text(encoded)  # a model's dump holds values to encode in turn


def default_quarantine() -> Path:
    return state_dir() / "quarantine"
