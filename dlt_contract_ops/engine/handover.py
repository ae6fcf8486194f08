"""A gate hand-over a killed `gated_run` left pending: found for `validate`, finished by
`dlt-contract-ops gate finish`.

A gated run hands an accepted batch's package to the pipeline (the commit point), installs the
state that goes with it, then loads it. Killed after the hand-over, it leaves a pending package
the gate checked and accepted (`ingest.staging.accepted_ids`), and maybe its state not yet
installed (the hand-over journal). The next `gated_run` finishes both before its own batch; a
plain `pipeline.run(data)` loads the package but drops `data` (dlt's rule for pending
packages), and never installs the gate's state.
"""

from __future__ import annotations

import os
from typing import Any

from dlt_contract_ops.settings.project import SourceSettings


def finish_command(source: str) -> str:
    """The command that finishes a pending hand-over of `source`'s pipeline."""
    return f"dlt-contract-ops gate finish -s {source}"


def _attach(settings: SourceSettings, project_dir: str) -> Any:
    """The source's local pipeline with its destination resolved as a sweep resolves it (so
    its credentials come from dlt's configuration); None when there is no local pipeline."""
    import dlt
    from dlt.pipeline.exceptions import CannotRestorePipelineException

    from dlt_contract_ops.sources.resolve import resolve_target_checked

    name = settings.pipeline_name or settings.name
    try:
        dlt.attach(name)
    except CannotRestorePipelineException:
        return None
    target = resolve_target_checked(settings, project_dir)
    return dlt.attach(name, destination=target.destination)


def accepted_pending(pipeline: Any) -> list[str]:
    """Load ids of `pipeline`'s pending packages that a gate accepted, sorted."""
    from dlt_contract_ops.ingest.staging import accepted_ids, gate_root

    if not pipeline.has_pending_data:
        return []
    pending = set(pipeline.list_normalized_load_packages())
    pending |= set(pipeline.list_extracted_load_packages())
    return sorted(pending & accepted_ids(gate_root(pipeline)))


def pending_handover_note(settings: SourceSettings, project_dir: str) -> str | None:
    """What `validate` says of a hand-over the source's pipeline holds, else None. Reads the
    pipeline's local folder only: no destination is contacted."""
    import dlt
    from dlt.pipeline.exceptions import CannotRestorePipelineException

    try:
        pipeline = dlt.attach(settings.pipeline_name or settings.name)
    except CannotRestorePipelineException:
        return None
    ids = accepted_pending(pipeline)
    if not ids:
        return None
    return (
        f"Pipeline `{pipeline.pipeline_name}` (source `{settings.name}`) holds "
        f"{len(ids)} package(s) a gate accepted and did not finish loading "
        f"({', '.join(f'`{i}`' for i in ids)}): a gated run was stopped mid hand-over. Finish "
        f"it with `{finish_command(settings.name)}` (or the next `gated_run`); a plain "
        "`pipeline.run(data)` loads it and drops `data`."
    )


def finish_handover_of(
    source: str, project_dir: str | os.PathLike[str] | None = None
) -> tuple[str, list[str]]:
    """Finish the pending hand-over of `source`'s pipeline as the next gated run would before
    its batch, under the gate lock: install the state and schemas that go with the accepted
    packages, then load them. (pipeline name, the load ids loaded); a ContractOpsError when
    the pipeline also holds a package no gate checked (it is not loaded with them)."""
    from dlt_contract_ops.errors import ConfigError
    from dlt_contract_ops.ingest.run import refuse_unchecked_packages
    from dlt_contract_ops.ingest.staging import gate_lock
    from dlt_contract_ops.settings.files import project_context
    from dlt_contract_ops.settings.project import load_project_settings, load_source_settings

    with project_context(project_dir) as pdir:
        settings = load_source_settings(source, load_project_settings())
        pipeline = _attach(settings, pdir)
        if pipeline is None:
            raise ConfigError(
                f"Source `{source}`: pipeline `{settings.pipeline_name or source}` has no "
                "local state here, so there is no hand-over to finish."
            )
        ids = accepted_pending(pipeline)
        with gate_lock(pipeline) as root:  # finishes a cut state install (the journal)
            if ids:
                # the gate's own step: refuses a package no gate checked, loads the rest
                refuse_unchecked_packages(pipeline, root)
        return str(pipeline.pipeline_name), ids
