"""PostgreSQL: every session starts with `default_transaction_read_only = on`.

The setting goes in as a startup option (`-c ...` in libpq's `options`), not as a `SET`:
dlt's psycopg2 client resets the connection after a failed query (`RESET ALL`), which would
revert a `SET`, while a startup option stays the session default for its whole life.
"""

from __future__ import annotations

from typing import Any, ClassVar

from dlt_contract_ops.destinations.base import SqlClientAdapter, data_location
from dlt_contract_ops.destinations.sql import ParamStyle

READ_ONLY_OPTION = "-c default_transaction_read_only=on"
#: seconds libpq waits for a connection when the credentials set none (libpq's 0 = forever)
CONNECT_TIMEOUT = 10


class PostgresAdapter(SqlClientAdapter):
    """PostgreSQL through dlt's psycopg2 client; `information_schema.columns`, `%s` params.

    PostgreSQL has no partition column in dlt's sense: dlt does not create partitioned
    tables there, so `partition_column` reports none.
    """

    name: ClassVar[str] = "postgres"
    dialect: ClassVar[str] = "postgres"
    paramstyle: ClassVar[ParamStyle] = "format"

    @classmethod
    def from_job_client(cls, job_client: Any) -> PostgresAdapter:
        credentials = job_client.config.credentials
        make_read_only(credentials)
        return cls(job_client.sql_client, location=data_location(job_client.config))


def make_read_only(credentials: Any) -> None:
    """Add the read-only startup option to dlt `PostgresCredentials`; never wait forever.

    Appended last, so it wins over a `default_transaction_read_only` a user put in
    `options` themselves.
    """
    query = dict(credentials.query or {})
    options = str(query.get("options") or "")
    query["options"] = f"{options} {READ_ONLY_OPTION}".strip()
    credentials.query = query
    timeout = getattr(credentials, "connect_timeout", None)
    if not timeout:
        credentials.connect_timeout = CONNECT_TIMEOUT
