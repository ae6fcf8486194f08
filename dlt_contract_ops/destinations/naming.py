"""Names both ways: what the destination's catalog reports, read back as dlt's names, and
dlt's names spelled the way the catalog stores them; the one metadata query per dataset.

`CatalogNames` holds what the last metadata query reported, so later queries spell each table
and column exactly as the destination has it (`SqlClientAdapter.prepare`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from sqlglot import exp

from dlt_contract_ops.core.columns import LiveColumn, LiveTable
from dlt_contract_ops.destinations.sql import param, table_ref
from dlt_contract_ops.destinations.typesize import (
    NO_SIZE,
    TypeSize,
    catalog_size,
    parse_size,
    spelled,
)

__all__ = ["CatalogNames", "capabilities", "data_location"]

#: what an unquoted identifier may hold on every SQL destination dlt supports
_PLAIN_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_$]*")


def data_location(config: Any) -> str:
    """Where a dlt destination config points (host/port/database or file), without secrets.

    Two sources whose datasets share a name on different servers must not share a metadata
    cache entry, so the reconciler keys its cache on this.
    """
    for getter in ("data_location", "fingerprint"):
        try:
            value = getattr(config, getter)()
        except Exception:  # a config without that information raises; try the next
            continue
        if value:
            return str(value)
    return ""


def capabilities(destination_type: str) -> Any:
    """dlt's capabilities of a destination type: no credentials, no driver needed."""
    from dlt.common.destination import Destination

    factory = Destination.from_reference(destination_type)
    assert factory is not None  # from_reference returns None only for a None reference
    return factory.capabilities()


