"""The finding index: which findings each sweep saw, and what each finding id stands for.

Two line files of one family under `<dlt data dir>/contract_ops/findings/`, written under one
lock (`statefile.locked` of the sweeps file), appended, read line by line (`read_lines`: a
line that is not UTF-8 is skipped with a warning, a line a crash cut short does not parse and
is skipped; the other lines still count):

- `<project>-<hash>.sweeps.jsonl`: one line per sweep, `{"at": ISO time, "ids": [finding
  ids], "sources": [the sources it checked without an error], "detectors": [the detectors it
  ran]}` (a line without `sources`, as older versions wrote, counts for every source; one
  without `detectors` as running every detector: `core.history.Sweep`). Every `reconcile`
  that is not a dry run appends its line (a sweep with no finding too: it counts as a sweep
  that saw none); a dry run and `report` only read it, so trying things out never changes
  the history a team relies on. The report's history and what changed since the sweeps
  (each finding against the last one that ran its detector over its table) read it.
  A shard of a sharded sweep (`reconcile --shard 2/3`) adds `"shard": "2/3"` and `"covered":
  {source: [tables]}`, the tables it looked at (`core.history.Sweep.covers`): N shards
  append N lines, each under the lock, none of them saying anything of another's tables.
- `<project>-<hash>.found.jsonl`: one line per finding id the first time a run (a dry run
  too) finds it, or when what it stands for or says changed: `{"id", "source", "table",
  "detector", "columns", "content", "digest", "summary"}` (`model.content`), the last line
  of an id winning. `ack ID` records what the id stands for and says from it, and `validate`
  tells an orphaned acknowledgement (its drift is gone) from a live one.
  A run whose findings it already holds as they are leaves it alone (no lock, no write), so
  a broken line costs one id until the next run that finds it writes it again.

Sweeps older than `core.history.RAW_DAYS` are folded into one first line,
`{"folded": {"until": ISO time, "sweeps": N, "seen": {id: [first, last, sweeps]}}}`, by the
append that finds the oldest recorded sweep a week past that (the file is rewritten beside
itself and swapped in, under the same lock; the found file is then rewritten with one line an
id), so an hourly cron's index stays about three months of lines however long it runs.

An id index from an older version (`<project>-<hash>.json`, one JSON document) is still read,
and the next run that writes the index moves its ids into the found file and removes it.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

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
from dlt_contract_ops.core.shard import Shard
from dlt_contract_ops.model.content import content_digest, content_summary, finding_content
from dlt_contract_ops.model.findings import DriftFinding
from dlt_contract_ops.statefile import (
    StateFileError,
    locked,
    project_key,
    read_json,
    read_lines,
    state_dir,
    write_text,
)

log = logging.getLogger("dlt_contract_ops")
SUFFIX = ".sweeps.jsonl"
FOUND_SUFFIX = ".found.jsonl"
#: the id index of versions before the found file (one JSON document, rewritten per run)
OLD_SUFFIX = ".json"
#: what the found file records of a finding (besides its id)
DESCRIBED = ("source", "table", "detector", "columns", "content", "digest", "summary")


def _folder() -> Path:
    return state_dir() / "findings"


def index_file(project_dir: str | os.PathLike[str]) -> Path:
    """Where the project's sweeps are recorded (dlt's data dir of the current run context)."""
    return _folder() / f"{project_key(project_dir)}{SUFFIX}"


def found_file(project_dir: str | os.PathLike[str]) -> Path:
    """Where what each of the project's finding ids stands for is recorded."""
    return _folder() / f"{project_key(project_dir)}{FOUND_SUFFIX}"


def describe(finding: DriftFinding) -> dict[str, Any]:
    """What the found file records of `finding`: source, table, detector, columns, and what
    it said (content, its digest, a one-line summary)."""
    content = finding_content(finding)
    return {"source": finding.source, "table": finding.table, "detector": finding.drift_type,
            "columns": list(finding.columns), "content": list(content),
            "digest": content_digest(content), "summary": content_summary(finding)}


