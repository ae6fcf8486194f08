"""Loading sinks by name: closest-match hints, options from config and secrets, fix-its."""

from __future__ import annotations

import pytest

from dlt_contract_ops.errors import AlertSinkError
from dlt_contract_ops.settings import project_context
from dlt_contract_ops.sinks.loader import load_sink, unknown_sink_message
from dlt_contract_ops.sinks.logging_sink import LoggingSink
from dlt_contract_ops.sinks.options import as_bool, as_number, read_sink_options
from dlt_contract_ops.sinks.webhook import WebhookSink
from tests.projects import Project


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("sentri", "sentry"),
        ("Sentry", "sentry"),
        ("webhok", "webhook"),
        ("loging", "logging"),
        ("opsgenie", None),
    ],
)
def test_unknown_sink_hint(name: str, hint: str | None) -> None:
    message = unknown_sink_message(name)
    assert message.startswith(f"Unknown alert sink '{name}'.")
    if hint:
        assert f" Did you mean '{hint}'?" in message
    else:
        assert "Did you mean" not in message
    assert "Registered sinks: logging, pagerduty, sentry, webhook." in message


def test_unknown_sink_raises_with_hint() -> None:
    message = r"Unknown alert sink 'sentri'\. Did you mean 'sentry'\?"
    with pytest.raises(AlertSinkError, match=message):
        load_sink("sentri", {})


def test_builtins_take_the_entry_point_path() -> None:
    assert isinstance(load_sink("logging", {}), LoggingSink)


def _webhook_project(project: Project, config: str, secrets: str = "") -> None:
    project.config(config)
    if secrets:
        project.secrets(secrets)


def test_options_merge_config_and_secrets_with_origins(project: Project) -> None:
    _webhook_project(
        project,
        '[contract_ops.alert_sink.webhook]\nformat = "slack"\ntimeout = 2\n',
        '[contract_ops.alert_sink.webhook]\nurl = "http://127.0.0.1:9/hook"\n',
    )
    with project_context(project.root):
        opts = read_sink_options("webhook")
        sink = load_sink("webhook")
    assert {k: (v.value, v.origin, v.secret) for k, v in opts.items()} == {
        "format": ("slack", ".dlt/config.toml", False),
        "timeout": (2, ".dlt/config.toml", False),
        "url": ("http://127.0.0.1:9/hook", ".dlt/secrets.toml", True),
    }
    assert isinstance(sink, WebhookSink)
    assert (sink.format, sink.timeout, sink.url) == ("slack", 2.0, "http://127.0.0.1:9/hook")


