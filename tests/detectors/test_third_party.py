"""A third-party detector, installed from a throwaway package, runs like a built-in.

The freshness detector is the module docs/writing-a-detector.md shows, read from that page
(so the page cannot rot). It is "installed" as a folder on PYTHONPATH holding the module and
a `*.dist-info` with `METADATA` and `entry_points.txt`, which `importlib.metadata` finds as it
finds any installed distribution; nothing is pip-installed and the package is not changed.
A real dlt pipeline loads two tables into DuckDB and one is backdated out of band: the
detector shows in `reconcile --help`, the JSON document, text, SARIF and the HTML report.
A broken plugin (import error, wrong type, bad member, duplicate name) is one line, exit 2.
"""

from __future__ import annotations

import json
import re
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from dlt_contract_ops.commands import main
from dlt_contract_ops.detectors.registry import clear_cache
from tests.projects import Project

DOC = Path(__file__).parents[2] / "docs" / "writing-a-detector.md"
BUILT_INS = ("additive", "removal", "missing", "type", "rename", "gate", "contract",
             "distribution")

SOURCE = """
import dlt
from pydantic import BaseModel


class Order(BaseModel):
    id: int
    total: int


class Customer(BaseModel):
    id: int
    name: str


@dlt.resource(columns=Order)
def orders():
    yield [{"id": 1, "total": 5}, {"id": 2, "total": 7}]


@dlt.resource(columns=Customer)
def customers():
    yield [{"id": 1, "name": "ada"}]


@dlt.source(name="shop")
def shop():
    return [orders(), customers()]
"""

LOAD = """
import dlt, duckdb, time
import shop_src

pipeline = dlt.pipeline("shop_pipe", destination="duckdb", dataset_name="shop_data")
pipeline.run(shop_src.shop())
old = f"{time.time() - 10 * 86400:.6f}"  # ten days ago
con = duckdb.connect("shop_pipe.duckdb")
con.execute(f"UPDATE shop_data.orders SET _dlt_load_id = '{old}'")
con.close()
print(old)
"""


def doc_module() -> str:
    """The `freshness_detector.py` block of docs/writing-a-detector.md."""
    blocks = re.findall(r"```python\n(# freshness_detector\.py\n.*?)```", DOC.read_text(), re.S)
    assert len(blocks) == 1, "the page shows the module once"
    return blocks[0]