def record_run(
    project_dir: str | os.PathLike[str], findings: Iterable[DriftFinding], *, sweep: bool,
    at: datetime | None = None, shard: Shard | None = None,
    covered: Mapping[str, Sequence[str]] | None = None, sources: Sequence[str] | None = None,
    detectors: Sequence[str] | None = None,
) -> None:
    """Record a run's findings: what each id stands for (every run), and, for a `sweep` (not
    a dry run), the sweep's line with the `sources` it checked and the `detectors` it ran (a
    shard's also names its `shard` and the tables it `covered`). A run that adds nothing to
    the found file and is not a sweep takes no lock and writes nothing."""
    found = {f.id: describe(f) for f in findings}
    path = index_file(project_dir)
    if not sweep and not _learns(project_dir, found):
        return
    with locked(path):
        _record_found(project_dir, found)
        if sweep:
            _record_sweep(path, list(found), at, shard, covered, sources, detectors)


def record_sweep(
    project_dir: str | os.PathLike[str], ids: Sequence[str], at: datetime | None = None,
    sources: Sequence[str] | None = None, detectors: Sequence[str] | None = None,
) -> None:
    """Append one sweep's finding ids (in order, once each), the sources it checked and the
    detectors it ran (None: every source, every detector) to the index."""
    path = index_file(project_dir)
    with locked(path):
        _record_sweep(path, ids, at, sources=sources, detectors=detectors)


def _record_sweep(
    path: Path, ids: Sequence[str], at: datetime | None, shard: Shard | None = None,
    covered: Mapping[str, Sequence[str]] | None = None, sources: Sequence[str] | None = None,
    detectors: Sequence[str] | None = None,
) -> None:
    """Append the sweep's line, and fold when the oldest sweep is due (the caller holds the
    lock)."""
    moment = (at or datetime.now(timezone.utc)).astimezone(timezone.utc)
    tables = None if shard is None else tuple(
        (source, tuple(sorted(set(names)))) for source, names in sorted((covered or {}).items()))
    names = None if sources is None else tuple(sorted(set(sources)))
    ran = None if detectors is None else tuple(dict.fromkeys(detectors))
    _append(path, [_sweep_line(Sweep(moment, tuple(ids), shard, tables, names, ran))])
    oldest = _oldest_sweep(path)
    if oldest is not None and oldest < moment - timedelta(days=RAW_DAYS + FOLD_SLACK_DAYS):
        _fold_file(path, moment)
        _compact_found(path.with_name(path.name[: -len(SUFFIX)] + FOUND_SUFFIX))


