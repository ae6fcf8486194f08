"""Type names of dlt's `sqlalchemy` destination read back as dlt data types.

Its own module so `sqlalchemy.py` stays about the session; no SQLAlchemy import here (the
adapter passes the dialect and its parser in).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class SqlaTypeNames:
    """dlt's SqlalchemyTypeMapper reads SQLAlchemy type objects; detectors have type names.

    `from_destination_type("BIGINT")` parses the name with the backend's dialect first.
    """

    def __init__(self, mapper: Any, dialect: Any, parse: Callable[[Any, str], Any]) -> None:
        self._mapper = mapper
        self._dialect = dialect
        self._parse = parse
        self.dbt_to_sct: dict[str, str] = {}

    def from_destination_type(
        self, db_type: str, precision: int | None = None, scale: int | None = None
    ) -> dict[str, Any]:
        sa_type = self._parse(self._dialect, db_type)
        if sa_type is None:
            return {}
        try:
            return dict(self._mapper.from_destination_type(sa_type, precision, scale))
        except Exception:  # dlt raises for types it has no mapping for: no judgement
            return {}
