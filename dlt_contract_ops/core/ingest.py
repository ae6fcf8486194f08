"""The gate's pure decision: the shape a batch sent against the shape the contract expects.

A shape is `{table: {column: ColumnShape}}`, names already through the pipeline's naming
convention and types as dlt data types. The asymmetry is deliberate: a missing required
column and a retyped one are always rejected (a report would silently lose or change a
measure); an addition is admitted only when policy approves it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dlt_contract_ops.core.rename import compatible, pair_renames
from dlt_contract_ops.model.gate import Difference

#: the suffix dlt gives a variant column (`amount__v_text`: a text value in a bigint column)
VARIANT_MARK = "__v_"


@dataclass(frozen=True)
class ColumnShape:
    data_type: str | None
    nullable: bool = True


Shape = Mapping[str, Mapping[str, ColumnShape]]


@dataclass(frozen=True)
class GatePolicy:
    """`[contract_ops.gate]` (and per source): what the gate admits besides an exact match."""

    #: a new nullable column is loaded and reported `approved`
    allow_nullable_additions: bool = True
    #: exact approvals `table.column:type`, for when additions are not allowed in general
    approved_additions: frozenset[str] = field(default_factory=frozenset)
    #: a value the model would coerce (text "12000" into a bigint) is not a retype
    allow_coercion: bool = False


def _covered_by_json(table: str, column: str, expected: Shape) -> bool:
    """An observed `items__sku` column, or a child table `orders__items`, comes from a json
    column `items` the contract declares: dlt unnests what a model keeps as json."""
    own = expected.get(table, {})
    for name, shape in own.items():
        if shape.data_type == "json" and column.startswith(name + "__"):
            return True
    return False


def _seen_as_json(table: str, column: str, observed: Shape) -> bool:
    """A json column the batch sent arrives unnested: as `items__sku` columns of its table or
    as a child table `orders__items`, never as `items` itself."""
    prefix = column + "__"
    child = f"{table}__{column}"
    return any(c.startswith(prefix) for c in observed.get(table, {})) or any(
        t == child or t.startswith(child + "__") for t in observed
    )


def _child_of_json(table: str, expected: Shape) -> bool:
    for parent, columns in expected.items():
        for name, shape in columns.items():
            if shape.data_type == "json" and table.startswith(f"{parent}__{name}"):
                return True
    return False


def compare(
    observed: Shape, expected: Shape, policy: GatePolicy, *, coerced: bool = False
) -> list[Difference]:
    """Every difference of `observed` against `expected`, approved or not.

    `coerced`: the resource's model accepted every value (it coerced what it could); with
    `allow_coercion` a retype is then approved.

    >>> exp = {"o": {"id": ColumnShape("bigint", False), "day": ColumnShape("date", False)}}
    >>> obs = {"o": {"id": ColumnShape("bigint"), "sale_day": ColumnShape("date")}}
    >>> [(d.change, d.column, d.approved, d.renamed_from)
    ...  for d in compare(obs, exp, GatePolicy())]
    [('missing', 'day', False, None), ('added', 'sale_day', False, 'day')]
    """
    out: list[Difference] = []
    for table in sorted(set(observed) | set(expected)):
        obs = dict(observed.get(table, {}))
        exp = expected.get(table)
        if exp is None:
            if _child_of_json(table, expected):
                continue
            # a table the contract does not know: every column of it is an addition
            exp = {}
        variants = {c: s for c, s in obs.items() if VARIANT_MARK in c}
        for c in variants:
            del obs[c]
        missing: dict[str, ColumnShape] = {}
        retyped: list[Difference] = []
        for name, want in exp.items():
            got = obs.get(name)
            variant = next(
                (s for c, s in variants.items() if c.startswith(name + VARIANT_MARK)), None
            )
            if got is None and variant is None:
                if want.data_type == "json" and _seen_as_json(table, name, observed):
                    continue
                if not want.nullable:  # a nullable column absent may just be all NULL here
                    missing[name] = want
                continue
            seen = variant if variant is not None else got
            assert seen is not None
            if variant is not None or not compatible(seen.data_type, want.data_type):
                retyped.append(Difference(
                    table=table, column=name, change="retyped",
                    observed_type=seen.data_type, expected_type=want.data_type,
                    nullable=want.nullable, approved=policy.allow_coercion and coerced,
                ))
        added = {
            c: s for c, s in obs.items()
            if c not in exp and not _covered_by_json(table, c, expected)
        }
        renames = pair_renames(
            {c: s.data_type for c, s in added.items()},
            {c: s.data_type for c, s in missing.items()},
        )
        for name, want in sorted(missing.items()):
            out.append(Difference(
                table=table, column=name, change="missing",
                expected_type=want.data_type, nullable=want.nullable,
            ))
        out.extend(sorted(retyped, key=lambda d: d.column))
        for name, got in sorted(added.items()):
            pinned = f"{table}.{name}:{got.data_type}" in policy.approved_additions
            approved = pinned or (policy.allow_nullable_additions and got.nullable)
            renamed_from = renames.get(name)
            out.append(Difference(
                table=table, column=name, change="added", observed_type=got.data_type,
                nullable=got.nullable,
                # half of a rename is never approved on its own: the other half is missing
                approved=approved and renamed_from is None,
                renamed_from=renamed_from,
            ))
    return out
