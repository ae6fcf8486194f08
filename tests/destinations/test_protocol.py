"""`DestinationAdapter` is the extension point: it lists every member the reconciler calls on
an adapter, and a class registered in the `dlt_contract_ops.destinations` entry-point group is
checked when it loads, with an error that names the missing members, the entry point and the
distribution. The plugin here is a real distribution on `sys.path`, found by importlib."""

from __future__ import annotations

import inspect
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from dlt_contract_ops import registry
from dlt_contract_ops.destinations.connect import adapter_class
from dlt_contract_ops.destinations.protocol import MEMBERS, DestinationAdapter, protocol_problems
from dlt_contract_ops.errors import UnsupportedDestinationError

PLUGIN = """
from typing import Any, ClassVar

from dlt_contract_ops.destinations.base import SqlClientAdapter
from dlt_contract_ops.destinations.capabilities import Capabilities


class Incomplete:
    '''Written against an old idea of the protocol: no run_all, no cancel, ...'''

    name: ClassVar[str] = "fakedb"
    capabilities: ClassVar[Capabilities] = Capabilities("postgres", "a read-only role")

    def run(self, query: Any, params: Any, kind: Any) -> list[Any]:
        return []

    def list_columns(self) -> dict[str, Any]:
        return {}


class OldFactory(SqlClientAdapter):
    name: ClassVar[str] = "fakedb_old"

    @classmethod
    def from_job_client(cls, job_client: Any) -> "OldFactory":
        return cls(job_client.sql_client)


class Complete(SqlClientAdapter):
    name: ClassVar[str] = "fakedb_ok"
    capabilities: ClassVar[Capabilities] = Capabilities("postgres", "a read-only role")


class Undeclared(SqlClientAdapter):
    '''Written before capabilities: `dialect` was a class attribute.'''

    name: ClassVar[str] = "fakedb_old_style"
    dialect: ClassVar[str] = "clickhouse"


class Misdeclared(SqlClientAdapter):
    name: ClassVar[str] = "fakedb_wrong"
    capabilities: ClassVar[Capabilities] = Capabilities(
        "nosuchsql", " ", pool_size=0, over_files=True)


class Untyped(SqlClientAdapter):
    name: ClassVar[str] = "fakedb_dict"
    capabilities = {"dialect": "postgres"}
"""


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """An installed distribution `fake-co-adapters 0.3` registering three adapters; yields
    the module name."""
    site = tmp_path / "site"
    module = f"fake_co_adapters_{uuid.uuid4().hex[:8]}"
    info = site / "fake_co_adapters-0.3.dist-info"
    info.mkdir(parents=True)
    (site / f"{module}.py").write_text(textwrap.dedent(PLUGIN))
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: fake-co-adapters\nVersion: 0.3\n"
    )
    (info / "entry_points.txt").write_text(
        "[dlt_contract_ops.destinations]\n"
        f"fakedb = {module}:Incomplete\n"
        f"fakedb_old = {module}:OldFactory\n"
        f"fakedb_ok = {module}:Complete\n"
        f"fakedb_old_style = {module}:Undeclared\n"
        f"fakedb_wrong = {module}:Misdeclared\n"
        f"fakedb_dict = {module}:Untyped\n"
    )
    monkeypatch.syspath_prepend(str(site))
    registry.clear_cache()
    yield module
    registry.clear_cache()  # the next lookup rescans, without the plugin


def test_members_are_exactly_what_the_protocol_declares() -> None:
    declared = set(DestinationAdapter.__annotations__)
    for name, value in vars(DestinationAdapter).items():
        if not name.startswith("_") and (
            inspect.isfunction(value) or isinstance(value, property | classmethod)
        ):
            declared.add(name)
    assert set(MEMBERS) == declared
    assert len(MEMBERS) == len(set(MEMBERS))


@pytest.mark.parametrize("name", sorted(registry.registered(registry.DESTINATION_GROUP)))
def test_every_builtin_adapter_implements_the_protocol(name: str) -> None:
    cls = adapter_class(name)
    assert protocol_problems(cls) == []
    assert isinstance(cls.offline("raw"), DestinationAdapter)  # type: ignore[attr-defined]


def test_an_incomplete_adapter_is_refused_when_it_loads(plugin: str) -> None:
    with pytest.raises(UnsupportedDestinationError) as info:
        adapter_class("fakedb")
    message = str(info.value)
    assert message.startswith(
        "The destination adapter registered as `fakedb` in the entry-point group "
        f"`dlt_contract_ops.destinations` (`{plugin}:Incomplete`, from distribution "
        "`fake-co-adapters 0.3`) does not implement the DestinationAdapter protocol: "
    )
    missing = [m for m in MEMBERS if m not in ("name", "capabilities", "run", "list_columns")]
    assert "; ".join(f"missing `{m}`" for m in missing) in message
    assert "missing `run`;" not in message
    assert "subclassing `dlt_contract_ops.destinations.base.SqlClientAdapter`" in message
    assert message.endswith("or upgrade or uninstall `fake-co-adapters`.")


def test_a_factory_that_cannot_take_timeouts_is_refused(plugin: str) -> None:
    with pytest.raises(UnsupportedDestinationError) as info:
        adapter_class("fakedb_old")
    assert "(`" + plugin + ":OldFactory`, from distribution `fake-co-adapters 0.3`)" in str(
        info.value
    )
    assert "`from_job_client` does not accept the keyword `timeouts`" in str(info.value)


def test_an_adapter_that_declares_no_capabilities_is_refused_in_one_line(plugin: str) -> None:
    with pytest.raises(UnsupportedDestinationError) as info:
        adapter_class("fakedb_old_style")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(
        "The destination adapter registered as `fakedb_old_style` in the entry-point group "
        f"`dlt_contract_ops.destinations` (`{plugin}:Undeclared`, from distribution "
        "`fake-co-adapters 0.3`) does not implement the DestinationAdapter protocol: "
        "`capabilities` is annotated but not set: declare `capabilities = "
        "Capabilities(dialect=..., read_only=...)` on the class. "
    )


def test_a_wrong_capabilities_declaration_names_each_problem(plugin: str) -> None:
    with pytest.raises(UnsupportedDestinationError) as info:
        adapter_class("fakedb_wrong")
    message = str(info.value)
    assert "\n" not in message
    assert f"(`{plugin}:Misdeclared`, from distribution `fake-co-adapters 0.3`)" in message
    assert (
        "protocol: `capabilities.dialect` `nosuchsql` is not a sqlglot dialect; "
        "`capabilities.read_only` is empty: say how the session is read-only; "
        "`capabilities.pool_size` is 0: at least 1; "
        "`capabilities.over_files` without `read_problems`; "
        "`capabilities.over_files` without `files_read`; "
        "`capabilities.over_files` without `table_folder`. "
    ) in message
    with pytest.raises(UnsupportedDestinationError, match=(
        r"protocol: `capabilities` is a `dict`, not a "
        r"`dlt_contract_ops\.destinations\.capabilities\.Capabilities`\. ")):
        adapter_class("fakedb_dict")


def test_a_complete_third_party_adapter_loads(plugin: str) -> None:
    cls = adapter_class("fakedb_ok")
    assert (cls.__module__, cls.__name__) == (plugin, "Complete")


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (object(), "the entry point names a `object` object, not a class"),
        (int, "missing `name`"),
    ],
)
def test_protocol_problems_of_what_is_not_an_adapter(value: object, problem: str) -> None:
    assert protocol_problems(value)[0] == problem
