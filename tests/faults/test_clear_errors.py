"""Clear errors: a broken or mistyped configuration, a bad flag or a hostile column name gets
one message that names the file, key or flag, exit 2 for a usage error, and no traceback;
and nothing connects or alerts before the configuration is known to be good.

Through the real CLI in a subprocess, against real dlt pipelines in DuckDB and a real
loopback webhook receiver.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import duckdb
import pytest

from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.errors import ConfigError
from tests.duckdb_baselines import copy_project, load_once
from tests.projects import Project
from tests.servers import Receiver

SHOP = '''
from typing import Optional

import dlt
from pydantic import BaseModel


class Order(BaseModel):
    id: int
    amount: float
    note: Optional[str] = None


@dlt.resource(columns=Order)
def orders():
    yield [{"id": i, "amount": 1.5 * i, "note": f"n{i}"} for i in range(5)]


@dlt.source(name="shop")
def shop():
    return orders
'''

PIPELINE = "shop_pipe"
DATASET = "shop_data"
SOURCE = f"""
[sources.shop.contract_ops]
ref = "shop_mod:shop"
pipeline_name = "{PIPELINE}"
destination = "duckdb"
dataset_name = "{DATASET}"
"""
COMMANDS = [("reconcile", "--all"), ("validate",)]


@pytest.fixture(scope="module")
def _loaded_shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A shop loaded once by a real pipeline, then drifted out of band (`coupon` added).
    Read-only: tests copy it."""

    def build(project: Project) -> None:
        project.module("shop_mod", SHOP)
        project.python(
            f"""
            import dlt
            from shop_mod import shop
            dlt.pipeline({PIPELINE!r}, destination="duckdb", dataset_name={DATASET!r}).run(shop())
            """
        )
        with duckdb.connect(str(project.root / f"{PIPELINE}.duckdb")) as con:
            con.execute(f"ALTER TABLE {DATASET}.orders ADD COLUMN coupon TEXT DEFAULT 'C1'")

    return load_once(tmp_path_factory, "shop_module", build)


@pytest.fixture
def shop(_loaded_shop: Path, tmp_path: Path) -> Project:
    """A private copy of the drifted shop, with no configuration yet."""
    return copy_project(_loaded_shop, tmp_path / "shop")


def _alert_state(data_dir: Path) -> list[Path]:
    """Files the dedup state keeper wrote under dlt's data dir."""
    folder = data_dir / "contract_ops"
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def _single_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("Error: "), stderr
    return lines[0]


# -- 7. broken TOML --------------------------------------------------------------------------
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize(
    ("file", "text", "line", "column"),
    [
        ("config.toml", SOURCE + '[contract_ops]\nalert_sinks = ["logging" "webhook"]\n', 8, 26),
        ("config.toml", SOURCE + "bad = = 3\n", 7, 7),
        ("secrets.toml", '[destination.duckdb.credentials]\npassword = "hunter2"\nx = \n', 3, 5),
        ("secrets.toml", "[destination.duckdb\n", 1, 20),
    ],
    ids=["config-unclosed-list", "config-double-equals", "secrets-no-value", "secrets-header"],
)
def test_broken_toml_is_one_line_naming_file_line_and_column(
    shop: Project,
    command: tuple[str, ...],
    file: str,
    text: str,
    line: int,
    column: int,
) -> None:
    if file == "secrets.toml":
        shop.config(SOURCE)
    (shop.root / ".dlt" / file).write_text(text)

    proc = shop.cli(*command)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    error = _single_error_line(proc.stderr)
    assert f"`{shop.root / '.dlt' / file}` is not valid TOML" in error
    assert f"(at line {line}, column {column})" in error
    assert "hunter2" not in proc.stdout + proc.stderr  # a secret is never echoed


