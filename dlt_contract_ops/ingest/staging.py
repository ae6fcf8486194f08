"""Where a gated batch lives until it is accepted: a staging pipeline of its own.

The gate never extracts into the user's pipeline. It extracts and normalizes into a *staging*
pipeline: the same name, destination and dataset, in a working folder of its own next to the
real one (`<pipelines_dir>/.contract_ops_gate/<pipeline>/<pid>-<random>/`), seeded with a copy
of the real pipeline's state and schemas so incremental cursors start where the real pipeline
is. A rejected, failed or interrupted batch (an exception, Ctrl-C, SIGTERM, SIGKILL, a power
cut) therefore never exists as a package of the user's pipeline: a later plain `pipeline.run()`
cannot load it, because there is nothing of it to load.

Only an accepted batch is handed over, already normalized, in dlt's own order (its extract
commits the package, then saves the state): the package folder is renamed into the real
pipeline's `load/normalized/` (one atomic rename on the same file system, the commit point),
then the staged schemas and state are installed with dlt's own routine. A journal written
before the rename lets the next gate finish a hand-over a crash cut between those two steps.

One gate at a time per pipeline: a lock file beside the staging folders, waited on for a
bounded time. Staging folders left by a killed gate are deleted by the next one, under the lock.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dlt_contract_ops.dlt_private as dlt_private
from dlt_contract_ops.errors import GateBusyError
from dlt_contract_ops.statefile import write_text

#: how long a second gate on the same pipeline waits for the first (seconds)
DEFAULT_GATE_LOCK_TIMEOUT = 60.0
_JOURNAL = "contract_ops_gate_handover.json"


def gate_root(pipeline: Any) -> Path:
    """The folder of the pipeline's staging pipelines and its gate lock."""
    return Path(pipeline.pipelines_dir) / ".contract_ops_gate" / str(pipeline.pipeline_name)


@contextlib.contextmanager
def gate_lock(pipeline: Any, timeout: float = DEFAULT_GATE_LOCK_TIMEOUT) -> Iterator[Path]:
    """Hold the pipeline's gate lock; clear staging folders a killed gate left; yield the root."""
    from filelock import FileLock, Timeout

    root = gate_root(pipeline)
    root.mkdir(parents=True, exist_ok=True)
    lock = FileLock(root / "gate.lock", timeout=timeout)
    try:
        lock.acquire()
    except Timeout:
        raise GateBusyError(
            f"Another gate is running on pipeline `{pipeline.pipeline_name}` (lock "
            f"`{root / 'gate.lock'}` held for more than {timeout:g}s). Its batch and this one "
            "are both untouched; run this batch again once the other gate has finished."
        ) from None
    try:
        for stale in root.iterdir():
            if stale.is_dir():
                shutil.rmtree(stale, ignore_errors=True)
        finish_handover(pipeline)
        yield root
    finally:
        lock.release()


@contextlib.contextmanager
def staging_pipeline(pipeline: Any, root: Path) -> Iterator[Any]:
    """A pipeline of the same name, destination and dataset as `pipeline`, in a folder of its
    own seeded with `pipeline`'s state and schemas; deleted on the way out, whatever happens."""
    import dlt

    folder = root / f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
    working = folder / str(pipeline.pipeline_name)
    working.mkdir(parents=True)
    try:
        real = Path(pipeline.working_dir)
        state = real / "state.json"
        if state.is_file():
            doc = json.loads(state.read_text(encoding="utf-8"))
            # the staging pipeline is never in dev mode: dev mode wipes its folder
            doc.setdefault("_local", {})["_dev_mode"] = False
            (working / "state.json").write_text(json.dumps(doc), encoding="utf-8")
            if (real / "schemas").is_dir():
                shutil.copytree(real / "schemas", working / "schemas")
        staged = dlt.pipeline(
            pipeline_name=pipeline.pipeline_name,
            pipelines_dir=str(folder),
            destination=pipeline.destination,
            staging=pipeline.staging,
            dataset_name=pipeline.dataset_name,
            import_schema_path=dlt_private.import_schema_path(pipeline),  # type: ignore[arg-type]  # dlt's default is None too
            dev_mode=False,
            progress=pipeline.collector,
        )
        yield staged
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def hand_over(pipeline: Any, staged: Any) -> None:
    """Give `pipeline` the staged, normalized packages and the staged state and schemas."""
    from dlt.common.versioned_state import json_encode_state

    load_ids = list(staged.list_normalized_load_packages())
    source = dlt_private.normalized_folder(staged)
    target = dlt_private.normalized_folder(pipeline, create=True)  # a first run has none
    journal = Path(pipeline.working_dir) / _JOURNAL
    state = staged.state  # read from its file: a copy of its own
    doc = {
        "load_ids": load_ids,
        "state": json_encode_state(state),
        "schemas": {name: staged.schemas[name].to_dict() for name in staged.schema_names},
    }
    write_text(journal, json.dumps(doc))
    for load_id in load_ids:
        os.rename(source / load_id, target / load_id)  # the commit point
    _install(pipeline, state, [staged.schemas[name] for name in staged.schema_names])
    journal.unlink()


def finish_handover(pipeline: Any) -> None:
    """Complete a hand-over a crash cut short: when its packages reached the pipeline, install
    the state and schemas that go with them; when none did, nothing happened and the journal
    goes."""
    from dlt.common.schema import Schema
    from dlt.common.versioned_state import json_decode_state

    journal = Path(pipeline.working_dir) / _JOURNAL
    if not journal.is_file():
        return
    try:
        doc = json.loads(journal.read_text(encoding="utf-8"))
    except ValueError:  # cut while being written: the rename after it never ran
        journal.unlink()
        return
    normalized = dlt_private.normalized_folder(pipeline)
    if any((normalized / lid).exists() for lid in doc["load_ids"]):
        schemas = [Schema.from_dict(s) for s in doc["schemas"].values()]
        _install(pipeline, json_decode_state(doc["state"]), schemas)
    journal.unlink()


def _install(pipeline: Any, state: Any, schemas: list[Any]) -> None:
    """Install a (state, schemas) pair into the pipeline's working folder, dev mode kept."""
    state.setdefault("_local", {})["_dev_mode"] = bool(pipeline.dev_mode)
    dlt_private.install_state_and_schemas(pipeline, state, schemas)


def accepted_ids(root: Path) -> set[str]:
    """Load ids of packages a gate handed over (checked and accepted)."""
    try:
        return set(json.loads((root / "accepted.json").read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return set()


def record_accepted(root: Path, load_ids: list[str], pending: set[str]) -> None:
    """Remember packages about to be handed over until they are loaded: ids no longer
    `pending` in the pipeline were loaded (or dropped) and are forgotten."""
    kept = accepted_ids(root) & pending
    write_text(root / "accepted.json", json.dumps(sorted(kept | set(load_ids))))
