"""The shop project loaded and drifted once (`tests/warehouses.py`), plus a source whose
dataset was never loaded; and the example modules, loaded from their files (examples/ is not a
package)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "orchestrators"

#: declared, but no pipeline ever loaded its dataset: the reconciler cannot check it
GHOST = "ghost"


def load_example(name: str) -> ModuleType:
    """Import `examples/orchestrators/<name>.py` under a private module name."""
    module_name = f"_orchestrator_example_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


#: its declaration, added to each copy of the loaded shop
GHOST_SOURCE = f"""
[sources.{GHOST}.contract_ops]
ref = "pipelines.shop:shop_clean"
pipeline_name = "ghost_pipeline"
destination = "duckdb"
dataset_name = "ghost_data"
"""


@pytest.fixture
def project_dir(loaded_shop: Path, tmp_path: Path) -> Path:
    """A private copy of the loaded shop (`tests/warehouses.py`): `shop` and `shop_extra`
    drifted, `shop_clean` clean, and `ghost` declared but never loaded."""
    root = tmp_path / "project"
    shutil.copytree(loaded_shop / "project", root)
    config = root / ".dlt" / "config.toml"
    config.write_text(config.read_text() + GHOST_SOURCE)
    return root


#: the reason and the name `acked_project` records its acknowledgement with
ACK_REASON = "refunds.reason_code is expected: the producer ships it next sprint"
ACK_BY = "alice"


def cli(root: Path, *args: str) -> str:
    """`dlt-contract-ops ARGS --project-dir ROOT` in process; its stdout."""
    from click.testing import CliRunner

    from dlt_contract_ops.cli import main

    result = CliRunner().invoke(main, [*args, "--project-dir", str(root)])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def acked_project(project_dir: Path) -> Path:
    """`shop_extra`'s only finding (`refunds`: `reason_code`) acknowledged with the real
    `ack` command, after a real `reconcile` showed its id."""
    document = json.loads(cli(project_dir, "reconcile", "-s", "shop_extra", "--dry-run",
                              "--format", "json"))
    (finding,) = [f for r in document["results"] for f in r["findings"]]
    assert (finding["table"], finding["columns"]) == ("refunds", ["reason_code"])
    cli(project_dir, "ack", finding["id"], "--until", "14d", "--reason", ACK_REASON,
        "--by", ACK_BY)
    return project_dir
