"""`gate check`: run a declared source through the gate without loading anything.

The check runs on a copy of the pipeline's local working folder (its state, so incremental
cursors start where the real pipeline is, and its schemas) in a temporary directory: the real
pipeline, its state and its destination are never touched.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from dlt_contract_ops.model.gate import GateReport


def check_source(name: str, project_dir: str | os.PathLike[str] | None = None) -> GateReport:
    """Extract, normalize and compare source `name` the way `gated_run` would; never load."""
    import dlt
    from dlt.pipeline.exceptions import CannotRestorePipelineException

    from dlt_contract_ops.ingest.run import check_batch
    from dlt_contract_ops.settings.files import project_context
    from dlt_contract_ops.settings.gate import gate_settings
    from dlt_contract_ops.settings.project import load_project_settings
    from dlt_contract_ops.sources.project_imports import begin_run
    from dlt_contract_ops.sources.resolve import resolve_source

    with project_context(project_dir) as pdir:
        begin_run()
        resolved = resolve_source(name, load_project_settings(), pdir)
        settings = resolved.settings
        gate = gate_settings(name)
        pipeline_name = settings.pipeline_name or name
        with tempfile.TemporaryDirectory(prefix="dlt-contract-ops-gate-check-") as tmp:
            try:
                real = dlt.attach(pipeline_name)
                shutil.copytree(real.working_dir, Path(tmp) / pipeline_name)
                pipeline = dlt.attach(pipeline_name, pipelines_dir=tmp)
            except CannotRestorePipelineException:
                pipeline = dlt.pipeline(
                    pipeline_name=pipeline_name,
                    pipelines_dir=tmp,
                    destination=settings.destination,
                    dataset_name=settings.dataset_name or f"{pipeline_name}_dataset",
                )
            contracts = gate.contracts_dir or Path(pdir) / "contracts"
            return check_batch(
                pipeline,
                resolved.built.obj,
                policy=gate.policy,
                load=False,
                quarantine_dir=gate.quarantine_dir,
                contracts_dir=contracts,
                source_name=name,
            )
