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


def test_removal_overrides_are_checked_once_per_run(shop_project: Project) -> None:
    """`--recent-window` is read once for the whole command (its DEBUG line), and the sweep
    puts the checked value over each source's settings without reading it again."""
    proc = shop_project.cli("-v", "reconcile", "--all", "--dry-run", "--include-removal",
                            "--recent-window", "2h", "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    assert proc.stdout.count('"source":') >= 2  # more than one source swept
    checked = [line for line in proc.stderr.splitlines()
               if "removal overrides checked" in line]
    assert len(checked) == 1, checked
    assert "recent_window = 2:00:00" in checked[0]
