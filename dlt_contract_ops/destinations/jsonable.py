"""Turn driver values into JSON-friendly ones for samples.

Not `pydantic_core.to_jsonable_python`: it writes a Decimal as a string (`"1.5"`, here a
number), a UTC datetime with `Z` (here `+00:00`), bytes as UTF-8 text (here base64) and
fails on a memoryview or an unknown driver type (here `str(value)`), so the JSON document's
samples would change.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import uuid
from typing import Any


def jsonable(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, decimal.Decimal):
        return float(value) if value.is_finite() else str(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    return str(value)
