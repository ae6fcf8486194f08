"""The finding index: one JSON line per sweep, appended, never rewritten.

`<dlt data dir>/contract_ops/findings/<project>-<hash>.sweeps.jsonl`, beside the id index
`ack` reads (`acks/store.py`): each line is `{"at": ISO time, "ids": [finding ids]}`. Every
`reconcile` that is not a dry run appends its line (a sweep with no finding too: it counts as
a sweep that saw none); a dry run and `report` only read it, so trying things out never
changes the history a team relies on. Appends hold `statefile.locked`; a line cut short by a
crash is skipped when read, and so is a line that is not UTF-8 (with a warning naming the file
and line): the other sweeps still count.

Sweeps older than `core.history.RAW_DAYS` are folded into one first line,
`{"folded": {"until": ISO time, "sweeps": N, "seen": {id: [first, last, sweeps]}}}`, by the
append that finds the oldest recorded sweep a week past that (the file is rewritten beside
itself and swapped in, under the same lock), so an hourly cron's index stays about three
months of lines however long it runs.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path

from dlt_contract_ops.core.history import (
    DEFAULT_TIMELINE_DAYS,
    FOLD_SLACK_DAYS,
    FORGET_DAYS,
    RAW_DAYS,
    Folded,
    History,
    Seen,
    Sweep,
    fold,
    summarize,
)
from dlt_contract_ops.statefile import locked, project_key, read_lines, state_dir

log = logging.getLogger("dlt_contract_ops")
SUFFIX = ".sweeps.jsonl"


def index_file(project_dir: str | os.PathLike[str]) -> Path:
    """Where the project's sweeps are recorded (dlt's data dir of the current run context)."""
    return state_dir() / "findings" / f"{project_key(project_dir)}{SUFFIX}"


def record_sweep(
    project_dir: str | os.PathLike[str], ids: Sequence[str], at: datetime | None = None
) -> None:
    """Append one sweep's finding ids (in order, once each) to the index."""
    path = index_file(project_dir)
    moment = (at or datetime.now(timezone.utc)).astimezone(timezone.utc)
    line = _sweep_line(moment, ids)
    with locked(path):
        _append(path, line)
        oldest = _oldest_sweep(path)
        if oldest is not None and oldest < moment - timedelta(days=RAW_DAYS + FOLD_SLACK_DAYS):
            _fold_file(path, moment)


def _append(path: Path, line: str) -> None:
    with open(path, "a+b") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell():  # a line a crash cut short must not swallow this one
            fh.seek(-1, os.SEEK_END)
            torn = fh.read(1) != b"\n"
            fh.seek(0, os.SEEK_END)
            if torn:
                fh.write(b"\n")
        fh.write(line.encode() + b"\n")
        fh.flush()
        os.fsync(fh.fileno())


def _iso(at: datetime) -> str:
    return at.isoformat(timespec="seconds")


def _at(text: str) -> datetime:
    at = datetime.fromisoformat(text)
    return at if at.tzinfo else at.replace(tzinfo=timezone.utc)


def _sweep_line(at: datetime, ids: Sequence[str]) -> str:
    return json.dumps({"at": _iso(at), "ids": list(dict.fromkeys(ids))}, separators=(",", ":"))


def _folded_line(folded: Folded) -> str:
    seen = {i: [_iso(v.first), _iso(v.last), v.sweeps] for i, v in folded.seen.items()}
    return json.dumps({"folded": {"until": _iso(folded.until), "sweeps": folded.sweeps,
                                  "seen": seen}}, separators=(",", ":"))


def _parse(text: str) -> Sweep | Folded:
    doc = json.loads(text)
    if "folded" in doc:
        f = doc["folded"]
        return Folded(_at(f["until"]), int(f["sweeps"]), {
            str(i): Seen(_at(first), _at(last), int(n)) for i, (first, last, n) in
            f["seen"].items()})
    return Sweep(_at(doc["at"]), tuple(str(i) for i in doc["ids"]))


def _read(path: Path) -> tuple[Folded | None, list[Sweep]]:
    """The folded summary (if any) and the sweeps recorded as they are."""
    folded: Folded | None = None
    sweeps: list[Sweep] = []
    for number, text in read_lines(path):
        try:
            item = _parse(text)
        except (ValueError, KeyError, TypeError, AttributeError):
            if text.strip():
                log.debug("%s line %d skipped: not a sweep", path, number)
            continue
        if isinstance(item, Folded):
            folded = item
        else:
            sweeps.append(item)
    return folded, sweeps


def _oldest_sweep(path: Path) -> datetime | None:
    """The time of the first recorded sweep (not the folded line): two lines read at most."""
    for number, text in read_lines(path):
        if number > 2:
            break
        if text.startswith('{"folded"'):
            continue  # not parsed on every append: it may hold a year of finding ids
        try:
            item = _parse(text)
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        if isinstance(item, Sweep):
            return item.at
    return None


def _fold_file(path: Path, now: datetime) -> None:
    """Fold the sweeps older than `RAW_DAYS` into the first line (the caller holds the lock):
    written beside the index, synced, then swapped in, so a crash leaves the old or the new."""
    folded, sweeps = _read(path)
    folded, kept = fold(folded, sweeps, now - timedelta(days=RAW_DAYS),
                        now - timedelta(days=FORGET_DAYS))
    lines = [_folded_line(folded), *(_sweep_line(s.at, s.ids) for s in kept)]
    temp = path.with_name(path.name + ".fold")
    with open(temp, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(temp, path)
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_history(
    project_dir: str | os.PathLike[str], now: datetime | None = None, *,
    days: int = DEFAULT_TIMELINE_DAYS,
) -> History:
    """The recorded sweeps summarized (`core.history.summarize`); empty without an index."""
    moment = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    folded, sweeps = _read(index_file(project_dir))
    return summarize(sweeps, moment, days=days, folded=folded)