def install(folder: Path, dist: str, modules: dict[str, str], entry_points: str) -> Path:
    """A distribution `dist` in `folder` as an installer leaves it: the modules and
    `<dist>-0.1.0.dist-info` with METADATA and entry_points.txt."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, code in modules.items():
        (folder / f"{name}.py").write_text(textwrap.dedent(code))
    info = folder / f"{dist.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(
        "[dlt_contract_ops.detectors]\n" + textwrap.dedent(entry_points)
    )
    return folder


@pytest.fixture
def shop(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Project]:
    """A loaded shop (orders ten days old, customers fresh) and the freshness plugin
    installed: on PYTHONPATH for a `dlt-contract-ops` process the test starts (`cli_process`:
    found through the entry points of a fresh interpreter's path), and on this process's
    `sys.path` for the in-process `cli` (the registry read again, as a fresh process would)."""
    plugins = install(tmp_path / "site", "contract-ops-freshness",
                      {"freshness_detector": doc_module()},
                      "freshness = freshness_detector:FRESHNESS\n")
    monkeypatch.setenv("PYTHONPATH", str(plugins))
    monkeypatch.syspath_prepend(str(plugins))  # importlib.metadata reads sys.path
    clear_cache()
    project.module("shop_src", SOURCE)
    project.source("shop", "shop_src:shop", pipeline_name="shop_pipe", dataset_name="shop_data")
    project.python(LOAD)
    yield project
    clear_cache()


def test_a_third_party_detector_runs_like_a_built_in(shop: Project) -> None:
    # --help: its flag, worded from its summary
    # a fresh interpreter finds it through its entry point (the rest runs in this process)
    help_text = shop.cli_process("reconcile", "--help").stdout
    assert "--include-freshness" in help_text
    assert "Also detect tables whose newest load" in " ".join(help_text.split())

    # off without its flag
    plain = json.loads(
        shop.cli("reconcile", "--all", "--dry-run", "--format", "json").stdout
    )
    assert "freshness" not in {r["detector"] for r in plain["results"]}

    # JSON: its block and its finding (orders only: customers loaded just now)
    proc = shop.cli("reconcile", "--all", "--dry-run", "--include-freshness",
                            "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    [block] = [r for r in doc["results"] if r["detector"] == "freshness"]
    assert block["error"] is None
    [finding] = block["findings"]
    assert (finding["drift_type"], finding["table"], finding["columns"]) == (
        "freshness", "orders", ["_dlt_load_id"])
    assert finding["details"]["age"].startswith(("9d", "10d"))
    assert finding["details"]["max_age"] == "1d 0h"
    assert "MAX" in finding["reproduce"]
    assert '"_dlt_load_id"' in finding["reproduce"]
    # in order after the built-in runners (combiners run last); the built-ins' blocks are
    # what they were without it
    assert [r["detector"] for r in doc["results"]] == [
        "additive", "missing", "type", "freshness", "rename"]

    def timeless(results: list[dict[str, object]]) -> list[dict[str, object]]:
        return [{k: v for k, v in r.items() if k != "duration_s"} for r in results]

    assert timeless([r for r in doc["results"] if r is not block]) == timeless(plain["results"])

    # text: its heading and its lines
    text = shop.cli("reconcile", "--all", "--dry-run", "--include-freshness").stdout
    assert "Source: shop (freshness)  |  Findings: 1" in text
    assert "  • orders: freshness drift (1 column(s))" in text
    assert re.search(r"      Newest load: \d+\.\d+ at \S+, (9|10)d \d+h ago \(max_age 1d 0h\)",
                     text)

    # SARIF: its rule after the built-ins' (their indexes stay put), its result
    sarif = json.loads(shop.cli("reconcile", "--all", "--dry-run", "--include-freshness",
                                "--format", "sarif").stdout)
    run = sarif["runs"][0]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert rules == [*BUILT_INS, "freshness"]
    [result] = [r for r in run["results"] if r["ruleId"] == "freshness"]
    assert result["ruleIndex"] == len(BUILT_INS)
    assert "Newest load" in result["message"]["text"]

    # JUnit and GitHub: a test case and an annotation
    junit = shop.cli("reconcile", "--all", "--dry-run", "--include-freshness",
                     "--format", "junit").stdout
    assert 'name="shop.freshness"' in junit
    assert "freshness drift" in junit
    github = shop.cli("reconcile", "--all", "--dry-run", "--include-freshness",
                      "--format", "github").stdout
    assert "::warning title=freshness drift in shop.orders::" in github

    # the HTML report, with the flag the report command derives too
    page = shop.root / "report.html"
    proc = shop.cli("report", "--include-freshness", "--html", str(page))
    assert proc.returncode == 0, proc.stderr
    html = page.read_text()
    assert '<span class="badge freshness">freshness</span>' in html
    assert '<div class="detail">Newest load: ' in html

    # --fail-on-drift counts its findings
    assert shop.cli("reconcile", "--all", "--dry-run", "--include-freshness",
                    "--fail-on-drift").returncode == 3


def test_its_settings_are_its_own_table(shop: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    args = ("reconcile", "--all", "--dry-run", "--include-freshness", "--format", "json")

    def freshness() -> dict[str, object]:
        proc = shop.cli(*args)
        assert proc.returncode == 0, proc.stderr
        [block] = [r for r in json.loads(proc.stdout)["results"] if r["detector"] == "freshness"]
        return block  # type: ignore[no-any-return]

    # the project's table, then the source's over it (each through dlt's providers)
    shop.config('[contract_ops.freshness]\nmax_age = "1h"\n')
    assert len(freshness()["findings"]) == 1  # type: ignore[arg-type]
    shop.config('[sources.shop.contract_ops.freshness]\nmax_age = "30d"\n')
    assert freshness()["findings"] == []
    monkeypatch.setenv("SOURCES__SHOP__CONTRACT_OPS__FRESHNESS__MAX_AGE", "2d")
    assert len(freshness()["findings"]) == 1  # type: ignore[arg-type]

    # a value its model refuses: the key, where it is set, exit 2
    monkeypatch.setenv("SOURCES__SHOP__CONTRACT_OPS__FRESHNESS__MAX_AGE", "soon")
    proc = shop.cli(*args)
    assert proc.returncode == 2
    assert "`max_age` in `[sources.shop.contract_ops.freshness]`" in proc.stdout + proc.stderr
    assert "'soon'" in proc.stdout + proc.stderr
    monkeypatch.delenv("SOURCES__SHOP__CONTRACT_OPS__FRESHNESS__MAX_AGE")

    # an unknown key of its table, in any file: did you mean, exit 2
    shop.secrets('[contract_ops.freshness]\nmax_agee = "1d"\n')
    proc = shop.cli(*args)
    assert proc.returncode == 2
    assert "Unknown key `max_agee` in `[contract_ops.freshness]` (" in proc.stderr
    assert "Did you mean `max_age`?" in proc.stderr
    assert "Traceback" not in proc.stderr


# -- broken plugins: one clear line, exit 2 ----------------------------------------------------
GOOD = """
from dlt_contract_ops import Detector

LATE = Detector("late_rows", "{module}:run", "rows loaded late", flag="--include-late-rows")


def run(run):
    raise AssertionError("never run")
"""

BROKEN = [
    pytest.param(
        {"{module}": "import not_a_module_anywhere\n"},
        "late_rows = {module}:LATE\n",
        "Detector plugin entry point `late_rows = {module}:LATE` of contract-ops-{case} 0.1.0 "
        "(group `dlt_contract_ops.detectors`) cannot be imported: ModuleNotFoundError: No "
        "module named 'not_a_module_anywhere'.",
        id="import",
    ),
    pytest.param(
        {"{module}": GOOD + "\nNOT_ONE = run\n"},
        "late_rows = {module}:NOT_ONE\n",
        "Detector plugin entry point `late_rows = {module}:NOT_ONE` of contract-ops-{case} "
        "0.1.0 (group `dlt_contract_ops.detectors`) is a `function`, not a "
        "`dlt_contract_ops.Detector`",
        id="type",
    ),
    pytest.param(
        {"{module}": GOOD.replace('flag="--include-late-rows"', 'flag="--late"')},
        "late_rows = {module}:LATE\n",
        "(group `dlt_contract_ops.detectors`): `flag` is '--late': an opt-in detector's flag "
        "is `--include-late-rows`.",
        id="member",
    ),
    pytest.param(
        {"{module}": GOOD.replace('flag="--include-late-rows"',
                                  'flag="--include-late-rows", profiles="all"')},
        "late_rows = {module}:LATE\n",
        "(group `dlt_contract_ops.detectors`): `profiles` is 'all': None, or what it reads of "
        "the load profiles, 'counts' or 'detailed'.",
        id="profiles",
    ),
    pytest.param(
        {"{module}": GOOD.replace('"late_rows"', '"additive"').replace("late-rows", "additive")},
        "additive = {module}:LATE\n",
        ("Detector `additive` is registered twice: by ",
         "entry point `additive = dlt_contract_ops.detectors.builtin:ADDITIVE` of "
         "dlt-contract-ops 0.1.0 (group `dlt_contract_ops.detectors`)",
         "entry point `additive = {module}:LATE` of contract-ops-{case} 0.1.0",
         "Uninstall one of them."),
        id="duplicate",
    ),
]


@pytest.mark.parametrize(("modules", "entry_points", "message"), BROKEN)
def test_a_broken_plugin_is_one_line_and_exit_2(
    modules: dict[str, str], entry_points: str, message: str | tuple[str, ...], project: Project,
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest,
) -> None:
    case = request.node.callspec.id
    module = f"broken_{case}_{time.monotonic_ns()}"  # never one a previous test imported

    def fill(text: str) -> str:
        return text.replace("{module}", module).replace("{case}", case)

    folder = install(tmp_path / "site", f"contract-ops-{case}",
                     {fill(k): fill(v) for k, v in modules.items()}, fill(entry_points))
    monkeypatch.syspath_prepend(str(folder))  # importlib.metadata reads sys.path
    clear_cache()
    request.addfinalizer(clear_cache)
    for args in (["reconcile", "--help"], ["reconcile", "--all"], ["report", "--html", "x"]):
        result = CliRunner().invoke(main, [*args, "--project-dir", str(project.root)])
        assert result.exit_code == 2, (args, result.output)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert lines[0].startswith("Error: ")
        for part in (message,) if isinstance(message, str) else message:
            assert fill(part) in lines[0]
        assert result.exception is None or isinstance(result.exception, SystemExit)
    # the rest of the CLI still answers
    assert CliRunner().invoke(main, ["--help"]).exit_code == 0


# was a bug: the settings check read the detectors' tables through entry points cached by an
# earlier command of the process; `clear_cache` forgot only the detector registry
def test_clear_cache_forgets_the_entry_points_read_before_the_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dlt_contract_ops.registry import DETECTOR_GROUP, registered

    assert "freshness" not in registered(DETECTOR_GROUP)  # read, and cached, before
    plugins = install(tmp_path / "site", "contract-ops-freshness",
                      {"freshness_detector": doc_module()},
                      "freshness = freshness_detector:FRESHNESS\n")
    monkeypatch.syspath_prepend(str(plugins))
    try:
        clear_cache()
        assert "freshness" in registered(DETECTOR_GROUP)
    finally:
        monkeypatch.undo()
        clear_cache()
    assert "freshness" not in registered(DETECTOR_GROUP)
