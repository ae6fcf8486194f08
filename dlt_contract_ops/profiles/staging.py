"""The profile store's bulk writes: records handed to DuckDB through a newline-delimited JSON
file beside the store (`profiles.store`).

A sweep's new loads are staged one record per load, their columns as parallel lists
(`statements.STAGED_LOADS`), not one record per (load, column): an hourly table's first sweep
writes 192 loads x 30 columns, and encoding one small object per column cost more than the
sweep's queries."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any


class Staging:
    """Rows handed to DuckDB in bulk through a newline-delimited JSON file beside the store
    (binding thousands of parameters one row at a time costs milliseconds per row)."""

    #: then `statefile.owner_tag()`: a killed run's files are removed by a later one
    PREFIX = ".staging-"

    def __init__(self, store: Path) -> None:
        self.folder = store.parent
        self.files: list[Path] = []

    def __enter__(self) -> Staging:
        from dlt_contract_ops.statefile import remove_stale

        remove_stale(self.folder, self.PREFIX)
        return self

    def __exit__(self, *exc: object) -> None:
        for path in self.files:
            path.unlink(missing_ok=True)

    def _file(self, records: Iterable[Mapping[str, Any]]) -> Path:
        import json
        import tempfile

        from dlt_contract_ops.statefile import owner_tag

        self.folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(
            "w", encoding="utf-8", suffix=".ndjson", prefix=f"{self.PREFIX}{owner_tag()}-",
            dir=self.folder, delete=False,
        ) as fh:
            self.files.append(Path(fh.name))
            for record in records:
                fh.write(json.dumps(record) + "\n")
        return Path(fh.name)

    @staticmethod
    def _reader(layout: Sequence[tuple[str, str]]) -> str:
        columns = ", ".join(f"'{n}': '{t}'" for n, t in layout)
        return f"read_json(?, format = 'newline_delimited', columns = {{{columns}}})"

    def load(self, con: Any, name: str, layout: Sequence[tuple[str, str]],
             rows: Sequence[Sequence[Any]]) -> None:
        """A temporary table `name` holding `rows` (values in `layout`'s order)."""
        names = [n for n, _ in layout]
        self.load_records(con, name, layout,
                          (dict(zip(names, row, strict=True)) for row in rows))

    def load_records(self, con: Any, name: str, layout: Sequence[tuple[str, str]],
                     records: Iterable[Mapping[str, Any]]) -> None:
        """A temporary table `name` holding `records` (keyed by `layout`'s names; a key left
        out is NULL)."""
        path = self._file(records)
        con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT * FROM "  # noqa: S608
                    f"{self._reader(layout)}", [str(path)])
