"""The profile store's bulk writes: rows handed to DuckDB through a newline-delimited JSON
file beside the store (`profiles.store`)."""

from __future__ import annotations

from collections.abc import Sequence
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

    def _file(self, layout: Sequence[tuple[str, str]], rows: Sequence[Sequence[Any]]) -> Path:
        import json
        import tempfile

        from dlt_contract_ops.statefile import owner_tag

        names = [n for n, _ in layout]
        self.folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(
            "w", encoding="utf-8", suffix=".ndjson", prefix=f"{self.PREFIX}{owner_tag()}-",
            dir=self.folder, delete=False,
        ) as fh:
            self.files.append(Path(fh.name))
            for row in rows:
                fh.write(json.dumps(dict(zip(names, row, strict=True))) + "\n")
        return Path(fh.name)

    @staticmethod
    def _reader(layout: Sequence[tuple[str, str]]) -> str:
        columns = ", ".join(f"'{n}': '{t}'" for n, t in layout)
        return f"read_json(?, format = 'newline_delimited', columns = {{{columns}}})"

    def load(self, con: Any, name: str, layout: Sequence[tuple[str, str]],
             rows: Sequence[Sequence[Any]]) -> None:
        """A temporary table `name` holding `rows`."""
        path = self._file(layout, rows)
        con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT * FROM "  # noqa: S608
                    f"{self._reader(layout)}", [str(path)])

    def insert(self, con: Any, name: str, layout: Sequence[tuple[str, str]],
               rows: Sequence[Sequence[Any]]) -> None:
        path = self._file(layout, rows)
        names = ", ".join(n for n, _ in layout)
        con.execute(f"INSERT INTO {name} ({names}) SELECT {names} FROM "  # noqa: S608
                    f"{self._reader(layout)}", [str(path)])
