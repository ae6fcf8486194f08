"""Progress on stderr: one line per source when stderr is a terminal, nothing on a pipe."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import threading

from dlt_contract_ops.engine.reconcile import run
from tests.formats.conftest import declare_broken
from tests.projects import Project

ARGS = ("reconcile", "-s", "shop", "-s", "nope", "-s", "shop_extra", "--dry-run",
        "--format", "json")


def _cli_with_terminal_stderr(project: Project, *args: str) -> tuple[int, str, str]:
    """Run the CLI with stderr on a pseudo-terminal and stdout on a pipe."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "dlt_contract_ops.cli", *args],
        cwd=project.root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=follower,
    )
    os.close(follower)
    chunks: list[bytes] = []

    def drain() -> None:  # read while it runs, so a full terminal buffer cannot block it
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the child closed its end
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    stdout, _ = proc.communicate()
    reader.join()
    os.close(leader)
    terminal = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
    return proc.returncode, stdout.decode(), terminal


def test_progress_on_a_terminal(drifted: Project) -> None:
    declare_broken(drifted)
    code, stdout, terminal = _cli_with_terminal_stderr(drifted, *ARGS)
    assert code == 1  # `nope` errored
    lines = [line for line in terminal.splitlines() if line.startswith("[")]
    assert lines == [
        "[1/3] reconciling shop (4 tables)",
        "[2/3] reconciling nope",
        "[3/3] reconciling shop_extra (1 table)",
    ], terminal
    assert "reconciling" not in stdout  # the document stays clean


def test_no_progress_on_a_pipe(drifted: Project) -> None:
    declare_broken(drifted)
    proc = drifted.cli(*ARGS)
    assert proc.returncode == 1
    assert "reconciling" not in proc.stderr
    assert "reconciling" not in proc.stdout


def test_report_shows_progress_on_a_terminal_too(drifted: Project) -> None:
    code, _, terminal = _cli_with_terminal_stderr(
        drifted, "report", "--html", str(drifted.root / "r.html"), "-s", "shop_extra"
    )
    assert code == 0, terminal
    assert "[1/1] reconciling shop_extra (1 table)" in terminal


def test_run_calls_progress_per_source_in_order(drifted: Project) -> None:
    seen: list[tuple[int, int, str, int | None]] = []
    run(["shop_extra", "nope", "shop"], dry_run=True, alert_sinks=(),
        project_dir=drifted.root, progress=lambda *call: seen.append(call))
    assert seen == [(1, 3, "shop_extra", 1), (2, 3, "nope", None), (3, 3, "shop", 4)]
