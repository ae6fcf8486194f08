"""Which modelled tables a pipeline has loaded: tells an absent table dropped since (`missing`
drift) from one not loaded yet (a note).

dlt keeps that record twice: in the pipeline's local working dir (absent in a fresh cron
container or CI job) and in the dataset itself (`_dlt_version`, the stored schema dlt restores
a pipeline from on a new machine). The local record costs no query and is read first; the
dataset's only when a modelled table is absent and the local record does not know it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from sqlglot import exp

from dlt_contract_ops.core.columns import LiveTable
from dlt_contract_ops.destinations.base import DestinationAdapter
from dlt_contract_ops.destinations.sql import col

log = logging.getLogger("dlt_contract_ops")


def seen_tables(tables: Iterable[tuple[str, Any]]) -> frozenset[str]:
    """Data tables (not dlt's own) that a stored schema marks as having received data.

    >>> sorted(seen_tables([("a", {"x-normalizer": {"seen-data": True}}), ("b", {}),
    ...                     ("_dlt_loads", {"x-normalizer": {"seen-data": True}})]))
    ['a']
    """
    from dlt.common.schema.utils import has_table_seen_data

    return frozenset(
        name for name, table in tables
        if not name.startswith("_dlt") and has_table_seen_data(table)
    )


def local_tables(pipeline_name: str, schema_name: str) -> frozenset[str] | None:
    """Tables the pipeline's stored schema on this machine has loaded; None when the pipeline
    has no local state here (a fresh `DLT_DATA_DIR`)."""
    from dlt_contract_ops.sources.onboarding import attached

    try:
        pipeline = attached(pipeline_name)  # once a run (`onboarding.attach_scope`)
        schema = pipeline.schemas.get(schema_name) if schema_name in pipeline.schemas else None
        if schema is None and pipeline.default_schema_name:
            schema = pipeline.default_schema
    except Exception:  # no local state (CannotRestorePipelineException) or unreadable: unknown
        return None
    if schema is None:
        return None
    return seen_tables(schema.tables.items())


def destination_tables(
    adapter: DestinationAdapter, naming: Any, schema_name: str, live: Mapping[str, LiveTable]
) -> frozenset[str] | None:
    """Tables the newest schema `schema_name` stored in the dataset (`_dlt_version`) has
    loaded: ONE query, run only when the dataset has that table. None when it has no record
    of the schema, or the record cannot be read (logged: the caller decides without it)."""
    stored = stored_schema(adapter, naming, schema_name, live)
    return None if stored is None else seen_tables(stored.get("tables", {}).items())


def stored_schema(
    adapter: DestinationAdapter, naming: Any, schema_name: str, live: Mapping[str, LiveTable]
) -> dict[str, Any] | None:
    """The newest schema `schema_name` stored in the dataset (`_dlt_version`), as dlt's
    dict: ONE query, run only when the dataset has that table. None when it has no record
    of the schema, or the record cannot be read (logged)."""
    from dlt.common.schema.typing import VERSION_TABLE_NAME

    version_table = naming.normalize_table_identifier(VERSION_TABLE_NAME)
    if version_table not in live:
        return None
    try:
        rows = adapter.run(
            stored_schema_query(adapter.table(version_table)), [schema_name], "schema"
        )
    except Exception as exc:  # a record we cannot read is no record: decided without it
        log.warning("reading `%s` of dataset `%s` failed: %s", version_table,
                    adapter.dataset, exc)
        return None
    if not rows or rows[0][0] is None:
        return None
    try:
        value = rows[0][0]
        stored = value if isinstance(value, dict) else json.loads(_schema_text(value))
        if not isinstance(stored, dict):
            raise ValueError("not a JSON object")
        return stored
    except (ValueError, AttributeError) as exc:
        log.warning("the stored schema `%s` in dataset `%s` is unreadable: %s", schema_name,
                    adapter.dataset, exc)
        return None


def stored_schema_query(version_table: exp.Table) -> exp.Select:
    """The newest stored schema of one schema name (one parameter) from dlt's version table
    (`_dlt_version`): what dlt itself reads to restore a pipeline on a fresh machine."""
    return (
        exp.select(col("schema"))
        .from_(version_table)
        .where(exp.EQ(this=col("schema_name"), expression=exp.Placeholder()))
        .order_by(exp.Ordered(this=col("inserted_at"), desc=True))
        .limit(1)
    )


def _schema_text(value: Any) -> str:
    """The stored schema as JSON text: dlt stores it compressed and base64-encoded where the
    destination's text type is too short for it (`_update_schema_in_storage`)."""
    from dlt.common.utils import compressed_b64decode

    text = value.decode() if isinstance(value, bytes | bytearray) else str(value)
    if text.lstrip().startswith("{"):
        return text
    return compressed_b64decode(text).decode("utf-8")
