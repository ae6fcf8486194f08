"""The one id of a finding: stable across runs for the same source, table, detector and
columns. Acknowledgements, the dedup state and every output name a finding by it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable


def finding_id(source: str, table: str, detector: str, columns: Iterable[str]) -> str:
    """The stable id of a finding: the same drift gets the same id on every run.

    >>> finding_id("shop", "orders", "additive", ["b", "a"])
    '98d0d03472bc'
    """
    body = json.dumps([source, table, detector, sorted(columns)], ensure_ascii=False)
    return hashlib.sha256(body.encode()).hexdigest()[:12]
