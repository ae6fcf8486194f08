"""The finding index: one JSON line per sweep, appended, never rewritten.

`<dlt data dir>/contract_ops/findings/<project>-<hash>.sweeps.jsonl`, beside the id index
`ack` reads (`acks/store.py`): each line is `{"at": ISO time, "ids": [finding ids]}`. Every
`reconcile` that is not a dry run appends its line (a sweep with no finding too: it counts as
a sweep that saw none); a dry run and `report` only read it, so trying things out never
changes the history a team relies on. Appends hold `statefile.locked`; a line cut short by a
crash is skipped when read.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path

from dlt_contract_ops.core.history import DEFAULT_TIMELINE_DAYS, History, Sweep, summarize
from dlt_contract_ops.statefile import locked

log = logging.getLogger("dlt_contract_ops")
SUFFIX = ".sweeps.jsonl"


def index_file(project_dir: str | os.PathLike[str]) -> Path:
    """Where the project's sweeps are recorded (dlt's data dir of the current run context)."""
    import dlt

    from dlt_contract_ops.settings.project import default_state_file

    base = default_state_file(project_dir, dlt.current.run_context().data_dir)
    return base.parent.parent / "findings" / (base.stem + SUFFIX)


def record_sweep(
    project_dir: str | os.PathLike[str], ids: Sequence[str], at: datetime | None = None
) -> None:
    """Append one sweep's finding ids (in order, once each) to the index."""
    path = index_file(project_dir)
    moment = (at or datetime.now(timezone.utc)).astimezone(timezone.utc)
    line = json.dumps({"at": moment.isoformat(timespec="seconds"),
                       "ids": list(dict.fromkeys(ids))}, separators=(",", ":"))
    with locked(path), open(path, "a+b") as fh:
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


def _sweeps(path: Path) -> Iterator[Sweep]:
    try:
        with open(path, encoding="utf-8") as fh:
            for number, text in enumerate(fh, 1):
                try:
                    doc = json.loads(text)
                    at = datetime.fromisoformat(doc["at"])
                    ids = tuple(str(i) for i in doc["ids"])
                except (ValueError, KeyError, TypeError):
                    if text.strip():
                        log.debug("%s line %d skipped: not a sweep", path, number)
                    continue
                yield Sweep(at if at.tzinfo else at.replace(tzinfo=timezone.utc), ids)
    except FileNotFoundError:
        return


def read_history(
    project_dir: str | os.PathLike[str], now: datetime | None = None, *,
    days: int = DEFAULT_TIMELINE_DAYS,
) -> History:
    """The recorded sweeps summarized (`core.history.summarize`); empty without an index."""
    moment = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    return summarize(_sweeps(index_file(project_dir)), moment, days=days)
