"""`dlt-contract-ops --help` starts without drivers, SDKs or dlt's destinations.

A fresh interpreter runs the click group with `--help` (and each command with `--help`) and
prints the modules it loaded; none of the heavy ones may be among them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dlt_contract_ops.cli import main

#: a module is heavy when its name is one of these or starts with one plus "."
HEAVY = ("duckdb", "psycopg2", "sqlalchemy", "pymysql", "sentry_sdk", "dlt.destinations", "dlt",
         "sqlglot")

_PROBE = """
import json, sys
from dlt_contract_ops.cli import main
try:
    main({args!r})
except SystemExit as exc:
    code = exc.code
else:
    code = 0
print(json.dumps({{"code": code, "modules": sorted(sys.modules)}}))
"""


def _loaded_by(args: list[str]) -> tuple[int, list[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_PROBE.format(args=args))],
        capture_output=True,
        text=True,
        # the isolation fixture's DLT_DATA_DIR comes along: dlt never writes to /var/dlt
        env={**os.environ, "RUNTIME__DLTHUB_TELEMETRY": "false"},
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    return int(data["code"] or 0), list(data["modules"])


def _heavy(modules: list[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


COMMANDS = [[], *[[name] for name in sorted(main.commands)]]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join([*c, "--help"]))
def test_help_loads_no_driver_sdk_or_dlt(command: list[str]) -> None:
    code, modules = _loaded_by([*command, "--help"])

    assert code == 0
    assert "click" in modules  # the probe really ran the CLI
    assert _heavy(modules) == []


@pytest.mark.parametrize(
    ("modules", "heavy"),
    [
        (["click", "json"], []),
        (["duckdb"], ["duckdb"]),
        (["psycopg2._psycopg", "sentry_sdk.hub"], ["psycopg2._psycopg", "sentry_sdk.hub"]),
        (["dlt.destinations.impl.duckdb"], ["dlt.destinations.impl.duckdb"]),
        (["dltx", "duckdbish", "sqlalchemy_utils"], []),
    ],
)
def test_heavy_module_matching(modules: list[str], heavy: list[str]) -> None:
    assert _heavy(modules) == heavy


def test_the_probe_sees_what_a_reconcile_loads(tmp_path: Path) -> None:
    """The guard can fail: the same probe around a real (empty) reconcile reports dlt."""
    (tmp_path / ".dlt").mkdir()
    _, modules = _loaded_by(["reconcile", "--all", "--dry-run", "--project-dir", str(tmp_path)])

    assert "dlt" in _heavy(modules)


def test_importing_the_package_is_lazy() -> None:
    code, modules = _loaded_by(["--version"])

    assert code == 0
    assert not [m for m in modules if m.split(".")[0] in ("pydantic", "sqlglot")]


_GC_PROBE = """
import atexit, gc, json, sys
import dlt_contract_ops.acks.service as acks
import dlt_contract_ops.engine.reconcile as engine
from dlt_contract_ops import cli

seen = {{}}

def spy(name, real):
    def call(*args, **kwargs):
        seen[name] = {{"collector": gc.isenabled(), "frozen": gc.get_freeze_count() > 0}}
        return real(*args, **kwargs)
    return call

def report():  # the console script ends its process itself, after the atexit handlers
    seen["after " + {args!r}[0]] = gc.isenabled()
    print(json.dumps(seen), flush=True)

atexit.register(report)
engine.run = spy("reconcile", engine.run)
engine.check_source_names = spy("start-up", engine.check_source_names)
acks.list_acks = spy("acks", acks.list_acks)
entry = getattr(cli, {entry!r})
sys.argv = ["dlt-contract-ops", *{args!r}, "--project-dir", {root!r}]
entry(args=sys.argv[1:]) if {entry!r} == "main" else entry()
"""


def _gc_seen(entry: str, root: Path) -> dict[str, object]:
    """What the collector was at each step of `reconcile` and then `acks`, each a process
    of its own as a user runs them."""
    seen: dict[str, object] = {}
    for args in (["reconcile", "--all", "--dry-run"], ["acks"]):
        probe = _GC_PROBE.format(entry=entry, root=str(root), args=args)
        proc = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(probe)], capture_output=True, text=True,
            env={**os.environ, "RUNTIME__DLTHUB_TELEMETRY": "false"},
        )
        assert proc.returncode in (0, 2), proc.stderr  # 2: no source declared here
        seen.update(json.loads(proc.stdout.strip().splitlines()[-1]))
    return seen


def test_the_console_script_runs_the_sweep_with_the_collector_on(tmp_path: Path) -> None:
    """Start-up runs without the cycle collector; the sweep (and any other command's work)
    with it, start-up's objects frozen; the collector is on again after the command."""
    (tmp_path / ".dlt").mkdir()
    seen = _gc_seen("console", tmp_path)

    assert seen["start-up"] == {"collector": False, "frozen": False}
    assert seen["reconcile"] == {"collector": True, "frozen": True}
    assert seen["acks"] == {"collector": True, "frozen": True}
    assert seen["after reconcile"] is True
    assert seen["after acks"] is True


def test_main_as_a_library_call_leaves_the_collector_alone(tmp_path: Path) -> None:
    (tmp_path / ".dlt").mkdir()
    seen = _gc_seen("main", tmp_path)

    assert seen["start-up"] == {"collector": True, "frozen": False}
    assert seen["reconcile"] == {"collector": True, "frozen": False}
    assert seen["acks"] == {"collector": True, "frozen": False}
