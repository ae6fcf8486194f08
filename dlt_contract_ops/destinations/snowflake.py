"""Snowflake: unquoted identifiers fold to upper case.

dlt creates `EVENTS`.`PAYLOAD_SIZE` for its `events`.`payload_size`; the adapter reports them
back lower-case (`live_name`) and spells every name the upper-case way in queries
(`prepare`), while a column made out of band as `"mixedCase"` keeps its spelling both ways.
Importing this module needs no Snowflake library (golden tests build queries offline).
Snowflake has no read-only session switch: the renderer refuses every non-SELECT, and the
role should hold only USAGE and SELECT grants (docs/destinations.md). The adapter stops
waiting after `Timeouts.query`; set `STATEMENT_TIMEOUT_IN_SECONDS` and `LOCK_TIMEOUT` on the
reconciler's user so the warehouse stops the query too.
"""

from __future__ import annotations

from typing import Any, ClassVar

from dlt_contract_ops.destinations.capabilities import Capabilities
from dlt_contract_ops.destinations.execution import SqlClientAdapter
from dlt_contract_ops.destinations.naming import data_location
from dlt_contract_ops.destinations.sql import ParamStyle
from dlt_contract_ops.destinations.timeouts import DEFAULT_TIMEOUTS, Timeouts

#: seconds the connector waits to log in when the credentials set none (its default is 120)
LOGIN_TIMEOUT = 30


class SnowflakeAdapter(SqlClientAdapter):
    """Snowflake through dlt's client; the connection's database holds the dataset schema,
    so `INFORMATION_SCHEMA.COLUMNS` is the database's and is filtered on `table_schema`."""

    name: ClassVar[str] = "snowflake"
    capabilities: ClassVar[Capabilities] = Capabilities(
        dialect="snowflake", read_only="none: give it a role that can only read",
        approximate_distinct=True, prepared_queries=True,
        no_regex="Snowflake's REGEXP_LIKE matches the whole value, not a search as "
                 "Pydantic's pattern does",
    )
    paramstyle: ClassVar[ParamStyle] = "format"
    #: the length Snowflake reports for a `TEXT`/`VARCHAR` declared without one (dlt's
    #: `max_text_data_type_length` for Snowflake): unbounded, not a narrowing
    unbounded_length: ClassVar[int | None] = 16_777_216

    @classmethod
    def from_job_client(
        cls, job_client: Any, *, timeouts: Timeouts = DEFAULT_TIMEOUTS
    ) -> SnowflakeAdapter:
        credentials = job_client.config.credentials
        query = dict(credentials.query or {})
        query.setdefault("login_timeout", LOGIN_TIMEOUT)
        credentials.query = query
        return cls(
            job_client.sql_client, location=data_location(job_client.config), timeouts=timeouts
        )