def known_findings(project_dir: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """Every finding id a run recorded, with what it stands for (`describe`)."""
    known = _read_old(_old_file(project_dir))
    known.update(_read_found(found_file(project_dir)))
    return known


def _learns(project_dir: str | os.PathLike[str], found: Mapping[str, Any]) -> bool:
    """Whether recording `found` would change the found file (or migrate an old index)."""
    if _old_file(project_dir).exists():
        return True
    if not found:
        return False
    known = _read_found(found_file(project_dir))
    return any(known.get(i) != entry for i, entry in found.items())


def _record_found(project_dir: str | os.PathLike[str], found: Mapping[str, Any]) -> None:
    """Append the ids `found` adds or changes; move an old index's ids in (the caller holds
    the lock)."""
    path = found_file(project_dir)
    known = _read_found(path)
    old = _old_file(project_dir)
    moved = {i: e for i, e in _read_old(old).items() if i not in known}
    fresh = {**moved, **{i: e for i, e in found.items() if known.get(i) != e}}
    if fresh:
        _append(path, [_found_line(i, e) for i, e in fresh.items()])
    if old.exists():
        old.unlink()


def _old_file(project_dir: str | os.PathLike[str]) -> Path:
    return _folder() / f"{project_key(project_dir)}{OLD_SUFFIX}"


def _read_old(path: Path) -> dict[str, dict[str, Any]]:
    """The ids of an id index an older version wrote; empty, with a warning, when it cannot
    be read (the next run's findings are recorded all the same)."""
    try:
        found = read_json(path).get("findings")
    except StateFileError as exc:
        log.warning("finding id index unreadable (%s): the next sweep writes it afresh", exc)
        return {}
    if not isinstance(found, dict):
        return {}
    return {str(i): dict(e) for i, e in found.items() if isinstance(e, Mapping)}


def _found_line(finding_id: str, entry: Mapping[str, Any]) -> str:
    # what an entry of an older index lacks (its content) stays out, not null
    doc = {"id": finding_id, **{k: entry[k] for k in DESCRIBED if entry.get(k) is not None}}
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


def _read_found(path: Path) -> dict[str, dict[str, Any]]:
    """id -> what it stands for, the last line of an id winning; lines that do not parse
    skipped."""
    known: dict[str, dict[str, Any]] = {}
    for number, text in read_lines(path):
        try:
            doc = json.loads(text)
            known[str(doc["id"])] = {k: doc[k] for k in DESCRIBED if k in doc}
        except (ValueError, KeyError, TypeError):
            if text.strip():
                log.debug("%s line %d skipped: not a finding", path, number)
    return known


def _compact_found(path: Path) -> None:
    """The found file with one line an id (the caller holds the index's lock)."""
    known = _read_found(path)
    if known:
        write_text(path, "".join(_found_line(i, e) + "\n" for i, e in known.items()))


def _append(path: Path, lines: Sequence[str]) -> None:
    with open(path, "a+b") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell():  # a line a crash cut short must not swallow this one
            fh.seek(-1, os.SEEK_END)
            torn = fh.read(1) != b"\n"
            fh.seek(0, os.SEEK_END)
            if torn:
                fh.write(b"\n")
        fh.write("".join(line + "\n" for line in lines).encode())
        fh.flush()
        os.fsync(fh.fileno())


def _iso(at: datetime) -> str:
    return at.isoformat(timespec="seconds")


def _at(text: str) -> datetime:
    at = datetime.fromisoformat(text)
    return at if at.tzinfo else at.replace(tzinfo=timezone.utc)


def _sweep_line(sweep: Sweep) -> str:
    doc: dict[str, Any] = {"at": _iso(sweep.at), "ids": list(dict.fromkeys(sweep.ids))}
    if sweep.sources is not None:
        doc["sources"] = list(sweep.sources)
    if sweep.detectors is not None:
        doc["detectors"] = list(sweep.detectors)
    if sweep.shard is not None:
        doc["shard"] = str(sweep.shard)
        doc["covered"] = {source: list(tables) for source, tables in sweep.covered or ()}
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


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
    ids = tuple(str(i) for i in doc["ids"])
    listed = doc.get("sources")
    sources = None if listed is None else tuple(str(s) for s in listed)
    ran = doc.get("detectors")
    detectors = None if ran is None else tuple(str(d) for d in ran)
    if "shard" not in doc:
        return Sweep(_at(doc["at"]), ids, sources=sources, detectors=detectors)
    covered = tuple((str(s), tuple(str(t) for t in ts)) for s, ts in doc["covered"].items())
    return Sweep(_at(doc["at"]), ids, Shard.parse(str(doc["shard"])), covered, sources,
                 detectors)


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
    lines = [_folded_line(folded), *(_sweep_line(s) for s in kept)]
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
    return read_sweeps(project_dir, now, days=days)[0]


def read_sweeps(
    project_dir: str | os.PathLike[str], now: datetime | None = None, *,
    days: int = DEFAULT_TIMELINE_DAYS,
) -> tuple[History, list[Sweep]]:
    """`read_history`, and the sweeps recorded as they are, oldest first (folded ones are
    not: the append that folds keeps its own sweep and the last `RAW_DAYS`), from one read
    of the index."""
    moment = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    folded, sweeps = _read(index_file(project_dir))
    return (summarize(sweeps, moment, days=days, folded=folded),
            sorted(sweeps, key=lambda s: s.at))
