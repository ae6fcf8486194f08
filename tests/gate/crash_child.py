"""A gated run in a process of its own that a real signal stops at a chosen point.

    python -m tests.gate.crash_child KIND DATASET FOLDER POINT SIGNAL ROWS

The batch is ROWS rows of the 2026-03-18 slice that add an unapproved `currency` column, so
the gate rejects it while dlt would load every row: exactly the batch that must never reach
the trusted table. POINT picks where the process signals itself (`extract`: halfway through
the source's rows; `observe`, `compare`, `quarantine`: as the gate enters that step;
`handover`: after an *accepted* batch's package is renamed into the pipeline, before its
state and schemas are installed).
SIGNAL is KILL, TERM or INT, sent with `os.kill` to this very process.

The tests start it with `forked` (a fork of their own warm process: dlt is imported already,
so a child costs a fraction of a fresh interpreter); the command line above runs it alone.
"""

from __future__ import annotations

import os
import signal
import sys
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dlt

from dlt_contract_ops import gated_run
from dlt_contract_ops.core.ingest import GatePolicy
from dlt_contract_ops.ingest import run as gate_run
from tests.gate.seed import D18, MERGE, Order

PG = "postgresql://postgres:x@127.0.0.1:5432/test"


def destination(kind: str, folder: Path) -> Any:
    if kind == "duckdb":
        return dlt.destinations.duckdb(str(folder / "warehouse.duckdb"))
    return dlt.destinations.postgres(PG)


def main(kind: str, dataset: str, folder: str, point: str, sig: str, rows: int) -> None:
    # what an interactive shell gives a process; a test runner may start us with SIGINT ignored
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signum = getattr(signal, f"SIG{sig}")

    def stop() -> None:
        os.kill(os.getpid(), signum)
        raise SystemExit(f"still alive after SIG{sig}")  # only SIGINT's handler gets here

    accepted = point == "handover"

    def batch() -> Iterator[dict[str, Any]]:
        for i in range(rows):
            if point == "extract" and i == rows // 2:
                stop()
            row = {"order_id": f"x-{i}", "order_date": D18, "channel": "web",
                   "amount_cents": 1}
            if not accepted:
                row["currency"] = "EUR"
            yield row

    def at(name: str, module: Any) -> None:
        inner = getattr(module, name)

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            stop()
            return inner(*args, **kwargs)

        setattr(module, name, wrapped)

    def after_handover(working_dir: str) -> None:
        """Signal as the process, having renamed packages into the pipeline's folder from
        outside it (the hand-over's commit point), next opens any file (the state and schemas
        it installs after): seen through Python's audit hooks, the gate itself untouched."""
        inside = os.path.join(working_dir, "")
        renamed = False

        def hook(event: str, args: tuple[Any, ...]) -> None:
            nonlocal renamed
            if event == "os.rename":
                src, dst = os.fsdecode(args[0]), os.fsdecode(args[1])
                renamed = renamed or (dst.startswith(inside) and not src.startswith(inside))
            elif event == "open" and renamed:
                renamed = False
                stop()

        sys.addaudithook(hook)

    pipeline = dlt.pipeline("orders_gate", destination=destination(kind, Path(folder)),
                            dataset_name=dataset)
    if point in ("observe", "compare", "quarantine"):
        at(point, gate_run)
    elif point == "handover":  # the packages are renamed in; state and schemas are not
        after_handover(pipeline.working_dir)
    resource = dlt.resource(batch(), name="orders", columns=Order, write_disposition=MERGE,
                            merge_key="order_date")
    gated_run(pipeline, resource, policy=GatePolicy(allow_nullable_additions=False),
              quarantine_dir=Path(folder) / "quarantine")
    raise SystemExit("the gate finished: the crash point was never reached")


def forked(kind: str, dataset: str, folder: Path, point: str, sig: str, rows: int,
           timeout: float = 600) -> tuple[int, str]:
    """`main` in a fork of this process: (its exit code as `subprocess` reports it, minus the
    signal's number when one stopped it; what it wrote to stderr). The child leaves only by
    the signal or `os._exit`, never back into the caller; what escapes `main` ends it as it
    ends an interpreter: the traceback (or the `SystemExit` message) on stderr, exit code 1."""
    log = folder / f"crash-{point}-{sig}.stderr"
    pid = os.fork()
    if pid == 0:  # the child
        code = 70
        try:
            fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            sys.stdout = sys.stderr = open(fd, "w", buffering=1)  # noqa: SIM115  os._exit below
            signal.signal(signal.SIGTERM, signal.SIG_DFL)  # as a fresh interpreter has it
            main(kind, dataset, str(folder), point, sig, rows)
        except SystemExit as exc:
            print(exc, file=sys.stderr)
            code = 1
        except BaseException:  # as the interpreter reports an uncaught exception
            traceback.print_exc()
            code = 1
        finally:
            sys.stderr.flush()
            os._exit(code)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise TimeoutError(f"the crash child ran over {timeout} s: {log.read_text()}")
        time.sleep(0.02)
    return os.waitstatus_to_exitcode(status), log.read_text()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]))
