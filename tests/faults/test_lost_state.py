"""No false green without the pipeline's local state: a cron container or a CI job runs
`reconcile` on a fresh `DLT_DATA_DIR`, where dlt has no working dir of the pipeline. What was
loaded is then read from the destination's own record (`_dlt_version`, the stored schema dlt
keeps in the dataset), through real dlt loads into DuckDB and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.model.findings import ReconcileResult
from dlt_contract_ops.output.text import to_text
from tests.destinations.servers import Backend, make, unique
from tests.projects import Project

CRM = '''
from typing import Optional

import dlt
from pydantic import BaseModel


class Person(BaseModel):
    id: int
    name: str


class Order(BaseModel):
    id: int
    amount: float
    note: Optional[str] = None


@dlt.resource(columns=Person)
def people():
    yield [{"id": i, "name": f"p{i}"} for i in range(3)]


@dlt.resource(columns=Order)
def orders():
    yield [{"id": i, "amount": 1.5 * i, "note": "n"} for i in range(3)]


@dlt.source(name="crm")
def crm():
    return people(), orders()
'''

PIPELINE = "crm_state_pipe"


@pytest.fixture(params=["duckdb", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    return make(request.param, tmp_path)


@pytest.fixture
def dataset(backend: Backend) -> Iterator[str]:
    name = unique("co_state")
    yield name
    backend.drop_dataset(name)


def _declare(project: Project, backend: Backend, dataset: str) -> Project:
    project.module("crm_mod", CRM)
    project.config("[contract_ops]\nalert_sinks = []\n")
    project.secrets(backend.secrets())
    project.source("crm", "crm_mod:crm", pipeline_name=PIPELINE,
                   destination=backend.destination, dataset_name=dataset)
    return project


def _load(project: Project, backend: Backend, dataset: str, resources: tuple[str, ...] = ()
          ) -> None:
    """A real `pipeline.run` in a subprocess, with the project's credentials."""
    only = f".with_resources(*{list(resources)!r})" if resources else ""
    project.python(
        f"""
        import dlt
        from crm_mod import crm
        p = dlt.pipeline({PIPELINE!r}, destination={backend.destination!r},
                         dataset_name={dataset!r})
        p.run(crm(){only})
        """
    )


def _fresh_data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A cron container: dlt has no local working dir of the pipeline."""
    monkeypatch.setenv("DLT_DATA_DIR", str(tmp_path / "fresh_dlt_data"))


def _by_detector(results: list[ReconcileResult]) -> dict[str, ReconcileResult]:
    return {r.detector: r for r in results}


def test_a_dropped_table_is_missing_drift_without_local_state(
    project: Project, backend: Backend, dataset: str, monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    _declare(project, backend, dataset)
    _load(project, backend, dataset)
    backend.execute(dataset, [f"DROP TABLE {backend.q(dataset, 'orders')}"])
    _fresh_data_dir(monkeypatch, tmp_path)

    results = _by_detector(run(["crm"], project_dir=project.root, dry_run=True))
    missing = results["missing"]
    assert missing.error is None
    [finding] = missing.findings
    assert (finding.resource, finding.table) == ("orders", "orders")
    assert sorted(finding.columns) == ["amount", "id", "note"]
    assert any("`orders`" in n and "no longer exists" in n for n in missing.notes)
    assert "No drift" not in to_text([missing])


def test_a_resource_never_loaded_is_a_note_without_local_state(
    project: Project, backend: Backend, dataset: str, monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """The contrast: the destination's record says `orders` was never loaded."""
    _declare(project, backend, dataset)
    _load(project, backend, dataset, resources=("people",))
    _fresh_data_dir(monkeypatch, tmp_path)

    results = _by_detector(run(["crm"], project_dir=project.root, dry_run=True))
    assert all(r.findings == [] and r.error is None for r in results.values())
    assert any(
        f"`orders` does not exist in dataset `{dataset}` yet: skipped" in n
        for n in results["additive"].notes
    )


def test_a_source_never_loaded_into_a_shared_dataset_says_so(
    project: Project, backend: Backend, dataset: str, monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """Another pipeline loaded the dataset; `crm` never did: a note, and no "✓ No drift"."""
    _declare(project, backend, dataset)
    project.module("other_mod", '''
        import dlt

        @dlt.resource
        def events():
            yield {"id": 1}
        ''')
    project.python(
        f"""
        import dlt
        from other_mod import events
        dlt.pipeline("other_pipe", destination={backend.destination!r},
                     dataset_name={dataset!r}).run(events())
        """
    )
    _fresh_data_dir(monkeypatch, tmp_path)

    results = run(["crm"], project_dir=project.root, dry_run=True)
    assert all(r.findings == [] and r.error is None for r in results)
    additive = _by_detector(results)["additive"]
    assert any("never been loaded" in n and f"`{dataset}`" in n for n in additive.notes)
    text = to_text(results)
    assert "No drift" not in text, text



def test_without_any_record_a_table_whose_siblings_exist_is_missing(
    project: Project, backend: Backend, dataset: str, monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """No local state and no `_dlt_version` either: the models say `orders` belongs beside
    `people`, so its absence is drift, not green."""
    _declare(project, backend, dataset)
    _load(project, backend, dataset)
    backend.execute(dataset, [f"DROP TABLE {backend.q(dataset, 'orders')}",
                              f"DROP TABLE {backend.q(dataset, '_dlt_version')}"])
    _fresh_data_dir(monkeypatch, tmp_path)

    missing = _by_detector(run(["crm"], project_dir=project.root, dry_run=True))["missing"]
    assert [f.table for f in missing.findings] == ["orders"]
