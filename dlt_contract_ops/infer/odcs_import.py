"""`models infer --from-odcs FILE`: the Pydantic models an ODCS v3 document declares, one
module per root schema object (its child tables as nested models), bound to their resources
when the document's source is declared in the project.

The document is validated against the vendored ODCS JSON schema, then read into contracts by
`contracts.odcs_read.contracts_from_odcs` (the inverse of `contract export --format odcs`);
each contract renders through `infer.module` with its declarations (`infer.declared`). An
exported document imports to models whose contracts are the ones it was exported from.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dlt_contract_ops.contracts.model import ResourceContract
from dlt_contract_ops.contracts.odcs import ChildTable
from dlt_contract_ops.errors import ConfigError
from dlt_contract_ops.infer.module import InferredTable, render_module
from dlt_contract_ops.infer.service import (
    DEFAULT_OUT,
    InferredModel,
    InferReport,
    module_ref,
    write_planned,
)


class OdcsHeader:
    """The module docstring of a model written from an ODCS document."""

    def __init__(self, document: str, source: str, contract: ResourceContract) -> None:
        self.document, self.source, self.contract = document, source, contract

    def describe(self, table: str) -> list[str]:
        from dlt_contract_ops.contracts.model import HINT_NAMES
        from dlt_contract_ops.infer.fields import shown

        hints = [f"{h}={tuple(self.contract.hints.columns(h))!r}" for h in HINT_NAMES
                 if self.contract.hints.columns(h)]
        lines = [
            f"Model of table `{shown(table)}`, written by `dlt-contract-ops models infer "
            "--from-odcs`.",
            "",
            f"Document: `{shown(self.document)}`",
            f"Source: `{shown(self.source)}`, resource `{shown(self.contract.resource)}`",
        ]
        if hints:  # dlt reads them from the resource, not from its model
            lines += ["", "dlt hints the resource declares (columns as they land): "
                      f"{shown(', '.join(hints))}"]
        return lines


def read_document(path: Path) -> dict[str, Any]:
    """The parsed, schema-valid ODCS document at `path`; a ConfigError of one line naming
    the file (and the first schema error's place) otherwise."""
    import jsonschema
    import yaml

    from dlt_contract_ops.contracts.schemas import odcs_schema

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"`{path}`: no such file. Give the path of an ODCS YAML document.") \
            from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"Cannot read `{path}`: {exc}") from exc
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise ConfigError(f"`{path}` is not YAML{where}: {problem}.") from exc
    if not isinstance(document, dict):
        raise ConfigError(f"`{path}` is not an ODCS document: it holds no YAML mapping.")
    validator = jsonschema.Draft201909Validator(odcs_schema())
    errors = sorted(validator.iter_errors(document), key=lambda e: list(map(str, e.path)))
    if errors:
        first = errors[0]
        place = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.path)
        message = first.message if len(first.message) <= 160 else f"{first.message[:157]}..."
        raise ConfigError(
            f"`{path}` is not a valid ODCS v3 document: at `{place.lstrip('.') or '(root)'}`: "
            f"{message}"
        )
    return document


def _leaf_types(element: Mapping[str, Any], prefix: str = "") -> dict[str, str | None]:
    """member path -> the dlt type of the values there, for the leaves of a json column."""
    from dlt_contract_ops.contracts.odcs_types import dlt_type_of

    out: dict[str, str | None] = {}
    below: list[tuple[str, Mapping[str, Any]]] = []
    if isinstance(element.get("items"), Mapping):
        below.append((f"{prefix}[]", element["items"]))
    for prop in element.get("properties") or []:
        if isinstance(prop, Mapping) and isinstance(prop.get("name"), str):
            below.append((f"{prefix}.{prop['name']}" if prefix else prop["name"], prop))
    for path, inner in below:
        if inner.get("items") or inner.get("properties"):
            out.update(_leaf_types(inner, path))
        elif inner.get("logicalType") is not None:
            out[path] = dlt_type_of(inner["logicalType"], inner.get("physicalType"),
                                    inner.get("logicalTypeOptions"))[0]
    return out


def _tables(
    document: Mapping[str, Any], roots: list[ResourceContract], children: list[ChildTable]
) -> tuple[list[InferredTable], list[str]]:
    raw = {obj.get("physicalName") or obj.get("name"): obj for obj in document.get("schema", [])}
    used: set[str] = set()

    def tree(contract: ResourceContract) -> InferredTable:
        used.add(contract.table)
        obj = raw.get(contract.table) or {}
        leaves = {p["name"]: _leaf_types(p) for p in obj.get("properties") or []
                  if isinstance(p, Mapping) and (p.get("items") or p.get("properties"))}
        columns = tuple({"name": c.name, "data_type": c.type, "nullable": c.nullable,
                         "precision": c.precision, "scale": c.scale}
                        for c in contract.columns)
        kids = tuple(tree(c.contract) for c in children
                     if c.parent == contract.table and c.contract.table not in used)
        return InferredTable(contract.table, columns, kids, contract=contract,
                             leaf_types=leaves)

    tables = [tree(r) for r in roots]
    notes = [f"child table `{c.contract.table}` names parent table `{c.parent}`, which the "
             "document does not declare: skipped" for c in children
             if c.contract.table not in used]
    return tables, notes


def import_odcs(
    file: str | os.PathLike[str],
    *,
    out: str | None = None,
    project_dir: str | os.PathLike[str] | None = None,
    dry_run: bool = False,
    force: bool = False,
) -> InferReport:
    """Write the model modules `file` declares under `out` (default `inferred_models`) as
    `<out>/<source>/<table>.py`, and bind them in `.dlt/config.toml` when the document's
    source (its `name`) is declared in the project. `dry_run` writes nothing. An existing
    module is kept unless `force` (ConfigError naming it, before anything is written)."""
    from dlt.common.normalizers.naming.snake_case import NamingConvention

    from dlt_contract_ops.contracts.odcs_read import contracts_from_odcs
    from dlt_contract_ops.settings.files import project_context
    from dlt_contract_ops.settings.project import declared_sources

    path = Path(file)
    document = read_document(path)
    try:
        roots, children = contracts_from_odcs(document)
    except (KeyError, TypeError, ValueError) as exc:  # a value of a type ODCS allows, unread
        raise ConfigError(f"`{path}`: cannot read the contracts in it ({exc!r}).") from exc
    if not roots:
        raise ConfigError(f"`{path}` declares no schema object: nothing to write a model for.")
    source = roots[0].source
    tables, notes = _tables(document, roots, children)
    with project_context(project_dir) as pdir:
        declared = source in declared_sources()
        out_dir = Path(pdir, out or DEFAULT_OUT).resolve()
        planned: list[tuple[InferredModel, str]] = []
        for table, contract in zip(tables, roots, strict=True):
            header = OdcsHeader(str(file), source, contract)
            text, cls = render_module(table, NamingConvention(), header, notes)
            module = out_dir / source / f"{table.table}.py"
            ref = module_ref(module, Path(pdir).resolve())
            planned.append((InferredModel(source if declared else None, contract.resource,
                                          table.table, module, f"{ref}:{cls}" if ref else None),
                            text))
    if not declared:
        notes.append(f"source `{source}` is not declared in this project "
                     f"(`[sources.{source}.contract_ops]`): the models are not bound")
    config = Path(pdir, ".dlt", "config.toml")
    bindings = write_planned(planned, out_dir, config, force=force, dry_run=dry_run)
    models = tuple(m for m, _ in planned)
    return InferReport(models, tuple(notes), bindings, config, written=not dry_run)
