"""A reconcile from the CLI loads dlt's configuration and reads its settings once: one
project context for the whole command, the name check and the sweep inside it."""

from __future__ import annotations

from typing import Any

import pytest
from dlt.common.configuration.specs.pluggable_run_context import PluggableRunContext

import dlt_contract_ops.settings.project as project_settings
from tests.projects import Project


def test_reconcile_loads_the_configuration_and_reads_the_settings_once(
    shop_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    reloads: list[Any] = []
    computed: list[str] = []
    reload, load_project, load_source = (PluggableRunContext.reload,
                                         project_settings._load_project_settings,
                                         project_settings._load_source_settings)

    def counted_reload(self: Any, *args: Any, **kwargs: Any) -> Any:
        reloads.append(args[:1])
        return reload(self, *args, **kwargs)

    def counted_project(check_keys: bool) -> Any:
        computed.append("project")
        return load_project(check_keys)

    def counted_source(name: str, project: Any, check_keys: bool) -> Any:
        computed.append(f"source {name} {check_keys}")
        return load_source(name, project, check_keys)

    monkeypatch.setattr(PluggableRunContext, "reload", counted_reload)
    monkeypatch.setattr(project_settings, "_load_project_settings", counted_project)
    monkeypatch.setattr(project_settings, "_load_source_settings", counted_source)

    proc = shop_project.cli("reconcile", "-s", "shop", "--dry-run", "--format", "json")

    assert proc.returncode == 0, proc.stderr
    assert '"findings"' in proc.stdout  # the sweep ran
    # the name check reads the source without checking its keys, the sweep with
    assert computed == ["project", "source shop False", "source shop True"]
    # dlt's configuration is loaded into the project once, not again for the sweep
    assert reloads.count((str(shop_project.root),)) == 1
