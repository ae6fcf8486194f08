"""The repository's `.dlt/config.toml`: every `[contract_ops]` key with the code's default, all
commented out; and `.dlt/secrets.toml.example`, holding each built-in sink's secret options."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from dlt_contract_ops.settings.specs import ProjectSpec
from dlt_contract_ops.settings.template import EXAMPLE, config_template
from tests.conftest import PROFILES_MIN_ROWS
from tests.projects import Project

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / ".dlt" / "config.toml"
SECRETS = ROOT / ".dlt" / "secrets.toml.example"
#: a commented `# [table]` header or `# key = value` line
_LINE = re.compile(r"^# (\[[\w.]+\](?:\s+#.*)?|\w+ = .*)$")


def _uncommented(text: str, *, examples: bool) -> str:
    """The file's commented headers and keys as live TOML; `examples=False` leaves out the
    keys shown with an example value (their default is "unset")."""
    return "\n".join(
        m.group(1) for line in text.splitlines()
        if (m := _LINE.match(line)) and (examples or f"# {EXAMPLE}" not in line)
    )


def test_the_file_is_generated_from_the_settings() -> None:
    # a key added to a spec, or a default changed in the code, makes this fail until the file
    # is regenerated: python -m dlt_contract_ops.settings.template > .dlt/config.toml
    assert CONFIG.read_text(encoding="utf-8") == config_template()


def test_every_key_is_there_and_commented_out() -> None:
    text = CONFIG.read_text(encoding="utf-8")
    assert tomllib.loads(text) == {}  # dlt reads nothing from it (`make bench` runs here)
    shown = tomllib.loads(_uncommented(text, examples=True))["contract_ops"]
    for key, hint in ProjectSpec.get_resolvable_fields().items():
        assert key in shown, f"`[contract_ops] {key}` is missing from {CONFIG}"
        if isinstance(hint, type) and hasattr(hint, "get_resolvable_fields"):
            assert set(shown[key]) == set(hint.get_resolvable_fields()), key
    assert set(shown) == set(ProjectSpec.get_resolvable_fields())


def test_its_defaults_read_as_the_codes(project: Project, monkeypatch: pytest.MonkeyPatch
                                        ) -> None:
    """Uncommented, the file's defaults give exactly the settings an empty project gets."""
    monkeypatch.delenv(PROFILES_MIN_ROWS)  # the suite's own setting: not a default
    from dlt_contract_ops.settings.files import project_context
    from dlt_contract_ops.settings.gate import gate_settings
    from dlt_contract_ops.settings.infer import code_set_thresholds
    from dlt_contract_ops.settings.project import ProjectSettings, load_project_settings

    def read(folder: Path) -> tuple[object, ...]:
        with project_context(str(folder)):
            return load_project_settings(), gate_settings(None), code_set_thresholds()

    empty = read(project.root)
    assert empty[0] == ProjectSettings()
    written = Project(project.root.parent / "written")
    written.config(_uncommented(CONFIG.read_text(encoding="utf-8"), examples=False))
    assert "sample_window" in (written.root / ".dlt" / "config.toml").read_text()
    assert read(written.root) == empty


def test_the_secrets_example_holds_each_sinks_secrets() -> None:
    from dlt_contract_ops.sinks.sentry_sink import SentrySink
    from dlt_contract_ops.sinks.webhook import WebhookSink

    text = SECRETS.read_text(encoding="utf-8")
    assert tomllib.loads(text) == {}
    sinks = tomllib.loads(_uncommented(text, examples=True))["contract_ops"]["alert_sink"]
    assert {name: set(options) for name, options in sinks.items()} == {
        "webhook": set(WebhookSink.secret_options), "sentry": set(SentrySink.secret_options),
    }