class CatalogNames:
    """The naming half of an adapter: dataset and catalog, casefolding both ways, table
    references, and the metadata query with the rows it returns read as live tables."""

    #: the column of information_schema.columns that holds the dataset (schema) name
    metadata_schema_column: ClassVar[str] = "table_schema"
    #: information_schema columns the metadata query reads a type's size from, in the order
    #: `catalog_size` takes them; empty where the catalog has none and the size is in the
    #: type's name (`parse_size`: MySQL's `COLUMN_TYPE`, BigQuery)
    metadata_size_columns: ClassVar[tuple[str, ...]] = (
        "character_maximum_length", "numeric_precision", "numeric_precision_radix",
        "numeric_scale",
    )
    #: a reported text length from which on the text is unbounded (Snowflake's `TEXT`)
    unbounded_length: ClassVar[int | None] = None

    def __init__(
        self, *, dataset: str, catalog: str | None, casefold: Callable[[str], str]
    ) -> None:
        self._dataset = dataset
        self._catalog = catalog
        self.casefold = casefold
        # from the last metadata query: live table name -> dlt-side column -> (live name, type)
        self._catalog_columns: dict[str, dict[str, tuple[str, str]]] = {}
        self._live_tables: dict[str, str] = {}  # dlt-side table name -> live table name

    @property
    def dataset(self) -> str:
        """The dataset name as dlt's schema knows it."""
        return self._dataset

    @property
    def catalog(self) -> str | None:
        """The catalog (BigQuery project) tables are qualified with, if any."""
        return self._catalog

    @property
    def live_dataset(self) -> str:
        """The dataset name as the destination's catalog spells it."""
        return self.casefold(self.dataset)

    def live_name(self, name: str) -> str:
        """Map a name the destination reports back to the name dlt's schema uses.

        Destinations that casefold unquoted identifiers (Snowflake: upper) report dlt's
        lower-case names folded; a name that folds to itself came from dlt and is unfolded.
        """
        if self.casefold is str or self.casefold(name.lower()) != name:
            return name
        return name.lower()

    def to_live(self, name: str) -> str:
        """The destination's spelling of a dlt-side `name` (inverse of `live_name`).

        Names the last metadata query reported are looked up exactly (`prepare`, `table`);
        this is the rule for the others: dlt's casefolding for a plain identifier
        (`payload_size` -> `PAYLOAD_SIZE` on Snowflake), the name as it is when folding would
        not read back as it (`userId`) or when only a quoted identifier can hold it
        (`ip-address`, `größe`): such a column was made out of band, quoted.
        """
        folded = self.casefold(name)
        if folded == name:
            return name
        if self.live_name(folded) == name and _PLAIN_IDENTIFIER.fullmatch(name):
            return folded
        return name

    def table(self, name: str) -> exp.Table:
        """A fully qualified, quoted reference to `name` in the dataset."""
        live = self._live_tables.get(name) or self.to_live(name)
        return table_ref(live, self.live_dataset, self.catalog)

    def catalog_column(self, tables: Sequence[str], column: str) -> tuple[str, str] | None:
        """(live spelling, type) of a dlt-side `column` of the first of the live `tables`
        the last metadata query reported it in."""
        for t in tables:
            found = self._catalog_columns.get(t, {}).get(column)
            if found is not None:
                return found
        return None

    # -- metadata -----------------------------------------------------------------------
    def metadata_query(self) -> exp.Select:
        """One query over information_schema.columns for the whole dataset."""
        info = exp.Table(
            this=exp.to_identifier("columns"), db=exp.to_identifier("information_schema")
        )
        return (
            exp.select(
                exp.column("table_name"),
                exp.column("column_name"),
                exp.column("data_type"),
                exp.column("is_nullable"),
                *(exp.column(c) for c in self.metadata_size_columns),
                *([] if (rows := self.metadata_rows_estimate()) is None else [rows]),
            )
            .from_(info)
            .where(exp.EQ(this=exp.column(self.metadata_schema_column), expression=param()))
            .order_by(exp.column("table_name"), exp.column("ordinal_position"))
        )

    def metadata_rows_estimate(self) -> exp.Expression | None:
        """Hook: the metadata query's last column, the catalog's estimate of the row's table's
        rows (`information_schema.columns` is in scope as `columns`); None: no such column."""
        return None

    def metadata_params(self) -> list[Any]:
        return [self.live_dataset]

    def read_metadata(self, rows: Sequence[Sequence[Any]]) -> dict[str, LiveTable]:
        """Rows `(table, column, type, is_nullable, [size columns], [estimated rows])` to
        live tables, names unfolded, each type with its size (`type_size`)."""
        tables: dict[str, dict[str, LiveColumn]] = {}
        estimates: dict[str, int] = {}
        self._catalog_columns = {}
        self._live_tables = {}
        # a dataset repeats column names and types across its tables: each distinct one is
        # unfolded and normalized once, and equal columns share one (immutable) LiveColumn
        names: dict[str, str] = {}
        types: dict[tuple[Any, ...], tuple[str, TypeSize]] = {}
        columns: dict[tuple[str, str, bool], LiveColumn] = {}
        sized = len(self.metadata_size_columns)
        estimated = self.metadata_rows_estimate() is not None
        for row in rows:
            live_t, live_c, data_type, is_nullable = (str(v) for v in row[:4])
            t = self.live_name(live_t)
            c = names.get(live_c)
            if c is None:
                c = names[live_c] = self.live_name(live_c)
            nullable = is_nullable.upper() in ("YES", "TRUE", "1", "Y")
            key = (data_type, *row[4:4 + sized])
            typed = types.get(key)
            if typed is None:
                size = self.type_size(data_type, row[4:4 + sized])
                typed = types[key] = (spelled(self.normalize_type(data_type), size), size)
            db_type, size = typed
            column = columns.get((c, db_type, nullable))
            if column is None:
                column = columns[c, db_type, nullable] = LiveColumn(
                    c, db_type, nullable, size.precision, size.scale, size.radix, size.length
                )
            tables.setdefault(t, {})[c] = column
            self._live_tables[t] = live_t
            self._catalog_columns.setdefault(live_t, {})[c] = (live_c, db_type)
            self._on_metadata_row(t, c, row)
            if estimated and len(row) > 4 + sized and row[4 + sized] is not None:
                estimates[t] = int(row[4 + sized])
        return {t: LiveTable(t, cols, estimates.get(t)) for t, cols in tables.items()}

    def type_size(self, data_type: str, reported: Sequence[Any]) -> TypeSize:
        """The size of `data_type`: from the catalog's size columns (`reported`, in the
        order of `metadata_size_columns`) when it has them, else from the type's name."""
        if self.metadata_size_columns:
            if len(reported) < len(self.metadata_size_columns):  # rows of an older query
                return parse_size(data_type)
            return catalog_size(*reported[:4], unbounded_length=self.unbounded_length)
        return parse_size(data_type) if data_type else NO_SIZE

    def normalize_type(self, data_type: str) -> str:
        """The destination type as reported to detectors (upper-case by default)."""
        return data_type.upper()

    def _on_metadata_row(self, table: str, column: str, row: Sequence[Any]) -> None:
        """Hook: read extra metadata columns (BigQuery's partitioning flag)."""

    def partition_column(self, table: str) -> str | None:
        """The column the destination partitions `table` on; none by default."""
        return None
