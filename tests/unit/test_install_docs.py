"""The install the docs show is one that works: dlt-contract-ops is not on a package index,
so no page tells a reader to `pip install dlt-contract-ops` from one; the README lists every
extra pyproject.toml declares; the wheel it names is the one a build of this tree makes."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["README.md", "docs/quickstart.md", "docs/dlt-plugin.md", "docs/sinks.md",
         "docs/destinations.md", "examples/orchestrators/README.md"]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
#: an install from an index: the bare name, with or without extras or quotes
FROM_INDEX = re.compile(r"pip install ['\"]?dlt-contract-ops(\[[^\]]*\])?['\"]?(\s|`|$)")


@pytest.mark.parametrize("page", PAGES)
def test_no_page_installs_from_an_index(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    assert "pip install" in text
    assert [m.group(0) for m in FROM_INDEX.finditer(text)] == []


def test_the_readme_lists_every_extra() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text[text.index("| extra | what it adds |"):]
    table = table[: table.index("\n\n")]
    listed = set(re.findall(r"`([a-z0-9]+)`", "\n".join(
        row.split("|")[1] for row in table.splitlines()[2:])))
    assert listed == set(PROJECT["optional-dependencies"])


def test_the_wheel_the_docs_name_is_the_one_a_build_makes(tmp_path: Path) -> None:
    source = tmp_path / "clone"  # a copy: the build writes build/ and *.egg-info
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", "tests", "bench"))
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--no-input", "--disable-pip-version-check", "-w", str(tmp_path / "dist"), str(source)],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    [wheel] = [p.name for p in (tmp_path / "dist").iterdir()]
    assert wheel == f"dlt_contract_ops-{PROJECT['version']}-py3-none-any.whl"
    for page in ("README.md", "docs/quickstart.md"):
        assert f"dist/{wheel}[" in (ROOT / page).read_text(encoding="utf-8"), page
