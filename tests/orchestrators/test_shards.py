"""The orchestrator examples sharded: Airflow's task per shard (`shard_specs`,
`reconcile_task(shard=...)`) and Dagster's job with a partition per shard (`build_shard_job`)
find together what one unsharded run finds, against the DuckDB shop project."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from dlt_contract_ops.core.shard import shard_of
from tests.orchestrators.conftest import GHOST, GHOST_SOURCE, load_example

airflow_dag = load_example("airflow_dag")
checks = load_example("dagster_checks")

DRIFTED = ["shop", "shop_extra", "shop_clean"]


def _ids(document: dict[str, Any]) -> set[str]:
    return {f["id"] for r in document["results"] for f in r["findings"]}


@pytest.fixture
def without_ghost(project_dir: Path) -> Path:
    config = project_dir / ".dlt" / "config.toml"
    config.write_text(config.read_text().replace(GHOST_SOURCE, ""))
    return project_dir


def test_airflow_maps_a_task_per_shard(project_dir: Path) -> None:
    assert airflow_dag.shard_specs(3) == ["1/3", "2/3", "3/3"]
    whole = _ids(airflow_dag.reconcile_task(project_dir, sources=DRIFTED))
    assert len(whole) == 3  # the shop's drift: the union below is not vacuous
    for count in (2, 3):
        parts = [_ids(airflow_dag.reconcile_task(project_dir, sources=DRIFTED, shard=spec))
                 for spec in airflow_dag.shard_specs(count)]
        assert set().union(*parts) == whole
        assert sum(len(p) for p in parts) == len(whole)


def test_an_airflow_shard_that_cannot_check_its_part_fails(project_dir: Path) -> None:
    """The ghost dataset: the shard of its name fails, and so does any shard with tables of
    it (its task must not look green), naming the shard that alerted."""
    count = 3
    owner = shard_of(GHOST, None, count)
    failed = {}
    for i, spec in enumerate(airflow_dag.shard_specs(count), 1):
        try:
            airflow_dag.reconcile_task(project_dir, sources=[GHOST], shard=spec)
        except airflow_dag.ContractCheckFailed as exc:
            failed[i] = str(exc)
    assert owner in failed
    assert set(failed) == {owner} | {shard_of(GHOST, "clean", count)}
    for i, message in failed.items():
        assert "ghost_data" in message
        assert (f"shard {owner}/{count} sends the alert" in message) == (i != owner)


def test_dagster_runs_a_partition_per_shard(without_ghost: Path) -> None:
    whole = _ids(airflow_dag.reconcile_task(without_ghost))
    assert len(whole) == 3
    job = checks.build_shard_job(without_ghost, shards=3)
    assert job.partitions_def.get_partition_keys() == ["1/3", "2/3", "3/3"]
    found: list[str] = []
    for key in job.partitions_def.get_partition_keys():
        result = job.execute_in_process(partition_key=key)
        assert result.success
        output = result.output_for_node("contract_drift_sweep_shard")
        assert output["shard"] == key
        found += output["findings"]
    assert sorted(found) == sorted(whole)


def test_a_dagster_shard_fails_like_a_check(project_dir: Path) -> None:
    job = checks.build_shard_job(project_dir, shards=3, fail_on_drift=True)
    owner = f"{shard_of(GHOST, None, 3)}/3"
    result = job.execute_in_process(partition_key=owner, raise_on_error=False)
    assert not result.success
    [failure] = result.get_step_failure_events()
    data = failure.step_failure_data.user_failure_data
    assert data is not None
    assert data.description.startswith(f"shard {owner}: reconciler error")
    assert "ghost_data" in data.metadata["error"].value


def test_dagster_dev_adds_the_job_when_asked(without_ghost: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTRACT_OPS_PROJECT_DIR", str(without_ghost))
    monkeypatch.setenv("CONTRACT_OPS_SHARDS", "2")
    defs = checks.defs()
    assert isinstance(defs, dg.Definitions)
    assert defs.resolve_job_def("contract_drift_sweep").partitions_def is not None
