"""A released contract (a snapshot) or a waivers file with a byte that is not UTF-8 is
refused in one line naming the file and line, exit 2: a committed file is never read in part
(it was a UnicodeDecodeError traceback). The CLI in process on a real project."""

from __future__ import annotations

from pathlib import Path

from tests.contracts.air_project import in_project, invoke, write_source
from tests.projects import Project

__all__ = ["in_project"]  # the fixture, used by every test here


def _flip(path: Path) -> int:
    """A byte that is never UTF-8 in place of the file's fourth; the line it is on."""
    data = path.read_bytes()
    path.write_bytes(data[:3] + b"\xff" + data[4:])
    return data.count(b"\n", 0, 3) + 1


def test_a_snapshot_with_a_bad_byte_is_refused_in_one_line(project: Project) -> None:
    write_source(project, "seat")
    assert invoke(project, "snapshot", "-s", "air", "--version", "1.0.0")[0] == 0
    (doc_path,) = (project.root / "contracts" / "air" / "1.0.0").iterdir()
    line = _flip(doc_path)
    code, out = invoke(project, "check", "-s", "air")
    assert code == 2, out
    assert f"`{doc_path}` line {line} is not UTF-8 text" in out
    assert "Traceback" not in out
    # writing the same release again sees a changed file: refused as any change is
    code, out = invoke(project, "snapshot", "-s", "air", "--version", "1.0.0")
    assert code == 2, out
    assert f"`{doc_path}` differs" in out


def test_a_waivers_file_with_a_bad_byte_is_refused_in_one_line(project: Project) -> None:
    write_source(project, "seat")
    assert invoke(project, "snapshot", "-s", "air", "--version", "1.0.0")[0] == 0
    waivers = project.root / "waivers.toml"
    waivers.write_text('[[waivers]]\nrule = "unit.changed"\nresource = "flights"\n'
                       'reason = "s\\u00e9at"\n', encoding="utf-8")
    _flip(waivers)
    code, out = invoke(project, "check", "-s", "air", "--waivers", str(waivers))
    assert code == 2, out
    assert f"`{waivers}` line 1 is not UTF-8 text" in out
    assert "Traceback" not in out
