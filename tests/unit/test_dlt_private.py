"""dlt's private API is used behind one module that checks the installed dlt has each member
it needs, with the parameters it passes, and says in one line which dlt range is supported."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import dlt_contract_ops
from dlt_contract_ops.dlt_private import NEEDED, SUPPORTED_DLT, check, owners
from dlt_contract_ops.errors import ConfigError, UnsupportedDltError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(dlt_contract_ops.__file__).parent.parent


def _stand_ins() -> dict[str, SimpleNamespace]:
    """Stand-ins for dlt's classes holding exactly the members `NEEDED` names, taken from the
    installed dlt (so they pass the check as they are)."""
    real = owners()
    return {
        owner: SimpleNamespace(**{m.name: getattr(cls, m.name) for m in NEEDED
                                  if m.owner == owner})
        for owner, cls in real.items()
    }


def test_the_installed_dlt_has_every_member() -> None:
    check(owners())
    check(_stand_ins())  # the stand-ins below differ from the real thing only where they say


def test_a_missing_member_is_one_line_naming_the_supported_range() -> None:
    stand_ins = _stand_ins()
    del stand_ins["Pipeline"]._install_state_and_schemas

    with pytest.raises(UnsupportedDltError) as raised:
        check(stand_ins)

    message = str(raised.value)
    assert "\n" not in message
    assert "no `Pipeline._install_state_and_schemas`" in message
    assert f"dlt-contract-ops needs dlt{SUPPORTED_DLT}" in message
    assert f"pip install 'dlt{SUPPORTED_DLT}'" in message
    assert isinstance(raised.value, ConfigError)  # the CLI's exit code 2


def test_a_parameter_gone_is_one_line_naming_it() -> None:
    def set_destinations(self: Any, destination: Any, staging: Any = None) -> None:
        """dlt's `_set_destinations` before it took credentials."""

    stand_ins = _stand_ins()
    stand_ins["Pipeline"]._set_destinations = set_destinations

    with pytest.raises(UnsupportedDltError, match=r"`Pipeline._set_destinations` takes no "
                       r"`destination_credentials`: install a supported dlt"):
        check(stand_ins)


def test_a_class_gone_is_one_line() -> None:
    stand_ins = _stand_ins()
    del stand_ins["JsonLItemsNormalizer"]

    with pytest.raises(UnsupportedDltError, match=r"no `JsonLItemsNormalizer.__init__`"):
        check(stand_ins)


def test_pyproject_declares_the_supported_range() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert f"dlt{SUPPORTED_DLT}" in pyproject["project"]["dependencies"]
