"""Acknowledgements: drift a team has seen and accepted stays quiet until its expiry.

An acknowledgement names one finding by its id (stable across runs for the same source,
table, detector and columns) and lives in `.dlt/contract_ops_acks.toml`, a reviewable file
meant to be committed: its history is the audit trail. An acknowledged finding is still
reported (with its `ack`), but not sent to the sinks and not counted by `--fail-on-drift`.
When the drift changes (another column, another kind) the finding's id changes and the
acknowledgement does not cover it. An acknowledgement also records what the finding said when
it was given (`content`, `digest`, `summary`: `model.content`) and covers the same content or
narrower only: a new category, metric, rule or type under the same id is new drift that
alerts. An entry without `content` (written before) covers its id whatever the content. An
expired acknowledgement alerts again once, saying so.

What an id stands for (`ack ID` records it, `validate` tells an orphaned acknowledgement
from a live one by it) comes from the finding index (`history.index.known_findings`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dlt_contract_ops.errors import ConfigError
from dlt_contract_ops.model.content import covers, finding_content, grew
from dlt_contract_ops.model.findings import DriftFinding
from dlt_contract_ops.settings.duration import parse_duration
from dlt_contract_ops.statefile import locked, read_utf8, state_dir, write_text

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

ACKS_FILE = Path(".dlt") / "contract_ops_acks.toml"
log = logging.getLogger("dlt_contract_ops")
_ID = re.compile(r"[0-9a-f]{12}")


def _utc(moment: dt.datetime) -> dt.datetime:
    return moment.replace(tzinfo=dt.timezone.utc) if moment.tzinfo is None else moment


def parse_until(value: str, now: dt.datetime) -> dt.datetime:
    """`--until`: a date (`2026-12-31`, through the end of that day, UTC), a date-time, or a
    duration from now (`14d`, `1w`, `PT12H`)."""
    text = value.strip()
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        pass
    else:
        return dt.datetime.combine(day, dt.time.max, tzinfo=dt.timezone.utc).replace(
            microsecond=0
        )
    try:
        return _utc(dt.datetime.fromisoformat(text.replace("Z", "+00:00")))
    except ValueError:
        pass
    try:
        return (now + parse_duration(text, "--until")).replace(microsecond=0)
    except OverflowError:  # `99999999d`: a duration, but past the year 9999
        raise ConfigError(
            f"`--until {value}` ends after the year 9999: give a nearer date or duration."
        ) from None
    except ConfigError:
        raise ConfigError(
            f"`--until {value}` is neither a date (2026-12-31), a date-time nor a duration "
            "(14d, 1w, PT12H)."
        ) from None


@dataclass(frozen=True)
class Ack:
    """One acknowledgement as the file holds it."""

    id: str
    until: dt.datetime
    reason: str
    by: str
    created: dt.datetime
    source: str | None = None
    table: str | None = None
    detector: str | None = None
    columns: tuple[str, ...] = ()
    #: what the finding said when acknowledged (`model.content`); None: an entry written
    #: before content was recorded, which covers its id whatever the content
    content: tuple[str, ...] | None = None
    digest: str | None = None
    #: one line for the person reviewing the file
    summary: str | None = None

    def expired(self, now: dt.datetime) -> bool:
        return now >= self.until

    def document(self) -> dict[str, Any]:
        """`{id, until, reason, by, created}` with ISO-8601 times (the JSON `ack` object)."""
        return {
            "id": self.id,
            "until": self.until.isoformat(),
            "reason": self.reason,
            "by": self.by,
            "created": self.created.isoformat(),
        }


def _as_time(value: Any, where: str) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return _utc(value)
    if isinstance(value, dt.date):
        return dt.datetime.combine(value, dt.time.max, tzinfo=dt.timezone.utc)
    if isinstance(value, str):
        try:
            return _utc(dt.datetime.fromisoformat(value.replace("Z", "+00:00")))
        except ValueError:
            pass
    raise ConfigError(f"{where} must be a date-time, got {value!r}.")


def read_acks(path: Path) -> tuple[list[Ack], list[str]]:
    """The acknowledgements in `path` and the problems of the entries that are malformed
    (each naming the file and the entry). A missing file holds none."""
    try:
        doc = tomllib.loads(read_utf8(path, ConfigError, ": save it as UTF-8."))
    except FileNotFoundError:
        return [], []
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"`{path}` is not valid TOML: {exc}.") from exc
    entries = doc.get("acks", [])
    if not isinstance(entries, list):
        return [], [f"`{path}`: `acks` must be an array of tables (`[[acks]]`)."]
    acks: list[Ack] = []
    problems: list[str] = []
    for i, entry in enumerate(entries):
        where = f"`{path}` entry {i + 1}"
        try:
            if not isinstance(entry, Mapping):
                raise ConfigError(f"{where} must be a table.")
            ack_id = entry.get("id")
            if not isinstance(ack_id, str) or not _ID.fullmatch(ack_id):
                raise ConfigError(f"{where}: `id` must be a 12-character finding id.")
            for key in ("reason", "by"):
                if not isinstance(entry.get(key), str) or not entry[key].strip():
                    raise ConfigError(f"{where} (`{ack_id}`): `{key}` must be a non-empty text.")
            columns = entry.get("columns", [])
            content = entry.get("content")
            if content is not None and not (
                isinstance(content, list) and all(isinstance(c, str) for c in content)
            ):
                raise ConfigError(f"{where} (`{ack_id}`): `content` must be a list of texts.")
            acks.append(Ack(
                id=ack_id,
                until=_as_time(entry.get("until"), f"{where} (`{ack_id}`): `until`"),
                reason=entry["reason"],
                by=entry["by"],
                created=_as_time(entry.get("created"), f"{where} (`{ack_id}`): `created`"),
                source=entry.get("source"),
                table=entry.get("table"),
                detector=entry.get("detector"),
                columns=tuple(str(c) for c in columns) if isinstance(columns, list) else (),
                content=None if content is None else tuple(content),
                digest=entry.get("digest") if isinstance(entry.get("digest"), str) else None,
                summary=entry.get("summary") if isinstance(entry.get("summary"), str) else None,
            ))
        except ConfigError as exc:
            problems.append(str(exc))
    return acks, problems


def _render(acks: Sequence[Ack]) -> str:
    import tomlkit

    doc = tomlkit.document()
    doc.add(tomlkit.comment(
        "Acknowledged drift (dlt-contract-ops ack/unack). Commit this file: its history is "
        "the audit trail."
    ))
    table = tomlkit.aot()
    for ack in sorted(acks, key=lambda a: (a.created, a.id)):
        entry = tomlkit.table()
        entry["id"] = ack.id
        for key in ("source", "table", "detector"):
            value = getattr(ack, key)
            if value:
                entry[key] = value
        if ack.columns:
            entry["columns"] = list(ack.columns)
        if ack.summary:
            entry["summary"] = ack.summary
        if ack.content is not None:
            entry["content"] = list(ack.content)
            if ack.digest:
                entry["digest"] = ack.digest
        entry["until"] = ack.until
        entry["reason"] = ack.reason
        entry["by"] = ack.by
        entry["created"] = ack.created
        table.append(entry)
    doc["acks"] = table
    return tomlkit.dumps(doc)


def _lock_path(path: Path) -> Path:
    """The lock lives in dlt's data dir, not beside the committed file."""
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    return state_dir() / "locks" / f"acks-{digest}"


