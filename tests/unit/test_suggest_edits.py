"""The model edits of `reconcile --suggest` on source text: each keeps what it does not touch
byte for byte (comments, quotes, blank lines), and writes the file's own style."""

from __future__ import annotations

from pathlib import Path

import pydantic
import pytest
from dlt.common.normalizers.naming.snake_case import NamingConvention

from dlt_contract_ops.errors import SuggestError
from dlt_contract_ops.model.findings import DriftFinding
from dlt_contract_ops.suggest.edits import TableFacts, suggest
from dlt_contract_ops.suggest.service import _outside

TEXT = '''\
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field


class Outer(BaseModel):
    class Order(BaseModel):  # nested on purpose
        id: int
        status: Literal['new', 'paid']  # single quotes stay
        amount: Annotated[int, Field(ge=0)] | None = None
        code: str = Field(max_length=3)
'''


def _facts(**live: dict[str, object]) -> TableFacts:
    return TableFacts("Outer.Order", NamingConvention(), {}, live)


def _finding(kind: str, columns: list[str], **extra: object) -> DriftFinding:
    return DriftFinding(drift_type=kind, source="s", resource="r", table="t",
                        columns=columns, **extra)


def test_widen_keeps_nullability_and_annotated_metadata() -> None:
    new = suggest(TEXT, _finding("type", ["amount"]), _facts(amount={"data_type": "double"}))
    assert "        amount: Annotated[float, Field(ge=0)] | None = None\n" in new
    assert new.replace("float", "int") == TEXT


def test_a_literal_code_set_gains_the_new_value() -> None:
    finding = _finding("distribution", ["status"], metrics=[
        {"column": "status", "metric": "new_category", "category": "void", "baseline": 0.0,
         "current": 0.1, "change": 0.1}])
    new = suggest(TEXT, finding, _facts())
    assert "status: Literal['new', 'paid', \"void\"]  # single quotes stay" in new


def test_nullable_in_the_file_s_style_and_field_default() -> None:
    new = suggest(TEXT, _finding("missing", ["code"]), _facts(), keep=True)
    assert ("        code: str | None = Field(default=None, max_length=3)  # kept: column "
            "`code` not in the table yet\n") in new


def test_rename_to_a_name_that_needs_an_alias() -> None:
    finding = _finding("rename", ["id", "class"], renamed_from="id", renamed_to="class")
    new = suggest(TEXT, finding, _facts())
    assert '        class_: int = Field(alias="class")  # renamed from `id`\n' in new
    assert '        id: int | None = Field(default=None, deprecated="renamed to `class`")' in new


def test_a_class_or_field_not_there_is_one_error() -> None:
    with pytest.raises(SuggestError, match="class `Order` is not defined"):
        suggest(TEXT, _finding("missing", ["id"]), TableFacts("Order", NamingConvention(), {}))
    with pytest.raises(SuggestError, match="declares no field `gone`"):
        suggest(TEXT, _finding("missing", ["gone"]), _facts())


def test_installed_code_and_files_elsewhere_are_not_patched(tmp_path: Path) -> None:
    installed = Path(pydantic.__file__)
    assert _outside(installed, str(tmp_path)) == "it is installed code (site-packages)"
    assert _outside(tmp_path / "m.py", str(tmp_path / "project")) is not None
    assert _outside(tmp_path / "m.py", str(tmp_path)) is None


def test_a_new_import_goes_where_isort_would_put_it() -> None:
    from dlt_contract_ops.suggest.cst import ensure_imports

    wanted = [("decimal", "Decimal"), ("dlt_contract_ops", "Semantics")]
    assert ensure_imports(
        "from __future__ import annotations\n\nfrom pydantic import BaseModel\n", wanted
    ) == ("from __future__ import annotations\n\nfrom decimal import Decimal\n\n"
          "from pydantic import BaseModel\nfrom dlt_contract_ops import Semantics\n")
    assert ensure_imports(
        "import sys\nfrom typing import Any\n\nimport dlt\n", wanted
    ) == ("import sys\nfrom decimal import Decimal\nfrom typing import Any\n\nimport dlt\n"
          "from dlt_contract_ops import Semantics\n")
    # a name the module imports already is not imported again
    assert ensure_imports("from decimal import Decimal\n", wanted[:1]) == (
        "from decimal import Decimal\n")
