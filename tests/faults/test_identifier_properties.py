"""Property: any column name a producer adds out of band round-trips, through a real load, to
an additive finding naming that column, whose `reproduce` SQL runs on the destination and
returns the sampled value. On DuckDB, PostgreSQL, SQLite and MariaDB (the last two through
dlt's `sqlalchemy` destination).

One real dlt load per destination (the `telemetry` scenario); then each example adds one or
two columns to `events` out of band, sets a value on one row, runs `reconcile` in-process and
drops the columns again. Two producers write a raw name:

* `sql`: an engineer's `ALTER TABLE ... ADD COLUMN "<name>"`, the name verbatim. It lands as
  the destination stores it: PostgreSQL cuts it to 63 bytes (NAMEDATALEN - 1, never
  mid-character); MariaDB refuses names over 64 characters, ending in a space or outside the
  Basic Multilingual Plane, so such examples are rejected there.
* `dlt`: a pipeline with schema evolution: the name lands as dlt's `snake_case` convention
  makes it at the destination's identifier limit (lower case, ASCII, shortened with a hash tag).

Names must be valid for dlt: not blank once stripped (dlt's naming raises on those), and not
one the reconciler ignores by design (`_dlt_` system columns, the configured `loaded_at`). A
name the destination folds onto a column the table already has (`ID` beside `id` on the
case-insensitive three, `kïnd` beside `kind` under MariaDB's accent-insensitive collation)
cannot be added: the example is rejected.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from dlt.common.destination import Destination
from dlt.common.normalizers.naming.snake_case import NamingConvention
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from dlt_contract_ops.core.columns import DLT_PREFIX
from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.model.findings import DriftFinding
from tests.destinations import scenario
from tests.destinations.servers import Backend, make, unique
from tests.projects import Project

BACKENDS = ["duckdb", "postgres", "sqlite", "mariadb"]
TABLE = "events"
ROWS = 4  # ids 0..3
IGNORED = ("loaded_at",)  # scenario's load_timestamp_column: never drift, by design

#: names known to be awkward somewhere: quoting, driver placeholders, SQL syntax, Unicode case
NASTY = [
    "ip-address", 'Weird "Name"', "it's", "back`tick", "with space", " leading", "a.b",
    "schema.table.col", "1st_place", "123", "userId", "größe", "İstanbul", "ǅemal",
    "ﬀ", "日本語", "Ω", "select", "ORDER", "semi;colon", "a--b", "/*c*/", "dollar$", "$1",
    "pct%", "a%sb", "%(x)s", "question?", "back\\slash", "tab\there", "new\nline",
    "a__b", "trailing_", "_co_rank", "_co_rank_0", "_co_first_seen", "s", "x" * 64, "é" * 40,
    ":p0", "a :b", "::c", "@v",
]
#: differ from a column of the `Event` model (`id`, `kind`, `actor_login`, `score`) or from
#: `userId` only by case: a new column on PostgreSQL alone
CASE_TWINS = ["ID", "Kind", "KIND", "Actor_Login", "sCORE", "UserID"]


@dataclass(frozen=True)
class Loaded:
    project: Project
    backend: Backend
    dataset: str
    limit: int  # dlt's max column identifier length for this destination


@pytest.fixture(scope="module", params=BACKENDS)
def loaded(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Loaded]:
    """One real load of the telemetry scenario per destination, shared by the examples; each
    example removes the columns it added."""
    base = tmp_path_factory.mktemp(f"idprop_{request.param}")
    backend = make(request.param, base)
    dataset = unique("co_idprop")
    project = Project(base / "project")
    with pytest.MonkeyPatch.context() as mp:
        # module fixtures run before the per-test isolation: isolate the load here
        mp.setenv("RUNTIME__DLTHUB_TELEMETRY", "false")
        mp.setenv("DLT_DATA_DIR", str(base / "_dlt_data"))
        # secrets scoped to the pipeline: a top-level `[destination.<type>]` table in
        # secrets.toml shadows the source's `destination` (see the xfail test below)
        scenario.setup(project, backend, dataset, scoped=True)
        try:
            scenario.load(project, dataset, backend, n=ROWS)
            caps = Destination.from_reference(
                backend.destination, credentials=backend.credentials
            ).capabilities()
            yield Loaded(project, backend, dataset, caps.max_column_identifier_length)
        finally:
            backend.drop_dataset(dataset)


# -- the producers -----------------------------------------------------------------------


def lands_as(loaded: Loaded, producer: str, name: str) -> str | None:
    """The column name `producer` makes the destination store for `name`; None when the
    destination refuses it verbatim."""
    if producer == "dlt":
        return NamingConvention(loaded.limit).normalize_identifier(name)
    kind = loaded.backend.kind
    if kind == "postgres":  # cut to 63 bytes, with a NOTICE; never mid-character
        return name.encode()[: loaded.limit].decode(errors="ignore")
    if kind == "mariadb" and (
        len(name) > loaded.limit or name != name.rstrip(" ") or max(map(ord, name)) > 0xFFFF
    ):
        return None  # ER_TOO_LONG_IDENT, ER_WRONG_COLUMN_NAME, ER_INVALID_CHARACTER_STRING
    return name


def ignored_by_design(column: str) -> bool:
    """dlt system columns and the configured load timestamp are never drift."""
    return column.startswith(DLT_PREFIX) or column in IGNORED


def _sql(backend: Backend, sql: str) -> str:
    """Test-side SQL as the driver must receive it: `%s` drivers %-format the text whenever
    they get parameters (psycopg2 and PyMySQL, even an empty tuple), so a literal `%` in a
    name is doubled. SQLite's reproduce text starts with the `ATTACH DATABASE` line a fresh
    shell needs; the backend's own session has attached the dataset already."""
    if backend.kind == "sqlite" and sql.startswith("ATTACH DATABASE "):
        sql = sql.partition(";\n")[2]
    return sql.replace("%", "%%") if backend.param == "%s" else sql