def add_ack(path: Path, ack: Ack, *, lock_timeout: float = 10.0) -> None:
    """Add (or replace, same id) one acknowledgement; safe under concurrent `ack` commands,
    each waiting up to `lock_timeout` seconds for the others."""
    with locked(_lock_path(path), lock_timeout):
        acks, problems = read_acks(path)
        if problems:
            raise ConfigError(" ".join(problems) + " Fix the file before adding to it.")
        write_text(path, _render([a for a in acks if a.id != ack.id] + [ack]))


def remove_ack(path: Path, ack_id: str, *, lock_timeout: float = 10.0) -> bool:
    """Remove the acknowledgement of `ack_id`; whether there was one."""
    with locked(_lock_path(path), lock_timeout):
        acks, problems = read_acks(path)
        if problems:
            raise ConfigError(" ".join(problems) + " Fix the file first.")
        kept = [a for a in acks if a.id != ack_id]
        if len(kept) == len(acks):
            return False
        write_text(path, _render(kept))
        return True


class AckBook:
    """The project's acknowledgements at one moment: which finding each covers."""

    def __init__(
        self, acks: Sequence[Ack], now: dt.datetime, error: str | None = None
    ) -> None:
        self.now = now
        self._by_id = {a.id: a for a in acks}
        #: why the file could not be read (then nothing is acknowledged): a run reports it
        self.error = error

    def get(self, finding_id: str) -> Ack | None:
        return self._by_id.get(finding_id)

    def stamp(self, finding: DriftFinding) -> DriftFinding:
        """`finding` carrying the acknowledgement that covers it (`ack`, with `expired`), or
        unchanged when none does: the one rule the emitter (an unexpired one is not sent) and
        the results (`ack` in every output) apply. An acknowledgement covers its finding's id
        with the content it recorded, or narrower; one without content, the id alone."""
        ack = self._by_id.get(finding.id)
        if ack is None:
            return finding
        if ack.content is not None:
            content = finding_content(finding)
            if not covers(ack.content, content):
                log.info(
                    "acknowledgement `%s` covers %s only; the finding now also says %s: "
                    "alerted as new drift", ack.id, "; ".join(ack.content) or "nothing",
                    "; ".join(grew(ack.content, content)),
                )
                return finding
        return finding.model_copy(
            update={"ack": {**ack.document(), "expired": ack.expired(self.now)}}
        )

    def covers(self, finding_id: str) -> bool:
        """An unexpired acknowledgement names `finding_id` (its content aside: `stamp`)."""
        ack = self._by_id.get(finding_id)
        return ack is not None and not ack.expired(self.now)

    def __len__(self) -> int:
        return len(self._by_id)


def load_book(project_dir: str | os.PathLike[str], now: dt.datetime | None = None) -> AckBook:
    """The acknowledgements of the project (malformed entries are skipped here; `validate`
    reports them). A file that cannot be read at all acknowledges nothing: one broken file
    must not silence every alert. The book carries its error, for the run to report."""
    moment = now or dt.datetime.now(dt.timezone.utc)
    path = Path(project_dir) / ACKS_FILE
    try:
        acks, _ = read_acks(path)
    except (ConfigError, OSError) as exc:
        why = str(exc) if isinstance(exc, ConfigError) else f"`{path}` cannot be read: {exc}."
        return AckBook([], moment, error=(
            f"{why} Alerts were sent as if nothing were acknowledged: fix the file "
            "(`dlt-contract-ops validate` names its problems)."
        ))
    return AckBook(acks, moment)
