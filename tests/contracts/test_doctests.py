"""The examples in the contracts core's docstrings run and say what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ("rules", "model", "diff", "gate", "semantics", "store", "waivers")


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(f"dlt_contract_ops.contracts.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no docstring example"
    assert result.failed == 0
