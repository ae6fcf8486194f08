"""`ack`, `acks` and `unack` refuse bad input and a held lock in one line, exit 2; the
listing cannot be forged by a reason or a name holding a line break or a terminal control."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from click.testing import CliRunner
from filelock import FileLock

from dlt_contract_ops.acks.store import ACKS_FILE, Ack, _lock_path, add_ack, read_acks
from dlt_contract_ops.commands import main
from dlt_contract_ops.commands.common import EXIT_USAGE
from tests.projects import Project

FID = "0123456789ab"


def _cli(root: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [*args, "--project-dir", str(root)])
    return result.exit_code, result.stdout, result.stderr


def _one_line_error(stderr: str, *needles: str) -> None:
    assert "Traceback" not in stderr
    [line] = stderr.splitlines()
    assert line.startswith("Error: ")
    for needle in needles:
        assert needle in line


def test_an_until_beyond_the_calendar_is_one_line_exit_2(project: Project) -> None:
    code, _, err = _cli(project.root, "ack", FID, "--until", "99999999d", "--reason", "r",
                        "--force")
    assert code == EXIT_USAGE
    _one_line_error(err, "--until 99999999d")
    assert not (project.root / ACKS_FILE).exists()


def test_ack_and_unack_while_the_lock_is_held_are_one_line_exit_2(project: Project) -> None:
    # they wait `[contract_ops] lock_timeout` for the lock, not a fixed 10 s
    project.config("""
        [contract_ops]
        lock_timeout = "1s"
    """)
    lock = _lock_path(project.root / ACKS_FILE)
    lock.parent.mkdir(parents=True, exist_ok=True)
    # the lock `ack` takes (statefile.locked: `<path>.lock`), held as a second `ack` would
    with FileLock(lock.with_name(lock.name + ".lock")):
        code, _, err = _cli(project.root, "ack", FID, "--until", "1d", "--reason", "r",
                            "--force")
        assert code == EXIT_USAGE
        _one_line_error(err, "is held by another process for more than 1s")
        code, _, err = _cli(project.root, "unack", FID)
        assert code == EXIT_USAGE
        _one_line_error(err, "is held by another process for more than 1s")
    code, _, err = _cli(project.root, "ack", FID, "--until", "1d", "--reason", "r", "--force")
    assert code == 0, err  # released: the same command goes through


def test_a_reason_cannot_forge_a_line_of_the_listing(project: Project) -> None:
    forged = "ok\nba9876543210  active   until 2099-01-01T00:00:00+00:00  by boss: fine"
    code, _, err = _cli(project.root, "ack", FID, "--until", "1d", "--reason",
                        forged + "\x1b[2J\u202e", "--by", "eve\a", "--force")
    assert code == 0, err
    [entry] = read_acks(project.root / ACKS_FILE)[0]
    assert entry.reason.startswith("ok\nba98")  # the file keeps the reason as written
    code, out, _ = _cli(project.root, "acks")
    assert code == 0
    [line] = out.splitlines()
    assert line.startswith(FID)
    assert "ok\\nba9876543210" in line
    assert "\\u001b[2J\\u202e" in line
    assert "by eve\\u0007:" in line
    assert not any(c in line for c in "\x1b\a\u202e")


def test_a_bad_lock_timeout_is_one_line_exit_2(project: Project) -> None:
    project.config("""
        [contract_ops]
        lock_timeout = "soon"
    """)
    code, _, err = _cli(project.root, "ack", FID, "--until", "1d", "--reason", "r", "--force")
    assert code == EXIT_USAGE
    _one_line_error(err, "`lock_timeout` in `[contract_ops]`", "soon")
    assert not (project.root / ACKS_FILE).exists()


def test_the_json_listing_says_which_entries_expired_as_the_text_does(project: Project) -> None:
    """`acks --format json` has `expired` for each entry, the same as the text listing's
    `expired`/`active` (before, the JSON had no expiry of its own to read)."""
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    path = project.root / ACKS_FILE
    for fid, until in ((FID, now - dt.timedelta(days=1)),
                       ("ba9876543210", now + dt.timedelta(days=1))):
        add_ack(path, Ack(id=fid, until=until, reason="r", by="ana",
                          created=now - dt.timedelta(days=2)))
    code, out, err = _cli(project.root, "acks")
    assert code == 0, err
    text = {line.split()[0]: line.split()[1] == "expired" for line in out.splitlines()}
    code, out, err = _cli(project.root, "acks", "--format", "json")
    assert code == 0, err
    listed = {a["id"]: a["expired"] for a in json.loads(out)}
    assert listed == text == {FID: True, "ba9876543210": False}
