"""`--peer`: run the same workload through dlt-ops 0.1.0 from PyPI, in its own venv.

The venv (bench/.peer-venv) gets `dlt-ops==0.1.0` with the same dlt and DuckDB versions as
ours, so both tools read the warehouse through the same engine. Nothing here fakes a number:
when the package cannot be installed or its API differs, the reason is reported instead.
"""

from __future__ import annotations

import json
import subprocess
import sys
import venv
from pathlib import Path
from typing import Any

from bench.project import BENCH_DIR, Workload

PEER = "dlt-ops==0.1.0"
VENV_DIR = BENCH_DIR / ".peer-venv"
RUNNER = BENCH_DIR / "peer_runner.py"


class PeerUnavailable(RuntimeError):
    """The peer could not be installed or run; the message says why."""


def _python() -> Path:
    return VENV_DIR / "bin" / "python"


def _pins() -> list[str]:
    """Our dlt, DuckDB and sqlglot versions: the same engine on both sides."""
    from importlib.metadata import version

    return [f"{name}=={version(name)}" for name in ("dlt", "duckdb", "sqlglot")]


def ensure_venv(log: Any = print) -> Path:
    """Create bench/.peer-venv with the peer installed (once); return its python."""
    python = _python()
    stamp = VENV_DIR / ".installed"
    wanted = " ".join([PEER, *_pins()])
    if stamp.exists() and stamp.read_text() == wanted:
        return python
    log(f"creating {VENV_DIR} with {wanted}")
    venv.create(VENV_DIR, with_pip=True, clear=True)
    proc = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", PEER, *_pins()],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-6:])
        raise PeerUnavailable(f"`pip install {wanted}` failed in {VENV_DIR}:\n{tail}")
    stamp.write_text(wanted)
    return python


def run_peer(
    workload: Workload, modes: list[str], repeats: int, *, cold_import: bool, log: Any = print
) -> dict[str, Any]:
    """Time `modes` through the peer's public API (reconcile_source, detect_removal)."""
    python = ensure_venv(log)
    proc = subprocess.run(
        [str(python), str(RUNNER), str(workload.root), ",".join(modes), str(repeats),
         "1" if cold_import else "0"],
        cwd=workload.root,
        env=workload.env(),
        capture_output=True,
        text=True,
    )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = "\n".join(proc.stderr.strip().splitlines()[-8:])
        raise PeerUnavailable(f"the peer run failed (exit {proc.returncode}):\n{tail}")
    try:
        data: dict[str, Any] = json.loads(lines[-1])
    except ValueError as exc:
        raise PeerUnavailable(f"the peer runner printed no JSON: {lines[-1][:200]}") from exc
    if {"additive", "removal"} <= set(data["modes"]) and "both" not in data["modes"]:
        data["modes"]["both"] = summed(data["modes"]["additive"], data["modes"]["removal"])
    return data


def summed(additive: dict[str, Any], removal: dict[str, Any]) -> dict[str, Any]:
    """The peer has no combined sweep: `both` is its two calls back to back, so their sum
    (as the issue adds its 44.6 s and 59.1 s)."""
    queries: dict[str, int] = {}
    for row in (additive, removal):
        for kind, n in row["queries"].items():
            queries[kind] = queries.get(kind, 0) + n
    return {
        "min": round(additive["min"] + removal["min"], 4),
        "median": round(additive["median"] + removal["median"], 4),
        "queries": queries,
        "findings": {**additive["findings"], **removal["findings"]},
        "errors": additive["errors"] + removal["errors"],
        "summed": True,
    }


if __name__ == "__main__":  # `python -m bench.peer`: just build the venv
    print(ensure_venv())
    sys.exit(0)