# -- 8. removal settings in TOML, removal flags on the command line ---------------------------
@pytest.mark.parametrize(
    ("toml", "key", "says"),
    [
        ('[contract_ops.removal]\nrecent_windw = "6h"\n',
         "contract_ops.removal.recent_windw", "Did you mean `recent_window`?"),
        # the grammar takes "6h", "PT6H" or 21600, not prose: "6 hours" is refused
        ('[contract_ops.removal]\nrecent_window = "6 hours"\n',
         "contract_ops.removal.recent_window", "'6 hours' is not a positive duration"),
        ('[contract_ops.removal]\nbaseline_window = "0s"\n',
         "contract_ops.removal.baseline_window", "is not a positive duration"),
        ('[contract_ops.removal]\nbaseline_threshold = "high"\n',
         "contract_ops.removal.baseline_threshold", "must be a fraction between 0 and 1"),
        ('[sources.shop.contract_ops.removal]\nrecent_threshold = 1.5\n',
         "sources.shop.contract_ops.removal.recent_threshold",
         "must be a fraction between 0 and 1"),
        ('[sources.shop.contract_ops.removal]\nbaselin_window = "7d"\n',
         "sources.shop.contract_ops.removal.baselin_window", "Did you mean `baseline_window`?"),
    ],
    ids=["unknown-key", "prose-duration", "zero-window", "word-threshold",
         "source-threshold", "source-unknown-key"],
)
def test_removal_setting_mistakes_name_the_file_and_key(
    shop: Project, toml: str, key: str, says: str
) -> None:
    shop.config(SOURCE + toml)

    proc = shop.cli("validate", "--format", "json")
    assert proc.returncode == 2, proc.stdout + proc.stderr  # what reconcile refuses: exit 2
    problems = json.loads(proc.stdout)["problems"]
    assert [(p["rule"], p["key"], p["file"]) for p in problems] == [
        ("config_keys", key, ".dlt/config.toml")
    ]
    assert says in problems[0]["message"]

    # reconcile refuses the same configuration as a usage error, naming the key
    refused = shop.cli("reconcile", "--all", "--include-removal")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert f"`{key.rpartition('.')[2]}`" in refused.stdout + refused.stderr


def test_validate_lists_an_unknown_key_and_a_bad_value_together(shop: Project) -> None:
    shop.config(
        SOURCE
        + '[contract_ops]\nalert_sinks = ["webhok"]\n'
        + '[contract_ops.removal]\nrecent_windw = "6h"\nbaseline_threshold = "high"\n'
        + '[contract_ops.dedup]\nrealert_afer = "2h"\n'
    )
    proc = shop.cli("validate", "--format", "json")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    keys = {p["key"]: p["rule"] for p in json.loads(proc.stdout)["problems"]}
    assert keys == {
        "contract_ops.removal.recent_windw": "config_keys",
        "contract_ops.dedup.realert_afer": "config_keys",
        "contract_ops.removal.baseline_threshold": "config_keys",
    }


@pytest.mark.parametrize(
    ("flag", "value", "says"),
    [
        ("--recent-window", "abc", "is not a positive duration"),
        ("--recent-window", "6 hours", "is not a positive duration"),
        ("--baseline-window", "-7d", "is not a positive duration"),
        ("--baseline-threshold", "-1", "must be a fraction between 0 and 1"),
        ("--recent-threshold", "2", "must be a fraction between 0 and 1"),
    ],
)
def test_a_bad_removal_flag_is_a_usage_error_before_anything_connects_or_alerts(
    shop: Project, flag: str, value: str, says: str
) -> None:
    data_dir = Path(os.environ["DLT_DATA_DIR"])
    with Receiver() as hook:
        shop.config(
            SOURCE
            + '[contract_ops]\nalert_sinks = ["webhook"]\n'
            + "[contract_ops.alert_sink.webhook]\ntimeout = 2\nretries = 0\n"
        )
        shop.secrets(f'[contract_ops.alert_sink.webhook]\nurl = "{hook.url}/hook"\n')

        proc = shop.cli("reconcile", "--all", "--include-removal", f"{flag}={value}")
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "Traceback" not in proc.stderr
        assert f"`{flag}`" in proc.stderr
        assert says in proc.stderr
        assert "arguments." not in proc.stderr
        assert "recent_window" not in proc.stderr
        assert proc.stdout == ""
        assert hook.requests == []
        assert _alert_state(data_dir) == []

        # the same run with a good value does alert and keep state: the checks above can fail
        good = shop.cli("reconcile", "--all", "--include-removal")
        assert good.returncode == 0, good.stdout + good.stderr
        assert [r.json()["finding"]["columns"] for r in hook.requests] == [["coupon"]]
        assert _alert_state(data_dir) != []


