"""`dlt-contract-ops validate` and `dlt-contract-ops sinks` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dlt_contract_ops.registry import clear_cache
from tests.projects import Project
from tests.sinks.app_project import CONFIG

NO_MODEL = '''
import dlt


@dlt.resource
def things():
    yield {"id": 1}


@dlt.source(name="nomodel")
def nomodel():
    return things
'''

BROKEN = """
[sources.broken.contract_ops]
ref = "pipelines.nope:src"
destination = "duckdb"
dataset_name = "x"

[sources.nomodel.contract_ops]
ref = "pipelines.nomodel:nomodel"
destination = "duckdb"
dataset_name = "nomodel_data"

[sources.far.contract_ops]
ref = "pipelines.app:app"
destination = "clickhouse"
dataset_name = "far_data"

[contract_ops]
alert_sinks = ["logging", "sentri", "sentry", "webhook"]

[contract_ops.alert_sink.sentry]
enviroment = "prod"

[contract_ops.alert_sink.webhook]
url = "http://127.0.0.1:9/hook"

[contract_ops.alert_sink.opsgenie]
key = "x"

[contract_ops.dedup]
realert_afer = "2h"
"""


def _problems(doc: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(p["rule"], p["key"], p["file"]) for p in doc["problems"]]


def test_a_valid_project(app_project: Project) -> None:
    app_project.config(CONFIG + '\n[contract_ops]\nalert_sinks = ["logging"]\n')
    proc = app_project.cli("validate")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == "✓ project is valid: 1 source(s); alert sinks: logging"


def test_every_problem_with_file_and_key(app_project: Project) -> None:
    app_project.module("pipelines.nomodel", NO_MODEL)
    app_project.config(CONFIG + BROKEN)
    app_project.secrets('[contract_ops.alert_sink.sentry]\ndsn = "http://k@127.0.0.1:9/1"\n')
    proc = app_project.cli("validate", "--format", "json")
    assert proc.returncode == 2, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["ok"] is False
    assert doc["sources"] == ["app", "broken", "far", "nomodel"]
    config = ".dlt/config.toml"
    assert sorted(_problems(doc)) == sorted(
        [
            ("config_keys", "contract_ops.dedup.realert_afer", config),
            ("source_importable", "sources.broken.contract_ops.ref", config),
            ("source_has_models", "sources.nomodel.contract_ops.ref", config),
            ("destination_adapter", "sources.far.contract_ops.destination", config),
            ("alert_sink_registered", "contract_ops.alert_sinks[1]", config),
            ("alert_sink_registered", "contract_ops.alert_sink.sentry.enviroment", config),
            ("alert_sink_registered", "contract_ops.alert_sink.webhook.url", config),
            ("alert_sink_registered", "contract_ops.alert_sink.opsgenie", config),
        ]
    )
    by_key = {p["key"]: p["message"] for p in doc["problems"]}
    assert "Did you mean `realert_after`?" in by_key["contract_ops.dedup.realert_afer"]
    assert "pipelines.nope" in by_key["sources.broken.contract_ops.ref"]
    assert "no resource with a Pydantic `columns=` model" in by_key[
        "sources.nomodel.contract_ops.ref"
    ]
    assert "Destination `clickhouse` is core tier" in by_key[
        "sources.far.contract_ops.destination"
    ]
    assert by_key["contract_ops.alert_sinks[1]"].startswith(
        "Unknown alert sink 'sentri'. Did you mean 'sentry'?"
    )
    sentry = by_key["contract_ops.alert_sink.sentry.enviroment"]
    assert "Unknown option `enviroment`" in sentry
    assert "Did you mean `environment`?" in sentry
    assert "`url` of alert sink 'webhook' is a secret but is set in .dlt/config.toml" in by_key[
        "contract_ops.alert_sink.webhook.url"
    ]
    assert "'opsgenie', which is not registered" in by_key["contract_ops.alert_sink.opsgenie"]


def test_text_output_lists_each_problem(app_project: Project) -> None:
    app_project.config(CONFIG + '\n[contract_ops]\nalert_sinks = ["sentri"]\n')
    proc = app_project.cli("validate")
    assert proc.returncode == 2
    assert proc.stdout.splitlines() == [
        "✗ alert_sink_registered: contract_ops.alert_sinks[0] (.dlt/config.toml): Unknown alert "
        "sink 'sentri'. Did you mean 'sentry'? Registered sinks: logging, pagerduty, sentry, "
        "webhook.",
        "1 problem(s) found: 1 source(s); alert sinks: sentri",
    ]


def test_sentry_without_its_extra_fails_validate(app_project: Project) -> None:
    app_project.config(CONFIG + '\n[contract_ops]\nalert_sinks = ["sentry"]\n')
    app_project.secrets('[contract_ops.alert_sink.sentry]\ndsn = "http://k@127.0.0.1:9/1"\n')
    proc = app_project.python_process(
        """
        import sys
        sys.modules["sentry_sdk"] = None  # an environment installed without the extra
        from dlt_contract_ops.cli import main
        main(["validate"])
        """,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert (
        "✗ alert_sink_registered: contract_ops.alert_sink.sentry (.dlt/secrets.toml): Alert sink "
        "'sentry' needs the sentry-sdk package: `pip install 'dlt-contract-ops[sentry]'`."
    ) in proc.stdout


def test_unknown_project_key_is_reported_and_the_rest_still_checked(app_project: Project) -> None:
    app_project.config(CONFIG + '\n[contract_ops]\nalert_sink = "logging"\nalertsinks = []\n')
    proc = app_project.cli("validate", "--format", "json")
    assert proc.returncode == 2
    doc = json.loads(proc.stdout)
    # `alert_sink` is a known key (the sinks' option tables), but a string is not a table:
    # the near miss of `alert_sinks` it likely is
    assert _problems(doc) == [
        ("config_keys", "contract_ops.alertsinks", ".dlt/config.toml"),
        ("config_section", "contract_ops.alert_sink", ".dlt/config.toml"),
    ]
    assert "Did you mean `alert_sinks`?" in doc["problems"][0]["message"]
    assert doc["problems"][1]["message"] == (
        "`[contract_ops.alert_sink]` must be a table: .dlt/config.toml sets it to 'logging'. "
        "Did you mean `alert_sinks`?"
    )
    assert doc["alert_sinks"] == ["logging"]


def test_an_unknown_key_does_not_hide_the_values_of_its_table(app_project: Project) -> None:
    """The unknown key is listed, and the table's values are still read: a bad value and the
    alert sinks it configures are checked too."""
    app_project.config(
        CONFIG
        + '\n[contract_ops]\nalert_sinks = ["webhok"]\nalertsinks = []\n'
        + '[contract_ops.removal]\nrecent_windw = "6h"\nrecent_window = "6 hours"\n'
        + '[sources.app.contract_ops.removal]\ntypo = 1\nbaseline_threshold = 2\n'
    )
    proc = app_project.cli("validate", "--format", "json")
    assert proc.returncode == 2, proc.stderr
    doc = json.loads(proc.stdout)
    config = ".dlt/config.toml"
    assert sorted(_problems(doc)) == sorted(
        [
            ("config_keys", "contract_ops.alertsinks", config),
            ("config_keys", "contract_ops.removal.recent_windw", config),
            ("config_keys", "contract_ops.removal.recent_window", config),
            ("config_keys", "sources.app.contract_ops.removal.typo", config),
            ("config_keys", "sources.app.contract_ops.removal.baseline_threshold", config),
        ]
    )
    by_key = {p["key"]: p["message"] for p in doc["problems"]}
    assert "'6 hours' is not a positive duration" in by_key["contract_ops.removal.recent_window"]
    assert "must be a fraction between 0 and 1" in by_key[
        "sources.app.contract_ops.removal.baseline_threshold"
    ]


@pytest.mark.parametrize(
    ("toml", "key", "says"),
    [
        ("contract_ops = 5\n" + CONFIG, "contract_ops",
         "`[contract_ops]` must be a table: .dlt/config.toml sets it to 5."),
        (CONFIG + '\n[contract_ops]\ndedup = "off"\n', "contract_ops.dedup",
         "`[contract_ops.dedup]` must be a table"),
        # CONFIG ends inside `[sources.app.contract_ops]`
        (CONFIG + 'removal = "strict"\n', "sources.app.contract_ops.removal",
         "`[sources.app.contract_ops.removal]` must be a table"),
        (CONFIG + "\n[contract_op]\nalert_sinks = []\n", "contract_op",
         "Section `[contract_op]` in .dlt/config.toml is not read. Did you mean "
         "`[contract_ops]`?"),
        (CONFIG + "\n[sources.app.contractops]\ndataset_name = 'x'\n",
         "sources.app.contractops", "Did you mean `[sources.app.contract_ops]`?"),
    ],
    ids=["contract_ops-5", "dedup-string", "source-removal-string", "contract_op",
         "sources-app-contractops"],
)
def test_a_section_that_cannot_be_read_exits_2(
    app_project: Project, toml: str, key: str, says: str
) -> None:
    app_project.config(toml)
    proc = app_project.cli("validate", "--format", "json")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    [problem] = json.loads(proc.stdout)["problems"]
    assert (problem["rule"], problem["key"], problem["file"]) == (
        "config_section", key, ".dlt/config.toml"
    )
    assert says in problem["message"]


def test_environment_variable_is_named_as_the_place(
    app_project: Project, monkeypatch: Any
) -> None:
    app_project.config(CONFIG)
    monkeypatch.setenv("CONTRACT_OPS__ALERT_SINKS", '["webhok"]')
    proc = app_project.cli("validate", "--format", "json")
    assert proc.returncode == 2
    [problem] = json.loads(proc.stdout)["problems"]
    assert problem["file"] == "environment variable CONTRACT_OPS__ALERT_SINKS"
    assert "Did you mean 'webhook'?" in problem["message"]


def test_sinks_command_lists_registered_sinks_and_their_distribution(
    app_project: Project,
) -> None:
    app_project.config(CONFIG + '\n[contract_ops]\nalert_sinks = ["logging", "webhook", "x"]\n')
    proc = app_project.cli("sinks", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    rows = {s["name"]: s for s in doc["sinks"]}
    assert {"logging", "sentry", "webhook"} <= set(rows)
    assert rows["sentry"]["object"] == "dlt_contract_ops.sinks.sentry_sink:SentrySink"
    assert {rows[n]["distribution"] for n in ("logging", "sentry", "webhook")} == {
        "dlt-contract-ops"
    }
    assert [n for n, s in rows.items() if s["enabled"]] == ["logging", "webhook"]
    assert doc["enabled_but_not_registered"] == ["x"]
    text = app_project.cli("sinks").stdout.splitlines()
    assert any(line.startswith("* webhook ") and "dlt-contract-ops 0.1.0" in line
               for line in text)
    assert any(line.startswith("  sentry ") for line in text)
    assert any(line.startswith("✗ x ") for line in text)


def test_sinks_json_writes_a_name_beyond_ascii_as_itself(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`sinks --format json` is written by the one JSON writer every command uses: a sink a
    plugin registers as `café` reads `café`, as in `validate` and `reconcile`, not `caf\\u00e9`."""
    site = tmp_path / "site"
    info = site / "cafe_sink-0.2.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: cafe-sink\nVersion: 0.2.0\n")
    (info / "entry_points.txt").write_text(
        "[dlt_contract_ops.alert_sinks]\ncafé = cafe_sink:Sink\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(site))  # importlib.metadata reads sys.path
    clear_cache()  # nothing of the sink is imported to list it
    proc = project.cli("sinks", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert '"name": "café"' in proc.stdout
    [row] = [s for s in json.loads(proc.stdout)["sinks"] if s["distribution"] == "cafe-sink"]
    assert row == {"name": "café", "object": "cafe_sink:Sink", "distribution": "cafe-sink",
                   "version": "0.2.0", "enabled": False}


def test_option_value_and_missing_option_problems(app_project: Project) -> None:
    app_project.config(
        CONFIG
        + '\n[contract_ops]\nalert_sinks = ["sentry", "webhook"]\n'
        + '[contract_ops.alert_sink.sentry]\nsend_samples = "sometimes"\n'
    )
    app_project.secrets('[contract_ops.alert_sink.sentry]\ndsn = "http://k@127.0.0.1:9/1"\n')
    proc = app_project.cli("validate", "--format", "json")
    assert proc.returncode == 2
    doc = json.loads(proc.stdout)
    assert _problems(doc) == [
        ("alert_sink_registered", "contract_ops.alert_sink.sentry.send_samples",
         ".dlt/config.toml"),
        ("alert_sink_registered", "contract_ops.alert_sink.webhook.url", "(not set)"),
    ]
    assert "must be true or false, got 'sometimes'" in doc["problems"][0]["message"]
    assert "needs option `url`" in doc["problems"][1]["message"]
