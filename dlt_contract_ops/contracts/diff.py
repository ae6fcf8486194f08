"""Diff two contracts into `Change` values. Pure: snapshots in, changes out.

A change knows its rule (and through it, its severity from either perspective) and carries
the evidence, old → new. Renames come only from a declaration (`renamed_from` on the new
column); without one, a rename is what it looks like to everybody else: a removal plus an
addition.

Properties compare by meaning, not by spelling: units through the unit table (`metres` is
`m`), time zones by IANA identity (`Etc/UTC` is `UTC`). Declarations inside a json column
(`members`) diff like columns, named by their path (`dims[]`, `shipping.weight`). What a
format 1 snapshot could not record (constraints, members, dlt hints) is not compared against
one: `legacy_notes` says so instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from dlt_contract_ops.contracts import constraints as cons
from dlt_contract_ops.contracts.change import Change
from dlt_contract_ops.contracts.model import (
    FORMAT_VERSION,
    ColumnContract,
    Release,
    ResourceContract,
    compare_types,
    member_label,
)
from dlt_contract_ops.contracts.rules import (
    KEY_HINT_RULES,
    OTHER_HINT_RULES,
    SEMANTIC_PROPERTY_RULES,
    Rule,
)
from dlt_contract_ops.contracts.timezones import same_timezone
from dlt_contract_ops.contracts.units import same_unit
from dlt_contract_ops.core.rename import pair_renames

_SAME = {"unit": same_unit, "timezone": same_timezone}


def _column_shape(col: ColumnContract) -> str:
    return f"{col.type_label}, {'nullable' if col.nullable else 'required'}"


def _vocabulary(col: ColumnContract) -> str | None:
    if col.categories is not None:
        return "{" + ", ".join(col.categories) + "}"
    if col.category_pattern is not None:
        return f"/{col.category_pattern}/"
    return None


def _vocabulary_changes(res: str, old: ColumnContract, new: ColumnContract) -> Iterator[Change]:
    name = new.name
    before, after = _vocabulary(old), _vocabulary(new)
    if before == after:
        return
    if old.categories is not None and new.categories is not None:
        added = sorted(set(new.categories) - set(old.categories))
        removed = sorted(set(old.categories) - set(new.categories))
        if added:
            yield Change(Rule.CATEGORIES_ADDED, res, name, before, after,
                         detail=", ".join(f"+{v}" for v in added))
        if removed:
            yield Change(Rule.CATEGORIES_REMOVED, res, name, before, after,
                         detail=", ".join(f"-{v}" for v in removed))
        return
    if before is None:
        rule = Rule.VOCABULARY_DECLARED
    elif after is None:
        rule = Rule.VOCABULARY_DROPPED
    elif old.categories is not None:
        rule = Rule.VOCABULARY_OPENED
    elif new.categories is not None:
        rule = Rule.VOCABULARY_CLOSED
    else:
        rule = Rule.PATTERN_CHANGED
    yield Change(rule, res, name, before, after)


_RELATION_RULES = {
    "range": {"tightened": Rule.RANGE_TIGHTENED, "loosened": Rule.RANGE_LOOSENED,
              "changed": Rule.RANGE_CHANGED},
    "length": {"tightened": Rule.LENGTH_TIGHTENED, "loosened": Rule.LENGTH_LOOSENED},
}


def _show_bound(bound: cons.Bound | None) -> str | None:
    return None if bound is None else str(bound)


def _constraint_changes(res: str, old: ColumnContract, new: ColumnContract) -> Iterator[Change]:
    name = new.name
    for before, after in (
        (cons.lower_bound(old.ge, old.gt), cons.lower_bound(new.ge, new.gt)),
        (cons.upper_bound(old.le, old.lt), cons.upper_bound(new.le, new.lt)),
    ):
        relation = cons.compare_bounds(before, after)
        if relation != "equal":
            yield Change(_RELATION_RULES["range"][relation], res, name,
                         _show_bound(before), _show_bound(after))
    relation = cons.compare_multiple(old.multiple_of, new.multiple_of)
    if relation != "equal":
        yield Change(_RELATION_RULES["range"][relation], res, name,
                     cons.multiple_text(old.multiple_of), cons.multiple_text(new.multiple_of))
    for minimum, a, b in ((True, old.min_length, new.min_length),
                          (False, old.max_length, new.max_length)):
        relation = cons.compare_length(a, b, minimum=minimum)
        if relation != "equal":
            yield Change(_RELATION_RULES["length"][relation], res, name,
                         cons.length_text(a, minimum=minimum),
                         cons.length_text(b, minimum=minimum))
    if old.pattern != new.pattern:
        rule = (Rule.VALUE_PATTERN_DECLARED if old.pattern is None
                else Rule.VALUE_PATTERN_DROPPED if new.pattern is None
                else Rule.VALUE_PATTERN_CHANGED)
        yield Change(rule, res, name, _pattern(old.pattern), _pattern(new.pattern))


def _pattern(value: str | None) -> str | None:
    return None if value is None else f"/{value}/"


def _semantic_changes(res: str, old: ColumnContract, new: ColumnContract) -> Iterator[Change]:
    name = new.name
    yield from _vocabulary_changes(res, old, new)
    for prop, (changed, declared, dropped) in SEMANTIC_PROPERTY_RULES.items():
        before, after = getattr(old, prop), getattr(new, prop)
        same = _SAME.get(prop)
        if before == after or (same is not None and same(before, after)):
            continue
        rule = declared if before is None else dropped if after is None else changed
        yield Change(rule, res, name, before, after)
    if old.value_format != new.value_format:
        yield Change(Rule.VALUE_FORMAT_CHANGED, res, name, old.value_format, new.value_format)
    if old.description != new.description:
        yield Change(Rule.DESCRIPTION_CHANGED, res, name, old.description, new.description)


def _member_changes(res: str, old: ColumnContract, new: ColumnContract) -> Iterator[Change]:
    """Declarations on the values inside a json column, each path diffed like a column."""
    for path in sorted({m.name for m in old.members} | {m.name for m in new.members}):
        label = member_label(new.name, path)
        before = replace(old.member(path) or ColumnContract(path, None, True), name=label)
        after = replace(new.member(path) or ColumnContract(path, None, True), name=label)
        yield from _semantic_changes(res, before, after)
        yield from _constraint_changes(res, before, after)


def _column_changes(
    res: str, old: ColumnContract, new: ColumnContract, *, schema_only: bool, full: bool = True
) -> Iterator[Change]:
    """`full`: both sides recorded constraints and members (snapshot format 2 or later)."""
    name = new.name
    relation = compare_types(old, new)
    if relation != "equal":
        rule = {"widened": Rule.TYPE_WIDENED, "narrowed": Rule.TYPE_NARROWED}.get(
            relation, Rule.TYPE_CHANGED
        )
        yield Change(rule, res, name, old.type_label, new.type_label)
    if schema_only:
        return
    if old.nullable != new.nullable:
        rule = Rule.BECAME_NULLABLE if new.nullable else Rule.BECAME_REQUIRED
        yield Change(rule, res, name, _nullability(old), _nullability(new))
    yield from _semantic_changes(res, old, new)
    if full:
        yield from _constraint_changes(res, old, new)
        yield from _member_changes(res, old, new)


def _nullability(col: ColumnContract) -> str:
    return "nullable" if col.nullable else "required"


def _renames(old: ResourceContract, new: ResourceContract) -> dict[str, str]:
    """old column name -> new column name, for renames the new contract declares and the
    old contract confirms (the old name existed and is gone)."""
    old_names, new_names = set(old.names), set(new.names)
    out: dict[str, str] = {}
    for col in new.columns:
        source = col.renamed_from
        if (
            source
            and source in old_names
            and source not in new_names
            and col.name not in old_names
            and source not in out
        ):
            out[source] = col.name
    return out


def _key_rule(
    before: tuple[str, ...] | None, after: tuple[str, ...] | None, rules: tuple[Rule, Rule, Rule]
) -> Rule:
    changed, declared, dropped = rules
    return declared if not before else dropped if not after else changed


def _keys_changes(
    old: ResourceContract, new: ResourceContract, renames: dict[str, str], *, full: bool
) -> Iterator[Change]:
    res = new.resource

    def renamed(keys: tuple[str, ...]) -> tuple[str, ...]:
        # a key column that was only renamed is still the same key
        return tuple(sorted(renames.get(k, k) for k in keys))

    before = None if old.keys is None else renamed(old.keys)
    if before != new.keys:
        rule = _key_rule(before, new.keys,
                         (Rule.KEYS_CHANGED, Rule.KEYS_DECLARED, Rule.KEYS_DROPPED))
        yield Change(rule, res, None, _show_keys(old.keys), _show_keys(new.keys))
    key_moved = before != new.keys
    if full:
        for hint, rules in KEY_HINT_RULES.items():
            was, now = old.hints.columns(hint), new.hints.columns(hint)
            if renamed(was) != now:
                key_moved = True
                yield Change(_key_rule(was, now, rules), res, None,
                             _show_keys(was or None), _show_keys(now or None))
        for hint, rule in OTHER_HINT_RULES.items():
            was, now = old.hints.columns(hint), new.hints.columns(hint)
            if renamed(was) != now:
                yield Change(rule, res, None, _show_keys(was or None), _show_keys(now or None))
    if old.grain != new.grain:
        # the grain is words; the key is what the words promise. New words over the same key
        # are a rewording, not a new grain.
        rule = (
            Rule.GRAIN_DECLARED if old.grain is None
            else Rule.GRAIN_DROPPED if new.grain is None
            else Rule.GRAIN_CHANGED if key_moved
            else Rule.GRAIN_REWORDED
        )
        yield Change(rule, res, None, old.grain, new.grain)
    yield from _metadata_changes(old, new, renames)


def _metadata_changes(
    old: ResourceContract, new: ResourceContract, renames: dict[str, str]
) -> Iterator[Change]:
    res = new.resource
    if old.owner != new.owner:
        yield Change(Rule.OWNER_CHANGED, res, None, old.owner, new.owner)
    if old.consumer_owners != new.consumer_owners:
        yield Change(Rule.CONSUMER_OWNERS_CHANGED, res, None,
                     _show_keys(old.consumer_owners or None),
                     _show_keys(new.consumer_owners or None))
    before = renames.get(old.change_key, old.change_key) if old.change_key else None
    if before != new.change_key:
        yield Change(Rule.CHANGE_KEY_CHANGED, res, None, old.change_key, new.change_key)


def _show_keys(keys: tuple[str, ...] | None) -> str | None:
    return None if keys is None else "(" + ", ".join(keys) + ")"


def diff_resources(
    old: ResourceContract | None, new: ResourceContract | None, *, schema_only: bool = False
) -> tuple[Change, ...]:
    """Changes from `old` to `new` (either may be None: the resource was added or removed).

    `schema_only=True` reports what a names-and-types diff sees: no declared renames, no
    nullability, vocabulary, unit, time zone, CRS, key, grain or description changes.

    >>> a = ResourceContract("s", "r", "t", (ColumnContract("p", "double", False, unit="USD"),))
    >>> cents = ColumnContract("p", "double", False, unit="USD_cents")
    >>> b = ResourceContract("s", "r", "t", (cents,))
    >>> [c.rule_id for c in diff_resources(a, b)]
    ['unit.changed']
    >>> diff_resources(a, b, schema_only=True)
    ()
    """
    if old is None and new is None:
        return ()
    if old is None:
        assert new is not None
        return (Change(Rule.RESOURCE_ADDED, new.resource, None, None, new.table),)
    if new is None:
        return (Change(Rule.RESOURCE_REMOVED, old.resource, None, old.table, None),)
    res = new.resource
    full = min(old.format_version, new.format_version) >= FORMAT_VERSION
    changes: list[Change] = []
    if old.table != new.table:
        changes.append(Change(Rule.TABLE_CHANGED, res, None, old.table, new.table))
    renames = {} if schema_only else _renames(old, new)
    renamed_to = set(renames.values())
    new_names = set(new.names)
    # an undeclared rename stays a removal plus an addition; the addition names the column it
    # probably replaces, by the same pairing rule the ingest gate and the reconciler use
    hints: dict[str, str] = {}
    if not schema_only:
        old_names = set(old.names)
        hints = pair_renames(
            {c.name: c.type for c in new.columns
             if c.name not in old_names and c.name not in renamed_to},
            {c.name: c.type for c in old.columns
             if c.name not in new_names and c.name not in renames},
        )
    for col in old.columns:
        if col.name not in new_names and col.name not in renames:
            changes.append(Change(Rule.COLUMN_REMOVED, res, col.name, _column_shape(col), None))
    for col in new.columns:
        before = old.column(col.name)
        if col.name in renamed_to:
            source = next(o for o, n in renames.items() if n == col.name)
            changes.append(Change(Rule.COLUMN_RENAMED, res, col.name, source, col.name))
            before = old.column(source)
        if before is None:
            rule = Rule.COLUMN_ADDED_NULLABLE if col.nullable else Rule.COLUMN_ADDED_REQUIRED
            hint = hints.get(col.name)
            changes.append(Change(
                rule, res, col.name, None, _column_shape(col),
                detail=(f"probably renamed from `{hint}`: declare `renamed_from` to make it a "
                        "rename") if hint else None,
            ))
            continue
        changes.extend(_column_changes(res, before, col, schema_only=schema_only, full=full))
    if not schema_only:
        changes.extend(_keys_changes(old, new, renames, full=full))
    return tuple(sorted(changes, key=lambda c: c.sort_key))


def diff_releases(old: Release, new: Release, *, schema_only: bool = False) -> tuple[Change, ...]:
    """Changes from release `old` to release `new`, over every resource either one has."""
    names = sorted({r.resource for r in old.resources} | {r.resource for r in new.resources})
    changes: list[Change] = []
    for name in names:
        changes.extend(
            diff_resources(old.resource(name), new.resource(name), schema_only=schema_only)
        )
    return tuple(changes)


def legacy_notes(old: Release, new: Release) -> tuple[str, ...]:
    """Notes for resources one side of which is a format 1 snapshot: what was not compared."""
    out = []
    for name in sorted({r.resource for r in old.resources} & {r.resource for r in new.resources}):
        a, b = old.resource(name), new.resource(name)
        assert a is not None
        assert b is not None
        if min(a.format_version, b.format_version) >= FORMAT_VERSION:
            continue
        legacy = old.version if a.format_version < FORMAT_VERSION else new.version
        out.append(
            f"`{name}` {legacy} is a format 1 snapshot: it recorded no value constraints, no "
            "declarations inside json columns and no dlt key hints, so changes to those are not "
            "checked against it; they are from the first release snapshotted with this version"
        )
    return tuple(out)
