"""JSON schemas vendored with the package (see README.md beside this file)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

#: the ODCS JSON schema the export's `apiVersion` is validated against
ODCS_SCHEMA = "odcs-json-schema-v3.1.0.json"


def odcs_schema() -> dict[str, Any]:
    """The vendored ODCS v3.1.0 JSON schema, parsed."""
    text = resources.files(__name__).joinpath(ODCS_SCHEMA).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