def test_environment_wins_and_counts_as_secret(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    _webhook_project(
        project,
        '[contract_ops.alert_sink.webhook]\nformat = "slack"\n',
        '[contract_ops.alert_sink.webhook]\nurl = "http://127.0.0.1:9/a"\n',
    )
    monkeypatch.setenv("CONTRACT_OPS__ALERT_SINK__WEBHOOK__URL", "http://127.0.0.1:9/b")
    monkeypatch.setenv("CONTRACT_OPS__ALERT_SINK__WEBHOOK__SEND_SAMPLES", "false")
    with project_context(project.root):
        opts = read_sink_options("webhook")
        sink = load_sink("webhook")
    assert opts["url"].origin == "environment variable CONTRACT_OPS__ALERT_SINK__WEBHOOK__URL"
    assert isinstance(sink, WebhookSink)
    assert (sink.url, sink.send_samples, sink.format) == ("http://127.0.0.1:9/b", False, "slack")


def test_options_are_typed_by_dlt_through_the_sink_spec(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Environment values arrive as text; dlt coerces them by the constructor's hints."""
    from dlt_contract_ops.sinks.spec import resolve_options

    _webhook_project(
        project,
        '[contract_ops.alert_sink.webhook]\ntimeout = "2.5"\n',  # text where a number goes
        '[contract_ops.alert_sink.webhook]\nurl = "http://h:9/a"\n',
    )
    monkeypatch.setenv("CONTRACT_OPS__ALERT_SINK__WEBHOOK__RETRIES", "7")
    monkeypatch.setenv("CONTRACT_OPS__ALERT_SINK__WEBHOOK__HEADERS", '{"X-Token": "t"}')
    with project_context(project.root):
        given = {k: v.value for k, v in read_sink_options("webhook").items()}
        typed = resolve_options("webhook", WebhookSink, given)
        sink = load_sink("webhook")
    assert given["retries"] == 7  # JSON-parsed from the environment by the reader already
    assert given["timeout"] == "2.5"
    assert typed == {
        "url": "http://h:9/a", "retries": 7, "headers": {"X-Token": "t"}, "timeout": 2.5
    }
    assert isinstance(sink, WebhookSink)
    assert (sink.retries, sink.timeout, sink.headers["X-Token"]) == (7, 2.5, "t")


@pytest.mark.parametrize(
    ("config", "secrets", "message"),
    [
        # a typo'd option names the file and the closest known option
        (
            '[contract_ops.alert_sink.webhook]\nformt = "slack"\n',
            '[contract_ops.alert_sink.webhook]\nurl = "http://127.0.0.1:9/"\n',
            r"Unknown option `formt` for alert sink 'webhook' in "
            r"`\[contract_ops\.alert_sink\.webhook\]` \(\.dlt/config\.toml\)\. Did you mean "
            r"`format`\?",
        ),
        # a secret in config.toml (usually committed) is refused with the fix
        (
            '[contract_ops.alert_sink.webhook]\nurl = "http://127.0.0.1:9/"\n',
            "",
            r"Option `url` of alert sink 'webhook' is a secret but is set in \.dlt/config\.toml: "
            r"move it to `\[contract_ops\.alert_sink\.webhook\]` in \.dlt/secrets\.toml",
        ),
        # a missing required option says where to put it
        (
            '[contract_ops.alert_sink.webhook]\nformat = "json"\n',
            "",
            r"Alert sink 'webhook' needs option `url`: set it in "
            r"`\[contract_ops\.alert_sink\.webhook\]` in \.dlt/secrets\.toml \(or the "
            r"environment variable `CONTRACT_OPS__ALERT_SINK__WEBHOOK__URL`\)",
        ),
        # a value of the wrong kind names the option
        (
            '[contract_ops.alert_sink.webhook]\nformat = "xml"\n',
            '[contract_ops.alert_sink.webhook]\nurl = "http://127.0.0.1:9/"\n',
            r"Option `format` of alert sink 'webhook' must be one of 'json', 'slack', got 'xml'",
        ),
        (
            '[contract_ops.alert_sink.webhook]\ntimeout = "soon"\n',
            '[contract_ops.alert_sink.webhook]\nurl = "http://127.0.0.1:9/"\n',
            r"Option `timeout` of alert sink 'webhook' must be a number >= 0\.001, got 'soon'",
        ),
        (
            "",
            '[contract_ops.alert_sink.webhook]\nurl = "ftp://127.0.0.1/"\n',
            r"Option `url` of alert sink 'webhook' is not an http\(s\) URL with a host "
            r"\(its scheme is 'ftp'\)",
        ),
    ],
)
def test_bad_options_fail_with_file_and_fix(
    project: Project, config: str, secrets: str, message: str
) -> None:
    _webhook_project(project, config or "[runtime]\n", secrets)
    with project_context(project.root), pytest.raises(AlertSinkError, match=message):
        load_sink("webhook")


@pytest.mark.parametrize(
    ("value", "expected"),
    [(True, True), (False, False), ("true", True), ("False", False), ("yes", True),
     ("0", False), (" on ", True)],
)
def test_as_bool(value: object, expected: bool) -> None:
    assert as_bool(value, "s", "o") is expected


@pytest.mark.parametrize("value", ["maybe", 1, None, 2.0])
def test_as_bool_rejects(value: object) -> None:
    with pytest.raises(AlertSinkError, match="Option `o` of alert sink 's' must be true or false"):
        as_bool(value, "s", "o")


@pytest.mark.parametrize(
    ("value", "expected"), [(1, 1.0), (0.5, 0.5), ("2.5", 2.5), ("3", 3.0)]
)
def test_as_number(value: object, expected: float) -> None:
    assert as_number(value, "s", "o") == expected


@pytest.mark.parametrize("value", [-1, "x", True, None, [1]])
def test_as_number_rejects(value: object) -> None:
    with pytest.raises(AlertSinkError, match="must be a number >= 0"):
        as_number(value, "s", "o")


class NotASink:
    """Constructs fine, but implements nothing of AlertSink."""

    def __init__(self) -> None:
        pass


def test_object_without_the_protocol_is_refused() -> None:
    from dlt_contract_ops.sinks.loader import construct

    with pytest.raises(AlertSinkError, match="missing emit_drift, emit_error, flush"):
        construct("odd", NotASink, {})