def _duplicate(exc: Exception) -> bool:
    text = str(exc).lower()
    return "duplicate column" in text or "already exists" in text


@dataclass(frozen=True)
class Drift:
    column: str  # as the destination stores it
    sql_type: str
    value: Any
    row: int


def add_columns(loaded: Loaded, drift: Sequence[Drift]) -> list[str]:
    """Add each column and set its value on one row; returns the columns added (to drop
    after, also when a later one fails). A column the destination folds onto an existing
    one raises the driver's duplicate-column error."""
    b, ds = loaded.backend, loaded.dataset
    table = b.q(ds, TABLE)
    added: list[str] = []
    try:
        with b.session(ds) as execute:
            for d in drift:
                execute([_sql(b, f"ALTER TABLE {table} ADD COLUMN {b.q(d.column)} {d.sql_type}")])
                added.append(d.column)
                update = _sql(b, f"UPDATE {table} SET {b.q(d.column)} = ") + (
                    f"{b.param} WHERE id = {b.param}"
                )
                execute([(update, [d.value, d.row])])
    except Exception:
        drop_columns(loaded, added)
        raise
    return added


def drop_columns(loaded: Loaded, columns: Sequence[str]) -> None:
    b = loaded.backend
    table = b.q(loaded.dataset, TABLE)
    with b.session(loaded.dataset) as execute:
        for column in columns:
            execute([_sql(b, f"ALTER TABLE {table} DROP COLUMN {b.q(column)}")])


def reconcile_events(loaded: Loaded) -> DriftFinding:
    (result,) = run(
        ["telemetry"], detectors=("additive",), dry_run=True, project_dir=loaded.project.root
    )
    assert result.error is None, result.error
    assert [f.resource for f in result.findings] == [TABLE], result.findings
    return result.findings[0]


def assert_round_trip(loaded: Loaded, drift: Sequence[Drift]) -> None:
    """The finding names exactly the added columns, samples each one's value, and its
    `reproduce` returns that value in that column."""
    finding = reconcile_events(loaded)
    columns = sorted(d.column for d in drift)
    assert finding.columns == columns
    assert finding.sample_error is None, finding.sample_error
    assert finding.samples == {d.column: [d.value] for d in drift}
    assert finding.reproduce is not None
    b = loaded.backend
    [[(load_id,)], rows] = b.execute(loaded.dataset, [
        f"SELECT MIN(_dlt_load_id) FROM {b.q(loaded.dataset, TABLE)}",
        _sql(b, finding.reproduce),
    ])
    # every row came in the one load: a drifted column is first seen at that load's time
    assert finding.first_seen == datetime.fromtimestamp(float(load_id), timezone.utc).isoformat()
    for d in drift:
        i = columns.index(d.column)
        assert [r[i] for r in rows if r[i] is not None] == [d.value], (d, finding.reproduce)


# -- the strategies ----------------------------------------------------------------------