# -- 9. a project folder that does not exist -------------------------------------------------
@pytest.mark.parametrize(
    "command",
    [("reconcile", "-s", "shop"), ("reconcile", "--all"), ("validate",)],
    ids=" ".join,
)
def test_a_missing_project_dir_is_a_usage_error(
    tmp_path: Path, project: Project, command: tuple[str, ...]
) -> None:
    missing = tmp_path / "no_such_project"
    proc = project.cli(*command, "--project-dir", str(missing))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    error = _single_error_line(proc.stderr)
    assert f"Project directory `{missing}` does not exist" in error
    assert "Unknown source" not in proc.stderr

    with pytest.raises(ConfigError, match="does not exist"):
        run(["shop"], project_dir=missing)


# -- 10. a misspelled destination ------------------------------------------------------------
def test_a_misspelled_destination_is_a_configuration_error(shop: Project) -> None:
    shop.config(SOURCE.replace('destination = "duckdb"', 'destination = "duckdbb"'))

    proc = shop.cli("reconcile", "--all", "--format", "json")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    [result] = json.loads(proc.stdout)["results"]
    assert result["error"].startswith("Destination `duckdbb` of source `shop`")
    assert "Did you mean `duckdb`?" in result["error"]
    assert "`destination` in `[sources.shop.contract_ops]` (.dlt/config.toml)" in result["error"]

    checked = shop.cli("validate", "--format", "json")
    assert checked.returncode == 2, checked.stdout + checked.stderr  # as reconcile
    [problem] = json.loads(checked.stdout)["problems"]
    assert (problem["rule"], problem["key"], problem["file"]) == (
        "destination_adapter", "sources.shop.contract_ops.destination", ".dlt/config.toml"
    )
    assert "Did you mean `duckdb`?" in problem["message"]


# -- 11. unknown-key messages name only files that exist -------------------------------------
@pytest.mark.parametrize("file", ["config.toml", "secrets.toml"])
def test_unknown_key_messages_name_only_the_file_that_sets_it(shop: Project, file: str) -> None:
    shop.config(SOURCE)
    (shop.root / ".dlt" / file).write_text(
        SOURCE + '[contract_ops]\ninjected_colums = ["tenant_id"]\n' if file == "config.toml"
        else '[contract_ops]\ninjected_colums = ["tenant_id"]\n'
    )
    expected = (
        f"Unknown key `injected_colums` in `[contract_ops]` (.dlt/{file}). "
        "Did you mean `injected_columns`?"
    )
    other = "secrets.toml" if file == "config.toml" else "config.toml"

    proc = shop.cli("reconcile", "--all")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    error = _single_error_line(proc.stderr)
    assert error == f"Error: {expected}"

    checked = shop.cli("validate", "--format", "json")
    [problem] = json.loads(checked.stdout)["problems"]
    assert problem["message"] == expected
    assert problem["file"] == f".dlt/{file}"
    assert other not in problem["message"]


# -- 12. column names that could forge output ------------------------------------------------
FORGED = "x\n  • forged: additive drift (9 column(s))"


def test_odd_column_names_do_not_forge_lines_or_columns(shop: Project) -> None:
    shop.config(SOURCE + '[contract_ops]\nalert_sinks = ["logging"]\n')
    with duckdb.connect(str(shop.root / f"{PIPELINE}.duckdb")) as con:
        for name in ("a, b", FORGED):
            quoted = '"' + name.replace('"', '""') + '"'
            con.execute(f"ALTER TABLE {DATASET}.orders ADD COLUMN {quoted} TEXT DEFAULT 'v'")

    proc = shop.cli("reconcile", "--all")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # text: one Columns line, each odd name quoted, nothing on a line of its own
    columns = [line for line in proc.stdout.splitlines() if "Columns:" in line]
    assert columns == [
        '      Columns: "a, b", coupon, "x\\n  • forged: additive drift (9 column(s))"'
    ]
    assert not any(line.lstrip().startswith("• forged") for line in proc.stdout.splitlines())

    # the logging sink: one line, the columns as a JSON list
    [alert] = [line for line in proc.stderr.splitlines() if "schema drift kind=additive" in line]
    listed = re.search(r"columns=(\[.*?\]) id=", alert)
    assert listed is not None, alert
    assert json.loads(listed.group(1)) == ["a, b", "coupon", FORGED]
    assert not any(line.lstrip().startswith("• forged") for line in proc.stderr.splitlines())

    # JSON keeps the real names
    doc: Any = json.loads(shop.cli("reconcile", "--all", "--format", "json").stdout)
    assert doc["results"][0]["findings"][0]["columns"] == ["a, b", "coupon", FORGED]
