"""Files a lake really holds beside dlt's: a corrupt Parquet file is one error naming its
table and file while the other tables are checked; a column another writer stored with a
different type is a finding and a note, not a crash."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.lakehouse import lake
from tests.projects import Project


@pytest.fixture
def parquet_lake(project: Project, tmp_path: Path) -> tuple[Project, Path]:
    bucket = tmp_path / "bucket"
    lake.setup(project, bucket, "parquet")
    return project, bucket


def test_corrupt_parquet_file_is_one_clear_error(parquet_lake: tuple[Project, Path]) -> None:
    project, bucket = parquet_lake
    newest = lake.table_files(bucket, "events")[-1]
    corrupt = newest.with_name("9999999999.1.deadbeef.parquet")
    corrupt.write_bytes(b"PAR1 this is not a parquet file")

    code, doc, stderr = lake.reconcile_json(project, "-s", "telemetry", "--dry-run")

    assert code == 1, stderr
    errors = [r["error"] for r in doc["results"] if r["error"]]
    assert len(errors) == 1
    assert "table `events`" in errors[0]
    assert str(corrupt) in errors[0]
    # the other table was checked all the same, and so were events' readable files
    found = lake.by_kind(doc)
    assert found[("additive", "readings")]["columns"] == ["unit"]
    assert found[("type", "events")]["columns"] == ["rank"]


def test_a_table_with_a_corrupt_file_is_queried_without_it(
    parquet_lake: tuple[Project, Path]
) -> None:
    """The samples and coverage of the table are read from its other files; the file is
    reported once, on the source's first result."""
    project, bucket = parquet_lake
    corrupt = bucket / "lake" / "events" / "9999999999.1.deadbeef.parquet"
    corrupt.write_bytes(b"")

    code, doc, stderr = lake.reconcile_json(
        project, "-s", "telemetry", "--include-removal", "--dry-run")

    assert code == 1, stderr
    errors = [r["error"] for r in doc["results"] if r["error"]]
    assert len(errors) == 1, errors
    assert errors[0].count(str(corrupt)) == 1, errors
    assert "0 bytes" in errors[0]  # what is wrong with it, in the reader's words
    found = lake.by_kind(doc)
    assert found[("removal", "events")]["coverage"]["actor_login"] == {
        "baseline": 0.8, "recent": 0.0}
    assert len(found[("additive", "events")]["samples"]["payload_size"]) == 5
    assert str(corrupt) not in found[("additive", "events")]["reproduce"]


def test_a_column_retyped_between_files_is_a_finding_and_a_note(
    parquet_lake: tuple[Project, Path]
) -> None:
    """Another writer stores `id` as text in a file of its own: the newest file's type is
    the live type (a type finding), a note names both types, and the queries still run."""
    project, bucket = parquet_lake
    newest = lake.table_files(bucket, "readings")[-1]
    table = pq.read_table(newest)
    retyped = table.set_column(table.schema.get_field_index("id"), "id",
                               pa.array([str(v) for v in table.column("id").to_pylist()]))
    pq.write_table(retyped, newest.with_name("9999999999.1.0ther.parquet"))

    code, doc, stderr = lake.reconcile_json(
        project, "-s", "telemetry", "--include-removal", "--dry-run")

    assert code == 0, stderr
    assert [r["error"] for r in doc["results"]] == [None] * len(doc["results"])
    found = lake.by_kind(doc)
    assert found[("type", "readings")]["column_types"] == {"id": "VARCHAR"}
    notes = [n for r in doc["results"] for n in r["notes"]]
    assert any("column `id` has different types" in n and "BIGINT" in n and "VARCHAR" in n
               for n in notes), notes
    assert found[("additive", "readings")]["columns"] == ["unit"]  # samples still read


def test_a_vanished_table_folder(parquet_lake: tuple[Project, Path]) -> None:
    """dlt loaded `events`, then its folder was deleted: a bucket has no DROP TABLE, so the
    data is lost or moved. One `missing` finding for the table and one error naming it and
    its folder (exit 1), while `readings` is checked as usual."""
    import shutil

    project, bucket = parquet_lake
    folder = bucket / "lake" / "events"
    shutil.rmtree(folder)

    code, doc, stderr = lake.reconcile_json(project, "-s", "telemetry", "--dry-run")

    assert code == 1, stderr
    errors = [r["error"] for r in doc["results"] if r["error"]]
    assert len(errors) == 1
    assert "table `events`" in errors[0], errors
    assert str(folder) in errors[0], errors
    assert "dlt pipeline telemetry_lake drop events" in errors[0]
    found = lake.by_kind(doc)
    assert found[("missing", "events")]["columns"] == [
        "actor_login", "id", "kind", "loaded_at", "rank", "score"]
    notes = [n for r in doc["results"] for n in r["notes"]]
    assert any("table `events`" in n and "no longer exists" in n for n in notes), notes
    assert found[("additive", "readings")]["columns"] == ["unit"]


def test_a_column_only_an_unreadable_file_holds_is_not_reported_missing(
    parquet_lake: tuple[Project, Path]
) -> None:
    """The producer starts sending the declared `score` in a third load, whose file is cut
    short (an upload that broke off): the table is checked without it, and `score` is not
    paged as missing, since only that file could say whether it is there; the error names
    the file and a note says what was not checked."""
    project, bucket = parquet_lake
    project.python(f"""
import dlt
p = dlt.pipeline({lake.PIPELINE!r}, destination="filesystem", dataset_name="lake")
@dlt.resource(name="events")
def events():
    yield from ({{"id": i, "kind": "push", "score": i}} for i in range(200, 203))
p.run(events(), loader_file_format="parquet")
""")
    newest = lake.table_files(bucket, "events")[-1]
    data = newest.read_bytes()
    newest.write_bytes(data[: len(data) // 2])

    code, doc, stderr = lake.reconcile_json(project, "-s", "telemetry", "--dry-run")

    assert code == 1, stderr
    errors = [r["error"] for r in doc["results"] if r["error"]]
    assert len(errors) == 1, errors
    assert str(newest) in errors[0], errors
    found = lake.by_kind(doc)
    assert ("missing", "events") not in found
    notes = [n for r in doc["results"] for n in r["notes"]]
    assert any("table `events`" in n and "`score`" in n and "not reported as missing" in n
               for n in notes), notes
    # read from its other files all the same
    assert found[("additive", "events")]["columns"] == ["payload_size"]
    assert found[("type", "events")]["column_types"] == {"rank": "VARCHAR"}
