"""Names and free text reach a terminal with every control, bidi and other unprintable
character written as a visible escape (`core.escaping.visible`), everywhere text is printed."""

from __future__ import annotations

import pytest

from dlt_contract_ops.core.escaping import visible
from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult
from dlt_contract_ops.output.text import text_name, to_text
from dlt_contract_ops.sinks.base import ErrorEvent
from dlt_contract_ops.sinks.logging_sink import drift_detail, drift_line, error_line

HOSTILE = "evil\x1b[31m\a\u202etxt.exe"
RAW = ("\x1b", "\a", "\u202e", "\x7f", "\x9b", "\u2028", "\u2066", "\ufeff")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain größe", "plain größe"),
        ("a\x1b[31mb", "a\\u001b[31mb"),
        ("bell\a", "bell\\u0007"),
        ("\u202eabc", "\\u202eabc"),
        ("del\x7f c1\x9b", "del\\u007f c1\\u009b"),
        ("x\ny\r\tz", "x\\ny\\r\\tz"),
        ("line\u2028sep", "line\\u2028sep"),
        ("tag\U000e0041", "tag\\U000e0041"),
        ("already \\u001b", "already \\u001b"),
    ],
)
def test_visible(text: str, shown: str) -> None:
    assert visible(text) == shown
    assert visible(shown) == shown  # its output is printable: escaping twice changes nothing


def _clean(text: str) -> None:
    assert not any(c in text for c in RAW), ascii(text)


def test_every_text_rendering_escapes_a_hostile_name() -> None:
    assert text_name(HOSTILE) == '"evil\\u001b[31m\\u0007\\u202etxt.exe"'
    finding = DriftFinding(
        drift_type="additive", pipeline="p", source="s", resource=HOSTILE, table="t",
        columns=[HOSTILE], column_types={HOSTILE: "VARCHAR\u202e"},
        reproduce=f'SELECT "{HOSTILE}" FROM t',
    )
    result = ReconcileResult(source="s\x1b", detector="additive", findings=[finding],
                             notes=[f"note on {HOSTILE}"])
    for text in (to_text([result]), drift_line(finding), drift_detail(finding),
                 error_line(ErrorEvent(source="s", resource=HOSTILE,
                                       message=f"query on `{HOSTILE}` failed"))):
        _clean(text)
        assert "\\u001b[31m\\u0007\\u202etxt.exe" in text
