"""A pipeline whose destination credentials (PostgreSQL) or bucket (filesystem) are given in
code, not in dlt's configuration: `reconcile` cannot see them, and `validate` says so too
(it said "project is valid", then `reconcile` refused with some thirty lines of dlt's trace).
Both exit 2 with one line naming the source, the keys and where to set them; nothing is
alerted."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from dlt_contract_ops.commands import main
from tests.conftest import require_server
from tests.integration.test_terminal_controls import SOURCE as APP
from tests.projects import Project
from tests.servers import Receiver

PG_DSN = "postgresql://postgres:x@127.0.0.1:5432/test"


def _destination(kind: str, root: Path) -> tuple[str, str]:
    """(the destination as the pipeline's code builds it, what the one line must name)."""
    if kind == "postgres":
        require_server("127.0.0.1", 5432, "PostgreSQL")
        return f"dlt.destinations.postgres(credentials={PG_DSN!r})", "`password`"
    return f"dlt.destinations.filesystem(bucket_url={str(root / 'lake')!r})", "`bucket_url`"


@pytest.mark.parametrize("kind", ["postgres", "filesystem"])
def test_a_destination_configured_only_in_code_is_refused_alike(
    project: Project, kind: str
) -> None:
    dataset = f"in_code_{uuid.uuid4().hex[:8]}"
    built, key = _destination(kind, project.root)
    project.module("app_mod", APP)
    project.python(f"""
        import dlt
        from app_mod import app

        dlt.pipeline("code_pipe", destination={built}, dataset_name={dataset!r}).run(app())
    """)
    with Receiver() as hook:
        project.config('[contract_ops]\nalert_sinks = ["webhook"]\n')
        project.secrets(f'[contract_ops.alert_sink.webhook]\nurl = "{hook.url}"\n')
        # destination and dataset from the pipeline's local state, as a user onboards it
        project.source("app", "app_mod:app", pipeline_name="code_pipe", destination=None)

        checked = CliRunner().invoke(main, ["validate", "--format", "json",
                                            "--project-dir", str(project.root)])
        assert checked.exit_code == 2, checked.output
        [problem] = json.loads(checked.stdout)["problems"]
        assert problem["rule"] == "destination_adapter"

        swept = CliRunner().invoke(main, ["reconcile", "--all", "--format", "json",
                                          "--project-dir", str(project.root)])
        assert swept.exit_code == 2, swept.output
        [result] = json.loads(swept.stdout)["results"]
        # the same one line from both commands
        assert result["error"] == problem["message"]
        message = problem["message"]
        assert "\n" not in message
        assert "\t" not in message
        assert f"`{kind}`" in message
        assert "`code_pipe`" in message
        assert key in message
        assert "pipeline's code" in message
        assert hook.requests == []
