"""A reconcile from the CLI loads dlt's configuration once: one project context for the whole
command, the name check and the sweep inside it. Seen on the project's files (inotify): a
reconcile opens `.dlt/config.toml` as often as the same command stopped by its name check
does, plus at most one read for the source it sweeps (dlt's pipeline of the source), not
again per step."""

from __future__ import annotations

from tests.file_events import watch
from tests.projects import Project


def test_reconcile_loads_the_configuration_once(shop_project: Project) -> None:
    with watch(shop_project.root / ".dlt") as seen:
        stopped = shop_project.cli("reconcile", "-s", "no_such_source", "--dry-run")
        assert stopped.returncode == 2, stopped.stderr  # refused by the name check
        entered = seen.opened("config.toml")
        assert entered >= 1
        seen.clear()

        proc = shop_project.cli("reconcile", "-s", "shop", "--dry-run", "--format", "json")

        assert proc.returncode == 0, proc.stderr
        assert '"findings"' in proc.stdout  # the sweep ran
        # dlt's configuration is loaded into the project once, not again for the sweep
        assert entered <= seen.opened("config.toml") <= entered + 1
