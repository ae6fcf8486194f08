"""Headless Chromium for the HTML report: a screenshot, and what the page's console said."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import in_ci


def chromium() -> str:
    """The Chromium binary; skip on a laptop without one, fail under CI (.ci/run installs
    Debian's `chromium`)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    message = "headless Chromium is not installed (`apt-get install chromium`)"
    if in_ci():
        pytest.fail(f"{message}; CI must run the HTML report tests.")
    pytest.skip(f"{message}; install it to run the HTML report tests.")


def screenshot(page: Path, png: Path) -> list[str]:
    """Render `page` to `png` at 1200x900; return the console messages it logged.

    Chromium logs every console message (errors, uncaught exceptions, blocked loads) on
    stderr as `...:CONSOLE:...` lines; the report has no script, so it should log none.
    """
    proc = subprocess.run(
        [
            chromium(), "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-dev-shm-usage", f"--user-data-dir={png.parent / 'chromium-profile'}",
            f"--screenshot={png}", "--window-size=1200,900",
            "--enable-logging=stderr", "--v=0", page.resolve().as_uri(),
        ],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert png.exists(), proc.stderr
    return [line for line in proc.stderr.splitlines()
            if ":CONSOLE" in line or "Uncaught" in line]


def dump_dom(page: Path, profile: Path, fragment: str = "") -> str:
    """The page's DOM after its scripts ran (`chromium --dump-dom`), opened at `#fragment`
    in a 1200x900 window (as `screenshot` renders)."""
    url = page.resolve().as_uri() + (f"#{fragment}" if fragment else "")
    proc = subprocess.run(
        [
            chromium(), "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--window-size=1200,900",
            "--dump-dom", url,
        ],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def keep_artifact(path: Path) -> None:
    """Copy `path` to `$CI_ARTIFACTS_DIR` when CI sets it (the screenshot a reviewer opens)."""
    target = os.environ.get("CI_ARTIFACTS_DIR")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, Path(target) / path.name)
