"""Every docstring example in the package runs and says what it shows."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import dlt_contract_ops

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(dlt_contract_ops.__path__, "dlt_contract_ops.")
    if not m.ispkg or m.name.endswith("__init__")
)
#: modules whose examples need a live project or network: marked `# doctest: +SKIP` inside
EXAMPLES_REQUIRED = {
    "dlt_contract_ops.contracts.rules",
    "dlt_contract_ops.contracts.diff",
    "dlt_contract_ops.settings.duration",
    "dlt_contract_ops.settings.keys",
    "dlt_contract_ops.detectors.registry",
    "dlt_contract_ops.output.text",
    "dlt_contract_ops.sinks.dedup_rule",
}


def test_the_walk_finds_the_package() -> None:
    assert len(MODULES) > 40
    assert set(MODULES) >= EXAMPLES_REQUIRED


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    if name in EXAMPLES_REQUIRED:
        assert result.attempted > 0, f"{name} lost its docstring examples"
