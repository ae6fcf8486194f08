"""Time zones by IANA identity: `UTC`, `Etc/UTC` and `Zulu` are one zone, `GMT` is another.

Two names are the same zone when the time zone database holds the same rules under both (a
link such as `US/Eastern` → `America/New_York`), read through `zoneinfo`'s own search path.
Fixed offsets are written `+05:30`; `Z` and `+00:00` are UTC (RFC 3339). `-00:00` keeps its
RFC 3339 meaning, "offset unknown", and equals only itself; so does `local`, a wall-clock time
whose zone nobody promises (declared, so that losing a real zone is a visible change). Any
other text (`local_no_offset`, a misspelled `Europe/Berln`) is still the zone a model declared:
it is recorded as written and equals only itself (`same_timezone`); `contract lint` says what
to write instead (`timezone_advice`).

Reads the time zone database when asked (never on import); the answers are cached.
"""

from __future__ import annotations

import functools
import hashlib
import re
import zoneinfo
from importlib import resources
from pathlib import Path

from dlt_contract_ops.errors import did_you_mean

_OFFSET = re.compile(r"^([+-])(\d{2}):?(\d{2})$")
_UTC_SPELLINGS = frozenset({"Z", "+00:00", "+0000", "+00"})


class TimezoneError(ValueError):
    """A time zone that is neither an IANA name nor a fixed offset."""


def timezone_identity(name: str) -> str:
    """A key equal for two spellings of one zone; TimezoneError for an unknown name.

    >>> timezone_identity("UTC") == timezone_identity("Etc/UTC") == timezone_identity("Z")
    True
    >>> timezone_identity("UTC") == timezone_identity("GMT")
    False
    """
    text = name.strip()
    if text == "local":
        return "local"
    if text in _UTC_SPELLINGS:
        text = "UTC"
    offset = _OFFSET.match(text)
    if offset is not None:
        sign, hours, minutes = offset.groups()
        return f"offset:{sign}{hours}:{minutes}"
    return "tzif:" + _tzif_digest(text)


def same_timezone(a: str | None, b: str | None) -> bool:
    """Whether two declared zones are one zone (exact text when either is unknown).

    >>> same_timezone("UTC", "Etc/UTC"), same_timezone("UTC", "local_no_offset")
    (True, False)
    """
    if a is None or b is None:
        return a is b
    try:
        return timezone_identity(a) == timezone_identity(b)
    except TimezoneError:
        return a.strip() == b.strip()


def timezone_advice(text: str) -> str | None:
    """What to write instead of a zone that is neither an IANA name, a fixed offset nor
    `local`; None for one that is.

    >>> timezone_advice("UTC") is None, timezone_advice("utc").endswith("Did you mean `UTC`?")
    (True, True)
    >>> "Did you mean `local`" in timezone_advice("local_no_offset")
    True
    """
    try:
        timezone_identity(text)
    except TimezoneError as exc:
        zone = text.strip()
        if _hint(zone).startswith(". Use") and "local" in zone.casefold():
            return (f"`{zone}` is not an IANA time zone (compared by its exact text). Did you "
                    "mean `local`, a wall-clock time in no promised zone?")
        return str(exc).replace(" time zone", " time zone (compared by its exact text)", 1)
    return None


@functools.lru_cache(maxsize=512)
def _tzif_digest(key: str) -> str:
    # only the database's own zone names: not `localtime` or whatever else a machine keeps
    data = _tzif_bytes(key) if key in _known() else None
    if data is None:
        raise TimezoneError(f"`{key}` is not an IANA time zone{_hint(key)}")
    return hashlib.sha256(data).hexdigest()


def _tzif_bytes(key: str) -> bytes | None:
    # the same search order as zoneinfo: TZPATH first, then the tzdata package
    for root in zoneinfo.TZPATH:
        path = Path(root, key)
        if path.is_file():
            return path.read_bytes()
    try:
        return resources.files("tzdata.zoneinfo").joinpath(*key.split("/")).read_bytes()
    except (ModuleNotFoundError, FileNotFoundError, IsADirectoryError):
        return None


_NOT_ZONES = frozenset({"localtime", "posixrules", "Factory"})


@functools.lru_cache(maxsize=1)
def _known() -> frozenset[str]:
    # a system database may also list the machine's own `localtime` and the `posix/` and
    # `right/` (leap second) trees: none of them names a zone a contract can promise
    return frozenset(
        k for k in zoneinfo.available_timezones()
        if k not in _NOT_ZONES and not k.startswith(("posix/", "right/"))
    )


def _hint(key: str) -> str:
    known = sorted(_known())
    # a zone in the wrong case is the one to suggest, however far apart the letters are
    same = [k for k in known if k.casefold() == key.casefold()]
    hint = did_you_mean(key, same, cutoff=0.0) if same else did_you_mean(key, known, cutoff=0.8)
    if hint:
        return "." + hint
    return (
        ". Use an IANA name (`UTC`, `Europe/Berlin`), a fixed offset (`+05:30`), or `local` for "
        "a wall-clock time in no promised zone."
    )
