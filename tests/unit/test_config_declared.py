"""Each settings table is declared once, by the typed value the code reads it into
(`settings.tables`, `settings.declare`): the dlt spec that resolves it, and so the keys the
unknown-key check allows, are made from that declaration, and a key declared there is read
with its type and named in its error without a second declaration anywhere."""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import timedelta
from typing import Any

import pytest

from dlt_contract_ops.core.distribution import DistributionRule
from dlt_contract_ops.errors import ConfigError
from dlt_contract_ops.settings import project_context
from dlt_contract_ops.settings.declare import INT, Key, key, keys_of, read_keys, table
from dlt_contract_ops.settings.removal import RemovalSettings
from dlt_contract_ops.settings.resolve import _resolve
from dlt_contract_ops.settings.specs import (
    DedupSpec,
    DistributionSpec,
    ProjectSpec,
    RemovalSpec,
    RenameSpec,
    SourceSpec,
    spec_for,
    spec_of,
)
from dlt_contract_ops.settings.tables import DedupSettings, ProjectSettings, SourceSettings
from dlt_contract_ops.settings.values import WHOLE, as_names
from tests.projects import Project


def _declared(cls: Any) -> set[str]:
    """The keys `cls` declares, as its table holds them (`rename.min_confidence`: `rename`)."""
    return {k.path(name)[0] for name, k in keys_of(cls).items()}


def _keys(spec: Any) -> set[str]:
    return set(spec.get_resolvable_fields())


@pytest.mark.parametrize(
    ("spec", "declared", "read_elsewhere"),
    [
        # gate, infer, severity: `settings.gate`, `.infer`, `.severity`; alert_sink:
        # `sinks.options`
        (ProjectSpec, _declared(ProjectSettings), {"gate", "infer", "severity", "alert_sink"}),
        (SourceSpec, _declared(SourceSettings), {"gate", "severity"}),
        (DedupSpec, _declared(DedupSettings), set()),
        (RemovalSpec, {f.name for f in fields(RemovalSettings)}, set()),
        (DistributionSpec, {f.name for f in fields(DistributionRule)}, set()),
        (RenameSpec, {"min_confidence"}, set()),
    ],
    ids=["project", "source", "dedup", "removal", "distribution", "rename"],
)
def test_each_spec_holds_the_keys_its_settings_declare(
    spec: Any, declared: set[str], read_elsewhere: set[str]
) -> None:
    assert _keys(spec) == declared | read_elsewhere


def test_a_table_two_tables_embed_is_one_spec() -> None:
    assert SourceSpec.get_resolvable_fields()["removal"] is RemovalSpec
    assert ProjectSpec.get_resolvable_fields()["removal"] is RemovalSpec
    # `lock_timeout` is the project's key, handed to the dedup settings: not a dedup key
    assert "lock_timeout" not in _keys(DedupSpec)


@dataclass(frozen=True)
class Window:
    size: timedelta = timedelta(hours=1)


@dataclass(frozen=True)
class Example:
    """A table declared as `settings.tables` declares one: one field per key."""

    names: tuple[str, ...] = key(("a",), as_names)
    rows: int = key(5, WHOLE.at, hint=INT)
    window: Window = table(  # noqa: RUF009 (a field: `declare.table`)
        Window, {"size": Key(lambda value, dotted: timedelta(seconds=value), INT)}
    )


def test_one_field_is_a_key_read_and_checked(project: Project) -> None:
    spec = spec_of("ExampleSpec", "`[example]`.", spec_for(keys_of(Example)))
    assert _keys(spec) == {"names", "rows", "window"}
    project.config('[example]\nnames = ["x", "y"]\n[example.window]\nsize = 60\n')
    with project_context(project.root):
        resolved = _resolve(spec(), ("example",))
        read = read_keys(keys_of(Example), resolved, "example", Example())
    assert read == {"names": ("x", "y"), "window": Window(timedelta(seconds=60))}

    bad = Project(project.root.parent / "bad")
    bad.config("[example]\nrows = 0\n")
    with project_context(bad.root), pytest.raises(ConfigError) as info:
        read_keys(keys_of(Example), _resolve(spec(), ("example",)), "example", Example())
    assert "`rows` in `[example]`" in str(info.value)
    assert "must be a whole number >= 1, got 0" in str(info.value)


def test_a_table_of_another_module_names_each_of_its_fields() -> None:
    with pytest.raises(TypeError, match="threshold"):
        table(DistributionRule, {f.name: Key(WHOLE.at) for f in fields(DistributionRule)
                                 if f.name != "threshold"})
    with pytest.raises(TypeError, match="how its value is read"):
        key(1)
