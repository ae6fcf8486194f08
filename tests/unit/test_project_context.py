"""`project_context` inside one for the same folder changes nothing, and the settings read in
a context are kept for it (a different environment reads them again); a new context sees
what changed in the files."""

from __future__ import annotations

import dlt
import pytest

from dlt_contract_ops.settings import load_project_settings, project_context
from tests.projects import Project


def _timeout() -> float:
    return load_project_settings().query_timeout


def test_settings_are_read_once_per_context_and_environment(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.config('[contract_ops]\nquery_timeout = "2m"\n')
    with project_context(project.root):
        first = load_project_settings()
        project.config('[contract_ops.removal]\nrecent_window = "1h"\n')  # an edit meanwhile
        assert load_project_settings() is first  # kept for the context
        with project_context(project.root):  # the same folder: nothing reloads
            assert load_project_settings() is first
        monkeypatch.setenv("CONTRACT_OPS__QUERY_TIMEOUT", "30")
        assert _timeout() == 30.0  # another environment: read again
        monkeypatch.delenv("CONTRACT_OPS__QUERY_TIMEOUT")
        assert load_project_settings() is first
    with project_context(project.root):  # a new context reads the edited file
        assert load_project_settings().removal.recent_window.total_seconds() == 3600


def test_a_context_for_another_folder_inside_one_is_its_own(
    project: Project, tmp_path_factory: pytest.TempPathFactory
) -> None:
    other = Project(tmp_path_factory.mktemp("other") / "project")
    project.config('[contract_ops]\nquery_timeout = "2m"\n')
    other.config('[contract_ops]\nquery_timeout = "3m"\n')
    with project_context(project.root):
        assert _timeout() == 120.0
        with project_context(other.root):
            assert _timeout() == 180.0
            assert dlt.current.run_context().run_dir == str(other.root)
        assert _timeout() == 120.0
        assert dlt.current.run_context().run_dir == str(project.root)
