"""`contract export`: each source's current contracts as an ODCS document, written to a file or
returned to be printed. Wires discovery (`service.current_contracts`) and dlt's destination
type mapping to the pure document builder (`odcs`) and the file writer (`store`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from dlt_contract_ops.contracts.model import ColumnContract
from dlt_contract_ops.contracts.odcs import PhysicalTypes, to_odcs, to_yaml
from dlt_contract_ops.contracts.service import current_contracts, version_option
from dlt_contract_ops.contracts.store import export_path, write_export
from dlt_contract_ops.errors import ExportError, NoContractError, did_you_mean

if TYPE_CHECKING:
    from dlt.common.schema.typing import TColumnSchema


@dataclass(frozen=True)
class Export:
    """One source's exported document: where it went (None: to be printed) and its text;
    `skipped` says why a source has no document (`--all` and a source without models)."""

    source: str
    path: Path | None
    text: str
    skipped: str = ""


def destination_types(reference: str) -> PhysicalTypes:
    """The destination type dlt creates for a column on destination `reference` (`duckdb`,
    `postgres`, a destination's module path), through dlt's own type mapper and without a
    connection; None for a column whose type the destination cannot name as text (no declared
    type, a type it does not support, a destination without SQL types such as `filesystem`)."""
    import dlt.destinations
    from dlt.common.destination import Destination
    from dlt.common.destination.exceptions import (
        InvalidDestinationReference,
        UnknownDestinationModule,
    )

    try:
        factory = Destination.from_reference(reference)
    except (UnknownDestinationModule, InvalidDestinationReference):
        known = sorted(n for n in dlt.destinations.__all__ if n != "destination")
        raise ExportError(
            f"Destination `{reference}` is not a destination dlt knows."
            + did_you_mean(reference, known) + f" Use one of {', '.join(known)}."
        ) from None
    try:
        mapper = factory.capabilities().get_type_mapper() if factory is not None else None
    except Exception:  # a destination without SQL types (filesystem): the dlt types stand
        mapper = None

    def physical(column: ColumnContract) -> str | None:
        if mapper is None or column.type is None:
            return None
        sizes = {k: v for k, v in (("precision", column.precision), ("scale", column.scale))
                 if v is not None}
        # the contract holds the dlt type as a plain string: dlt's TypedDict wants its Literal
        schema = cast("TColumnSchema", {"name": column.name, "data_type": column.type,
                                        "nullable": column.nullable, **sizes})
        try:
            found = mapper.to_destination_type(schema, {"name": "t", "columns": {}})
        except Exception:  # the destination cannot hold this type: the dlt type stands
            return None
        return found if isinstance(found, str) else None

    return physical


def export_odcs(
    sources: Sequence[str],
    out: str | os.PathLike[str] | None,
    *,
    version: str | None = None,
    destination: str | None = None,
    project_dir: str | os.PathLike[str] | None = None,
    force: bool = False,
    skip_unmodelled: bool = False,
) -> list[Export]:
    """The ODCS document of each source's current contracts, written under `out` (a folder,
    or a `.yaml` file for one source); with no `out`, returned to be printed. `destination`
    (else the source's configured one) gives each column's destination type.
    `skip_unmodelled`: a source without any model is skipped (`--all`), not an error."""
    parsed = version_option(version, "--version") if version is not None else None
    targets = {s: export_path(Path(out), s, len(sources)) if out is not None else None
               for s in sources}
    for path in targets.values():  # refuse before building anything
        if path is not None and path.exists() and not force:
            raise ExportError(
                f"`{path}` exists: pass --force to overwrite it, or give another --out."
            )
    exports = []
    for source, path in targets.items():
        try:
            current = current_contracts(source, project_dir, children=True)
        except NoContractError:
            if not skip_unmodelled:
                raise
            exports.append(Export(source, None, "", skipped="no resource has a Pydantic model"))
            continue
        target = destination or current.destination
        document = to_odcs(
            source, current.resources, version=parsed, children=current.children,
            destination=target,
            physical_type=destination_types(target) if target is not None else None,
        )
        exports.append(Export(source, path, to_yaml(document)))
    for item in exports:
        if item.path is not None and not item.skipped:
            write_export(item.path, item.text)
    return exports
