"""A reconcile from the CLI loads dlt's configuration and reads its settings once: one
project context for the whole command, the name check and the sweep inside it."""

from __future__ import annotations

from typing import Any

import pytest

import dlt_contract_ops.settings.files as settings_files
import dlt_contract_ops.settings.project as project_settings
from tests.projects import Project


def test_reconcile_loads_the_configuration_and_reads_the_settings_once(
    shop_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    entered: list[Any] = []
    computed: list[str] = []
    check_syntax, load_project, load_source = (settings_files._check_toml_syntax,
                                               project_settings._load_project_settings,
                                               project_settings._load_source_settings)

    def counted_entry(target: Any) -> None:
        # `project_context` checks the project's TOML files each time it points dlt's run
        # context at the project (and reloads it); a context within one of the same folder
        # does neither
        entered.append(str(target))
        check_syntax(target)

    def counted_project(check_keys: bool) -> Any:
        computed.append("project")
        return load_project(check_keys)

    def counted_source(name: str, project: Any, check_keys: bool) -> Any:
        computed.append(f"source {name} {check_keys}")
        return load_source(name, project, check_keys)

    monkeypatch.setattr(settings_files, "_check_toml_syntax", counted_entry)
    monkeypatch.setattr(project_settings, "_load_project_settings", counted_project)
    monkeypatch.setattr(project_settings, "_load_source_settings", counted_source)

    proc = shop_project.cli("reconcile", "-s", "shop", "--dry-run", "--format", "json")

    assert proc.returncode == 0, proc.stderr
    assert '"findings"' in proc.stdout  # the sweep ran
    # dlt's configuration is loaded into the project once, not again for the sweep
    assert entered.count(str(shop_project.root)) == 1
    # the name check reads the source without checking its keys, the sweep with
    assert computed == ["project", "source shop False", "source shop True"]
