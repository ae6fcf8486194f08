"""The plugin through dlt's CLI: `dlt contract-ops ...` is `dlt-contract-ops ...` (options,
output, exit codes), `dlt pipeline <name> reconcile` reconciles that pipeline's sources, and
DLT_DISABLE_PLUGINS turns both off cleanly.

The real `dlt` executable, a process whose start discovers the installed entry point, runs
once per kind of command: `dlt --help` listing `contract-ops`, a `dlt contract-ops` JSON
document (compared with the `dlt-contract-ops` console script, a process too) and a
`dlt pipeline <name> reconcile` JSON document. Every other case runs the executable's own
function in this process (`Loaded.dlt_in_process`: its plugins discovered anew under the
call's environment, DLT_DISABLE_PLUGINS included); the `dlt-contract-ops` side it is
compared with is the same click group, in this process too."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dlt_contract_ops.commands import main
from tests.plugin import project as shop
from tests.plugin.conftest import Loaded

CONFIG = """
[runtime]
dlthub_telemetry = false

[sources.shop.contract_ops]
ref = "pipelines.shop:shop"

[sources.events.contract_ops]
ref = "pipelines.shop:events"
"""


@pytest.fixture
def declared(loaded: Loaded) -> Loaded:
    """The loaded project with `shop` and `events` declared by `ref` only: their pipelines
    (`shop_pipeline`, `events_pipeline`) are found by their schemas."""
    (loaded.root / ".dlt" / "config.toml").write_text(CONFIG)
    return loaded


def _doc(stdout: str) -> dict[str, Any]:
    doc = json.loads(stdout)
    assert isinstance(doc, dict)
    return doc


def _comparable(doc: dict[str, Any]) -> dict[str, Any]:
    """The document without what differs between two runs (durations, first-seen times)."""
    for result in doc["results"]:
        result.pop("duration_s", None)
        for finding in result["findings"]:
            finding.pop("first_seen", None)
            finding.pop("detected_at", None)
    return doc


def test_dlt_lists_contract_ops_and_forwards_help(declared: Loaded) -> None:
    top = declared.dlt("--help")
    assert top.returncode == 0, top.stderr
    assert "contract-ops" in top.stdout

    ours = declared.dlt_in_process("contract-ops", "--help")
    assert ours.returncode == 0, ours.stderr
    assert "Usage: dlt contract-ops [OPTIONS] COMMAND" in ours.stdout
    listed = {line.split()[0] for line in ours.stdout.split("Commands:")[1].splitlines()
              if line.strip()}
    assert listed == set(main.commands)
    assert "init" in listed

    sub = declared.dlt_in_process("contract-ops", "reconcile", "--help")
    assert sub.returncode == 0, sub.stderr
    assert "--fail-on-drift" in sub.stdout
    assert "--include-removal" in sub.stdout


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("reconcile", "--all", "--dry-run"), 0),
        (("reconcile", "--all", "--dry-run", "--fail-on-drift"), 3),
        (("reconcile", "-s", "events", "--dry-run", "--fail-on-drift"), 0),
        (("reconcile", "-s", "nope", "--dry-run"), 2),  # a typo: usage, never an alert
        (("reconcile", "--dry-run"), 2),  # neither -s nor --all: a usage error
        (("reconcile", "--all", "--format", "yaml"), 2),
        (("no-such-command",), 2),
        (("--version",), 0),
    ],
)
def test_contract_ops_exit_codes_match_the_command_group(
    declared: Loaded, args: tuple[str, ...], code: int
) -> None:
    via_dlt = declared.dlt_in_process("contract-ops", *args)
    direct = declared.project.cli(*args)
    assert (via_dlt.returncode, direct.returncode) == (code, code), (
        via_dlt.stdout, via_dlt.stderr, direct.stderr
    )
    assert "Traceback" not in via_dlt.stderr


def test_contract_ops_json_matches_the_console_script(declared: Loaded) -> None:
    args = ("reconcile", "--all", "--dry-run", "--format", "json", "--include-removal")
    via_dlt, direct = declared.dlt("contract-ops", *args), declared.console(*args)
    assert via_dlt.returncode == direct.returncode == 0, via_dlt.stderr
    doc = _comparable(_doc(via_dlt.stdout))
    assert doc == _comparable(_doc(direct.stdout))
    shop_additive = [r for r in doc["results"]
                     if r["source"] == "shop" and r["detector"] == "additive"]
    assert [f["columns"] for f in shop_additive[0]["findings"]] == [[shop.DRIFTED]]
    assert {r["detector"] for r in doc["results"]} >= {"additive", "removal"}


def test_verbose_flag_taken_by_dlt_reaches_the_group(declared: Loaded) -> None:
    # dlt's own pre-parser consumes `-v` anywhere in argv; the plugin passes it on
    proc = declared.dlt_in_process("contract-ops", "-v", "reconcile", "-s", "events", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert "|[DEBUG]|" in proc.stderr


def test_pipeline_reconcile_json(declared: Loaded) -> None:
    proc = declared.dlt("pipeline", shop.SHOP_PIPELINE, "reconcile", "--format", "json",
                        "--dry-run")
    assert proc.returncode == 0, proc.stderr
    doc = _doc(proc.stdout)
    assert {(r["source"], r["pipeline"], r["dataset"]) for r in doc["results"]} == {
        ("shop", shop.SHOP_PIPELINE, shop.SHOP_DATASET)
    }
    findings = [f for r in doc["results"] for f in r["findings"]]
    assert [(f["table"], f["columns"]) for f in findings] == [("orders", [shop.DRIFTED])]


@pytest.mark.parametrize(
    ("pipeline", "extra", "code", "sources"),
    [
        (shop.SHOP_PIPELINE, ("--fail-on-drift",), 3, {"shop"}),
        (shop.SHOP_PIPELINE, (), 0, {"shop"}),
        (shop.EVENTS_PIPELINE, ("--fail-on-drift",), 0, {"events"}),
        (shop.SHOP_PIPELINE, ("--fail-on-drift", "--include-removal"), 3, {"shop"}),
        # additive drift is a warning: failing on errors alone passes
        (shop.SHOP_PIPELINE, ("--fail-on-drift=error",), 0, {"shop"}),
        (shop.SHOP_PIPELINE, ("--fail-on-drift", "warning"), 3, {"shop"}),
    ],
)
def test_pipeline_reconcile_exit_codes(
    declared: Loaded, pipeline: str, extra: tuple[str, ...], code: int, sources: set[str]
) -> None:
    proc = declared.dlt_in_process("pipeline", pipeline, "reconcile", "--dry-run",
                                   "--format", "json", *extra)
    assert proc.returncode == code, proc.stderr
    assert {r["source"] for r in _doc(proc.stdout)["results"]} == sources


def test_pipeline_reconcile_of_a_pipeline_without_sources(declared: Loaded) -> None:
    proc = declared.dlt_in_process("pipeline", "nope_pipeline", "reconcile", "--dry-run")
    assert proc.returncode == 2
    assert "No declared source belongs to pipeline `nope_pipeline`" in proc.stderr
    assert f"`shop` -> `{shop.SHOP_PIPELINE}`" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_pipeline_reconcile_with_a_configured_pipeline_name(declared: Loaded) -> None:
    # a configured `pipeline_name` decides, even when the schema is elsewhere
    (declared.root / ".dlt" / "config.toml").write_text(
        CONFIG + f'\n[sources.elsewhere.contract_ops]\nref = "pipelines.shop:shop"\n'
        f'pipeline_name = "{shop.EVENTS_PIPELINE}"\n'
    )
    proc = declared.dlt_in_process("pipeline", shop.EVENTS_PIPELINE, "reconcile", "--dry-run",
                                   "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert {r["source"] for r in _doc(proc.stdout)["results"]} == {"events", "elsewhere"}


# dlt's own reading of the variable ("1", "yes", any case) is dlt's to test: one value a side.
# dlt reads it when it discovers its plugins, once a process; `dlt_in_process` discovers them
# anew for each call (were the discovery of an earlier call kept, `contract-ops` would be known)
@pytest.mark.parametrize("value", ["true"])
def test_disable_plugins_makes_the_commands_unknown(declared: Loaded, value: str) -> None:
    for argv in (("contract-ops", "--help"), ("pipeline", shop.SHOP_PIPELINE, "reconcile")):
        proc = declared.dlt_in_process(*argv, DLT_DISABLE_PLUGINS=value)
        assert proc.returncode == 2, proc.stdout
        assert "invalid choice: " + repr(argv[-1] if argv[0] == "pipeline" else argv[0]) in (
            proc.stderr
        )
        assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("value", ["False"])
def test_disable_plugins_false_keeps_them(declared: Loaded, value: str) -> None:
    # dlt loads plugins only when the variable is unset or "false" in any case
    proc = declared.dlt_in_process("contract-ops", "--help", DLT_DISABLE_PLUGINS=value)
    assert proc.returncode == 0, proc.stderr
    assert "reconcile" in proc.stdout
