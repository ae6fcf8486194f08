"""One duration grammar for every setting and flag that takes a span of time.

Accepted: a number of seconds (`90`, `1.5`), unit terms that may be combined (`90s`, `15m`,
`6h`, `1h30m`, `7d`, `1w`, `2w3d`) and ISO-8601 durations (`PT6H`, `P1DT12H`, `P2W`).
Months and years are refused: their length depends on the calendar.
"""

from __future__ import annotations

import contextlib
import math
import re
from datetime import timedelta
from typing import Any

from dlt_contract_ops.errors import ConfigError

_UNIT_SECONDS = {"w": 604800.0, "d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0}
_TERM = re.compile(r"(\d+(?:\.\d+)?)([wdhms])")
_ISO = re.compile(
    r"P(?:(?P<w>\d+(?:\.\d+)?)W)?(?:(?P<d>\d+(?:\.\d+)?)D)?"
    r"(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?"
)

EXAMPLES = '"90s", "15m", "6h", "1h30m", "7d", "1w", "PT6H" or a number of seconds'


def _unit_terms(text: str) -> float | None:
    terms = _TERM.findall(text)
    if not terms or "".join(n + u for n, u in terms) != text:
        return None
    return sum(float(n) * _UNIT_SECONDS[u] for n, u in terms)


def _iso(text: str) -> float | None:
    match = _ISO.fullmatch(text.upper())
    if match is None or not any(match.groupdict().values()) or text.upper().endswith("T"):
        return None
    return sum(float(v) * _UNIT_SECONDS[k] for k, v in match.groupdict().items() if v)


def parse_duration(value: Any, key: str, *, allow_zero: bool = False) -> timedelta:
    """`value` as a timedelta; ConfigError naming `key` and the accepted forms otherwise.

    >>> parse_duration("1h30m", "k"), parse_duration("PT6H", "k") == parse_duration("6h", "k")
    (datetime.timedelta(seconds=5400), True)
    >>> parse_duration("1w", "k").days
    7
    """
    if isinstance(value, timedelta):
        seconds: float | None = value.total_seconds()
    elif isinstance(value, bool):
        seconds = None
    elif isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str):
        text = value.strip().replace(" ", "")
        try:
            seconds = float(text)
        except ValueError:
            seconds = _unit_terms(text.lower()) if text[:1] not in "pP" else _iso(text)
    else:
        seconds = None
    span = None
    # "nan", "inf" and spans past timedelta's range (999999999 days) are refused too
    if seconds is not None and math.isfinite(seconds) and seconds >= 0:
        with contextlib.suppress(OverflowError):
            span = timedelta(seconds=seconds)
    if span is None or (not span and not allow_zero):
        what = "a non-negative" if allow_zero else "a positive"
        name = key if "`" in key else f"`{key}`"
        raise ConfigError(f"{name} = {value!r} is not {what} duration: write e.g. {EXAMPLES}.")
    return span


def human(span: timedelta) -> str:
    """`timedelta(hours=24)` -> "24h", `timedelta(minutes=90)` -> "90m", else seconds.

    >>> human(timedelta(days=1)), human(timedelta(seconds=5400)), human(timedelta(seconds=45))
    ('24h', '90m', '45s')
    """
    seconds = span.total_seconds()
    for unit, size in (("h", 3600.0), ("m", 60.0)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g}{unit}"
    return f"{seconds:g}s"