_CHARS = st.one_of(
    st.characters(min_codepoint=32, max_codepoint=126),
    st.characters(exclude_categories=("Cs",), exclude_characters="\x00"),
    # dotless i and its capital fold in ways ASCII folding does not
    st.sampled_from("-\"'`. %:?$\\\t\nßİ\u0131ΩéÉǅﬀ日🎉"),
)
NAMES = st.one_of(
    st.sampled_from(NASTY),
    st.sampled_from(CASE_TWINS),
    st.text(_CHARS, min_size=1, max_size=24),
    st.text(_CHARS, min_size=60, max_size=200),  # beyond PostgreSQL's and MariaDB's limits
)
VALUES = st.one_of(
    st.tuples(st.just("TEXT"), st.text(
        st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=20)),
    st.tuples(st.just("BIGINT"), st.integers(-(2**63), 2**63 - 1)),
)


def _draw_drift(data: st.DataObject, loaded: Loaded) -> list[Drift]:
    producer = data.draw(st.sampled_from(["sql", "dlt"]), label="producer")
    names = data.draw(
        st.one_of(st.lists(NAMES, min_size=1, max_size=2),
                  NAMES.map(lambda n: [n, n.swapcase()])),  # names differing only by case
        label="names",
    )
    drift: dict[str, Drift] = {}
    for name in names:
        if not name.strip():
            reject()  # dlt's naming refuses a blank name
        column = lands_as(loaded, producer, name)
        if column is None or ignored_by_design(column):
            reject()
        if column in drift:
            # both names land as one column (dlt's snake_case folds case; a name without
            # letters is its own case twin): the producer wrote that column twice
            continue
        sql_type, value = data.draw(VALUES, label=f"value of {column!r}")
        row = data.draw(st.integers(0, ROWS - 1), label="row")
        drift[column] = Drift(column, sql_type, value, row)
    return list(drift.values())


# -- the tests -------------------------------------------------------------------------------


@settings(
    max_examples=15,
    deadline=None,  # each example is real DDL and a reconcile
    derandomize=True,
    database=None,
    # the autouse per-test dlt isolation is shared by the examples on purpose, as is the
    # module's one load per destination: each example drops the columns it added
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_any_added_column_round_trips(loaded: Loaded, data: st.DataObject) -> None:
    drift = _draw_drift(data, loaded)
    try:
        added = add_columns(loaded, drift)
    except Exception as exc:
        if _duplicate(exc):
            reject()  # the destination folds it onto a column the table has
        raise
    try:
        assert_round_trip(loaded, drift)
    finally:
        drop_columns(loaded, added)


def test_known_awkward_names_round_trip_together(loaded: Loaded) -> None:
    """Every name of `NASTY` (and the case twins where they are new columns) at once, as the
    sql producer writes them: one finding names them all."""
    names = NASTY + (CASE_TWINS if loaded.backend.kind == "postgres" else [])
    columns = [c for c in (lands_as(loaded, "sql", n) for n in names) if c is not None]
    drift = [Drift(c, "TEXT", f"v{i}", i % ROWS) for i, c in enumerate(columns)]
    added = add_columns(loaded, drift)
    try:
        assert_round_trip(loaded, drift)
    finally:
        drop_columns(loaded, added)


# -- bugs found on the way, fixed; each pinned by its own test ------------------------


# was a bug: sample_query's helper aliases collided with a column of the same name
@pytest.mark.parametrize("name", ["_co_rank_0", "_co_first_seen"])
def test_column_named_like_a_sample_query_alias_round_trips(loaded: Loaded, name: str) -> None:
    drift = [Drift(name, "TEXT", "v", 1)]
    added = add_columns(loaded, drift)
    try:
        assert_round_trip(loaded, drift)
    finally:
        drop_columns(loaded, added)


# was a bug: a `[destination.<type>]` table in secrets.toml hid the source's `destination`
def test_source_destination_is_read_beside_destination_secrets(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found while building the fixture above (which scopes its secrets to the pipeline)."""
    backend = make("duckdb", tmp_path)
    dataset = unique("co_idprop")
    scenario.setup(project, backend, dataset)  # credentials in `[destination.duckdb]`
    with monkeypatch.context() as mp:
        mp.setenv("DLT_DATA_DIR", str(tmp_path / "loading_machine"))
        scenario.load(project, dataset, backend, n=ROWS)
    # this process has no local state of the pipeline: only config.toml says where it loaded
    (result,) = run(
        ["telemetry"], detectors=("additive",), dry_run=True, project_dir=project.root
    )
    assert result.error is None, result.error
    assert result.destination == "duckdb"
