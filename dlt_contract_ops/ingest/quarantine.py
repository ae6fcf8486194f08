"""Where a rejected batch is kept: `<quarantine_dir>/<pipeline>/<UTC stamp>/` with `diff.json`,
the rows as the source sent them (`raw/<resource>.jsonl`) and the extracted dlt package."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any


def quarantine(
    staged: Any, folder: Path, report: dict[str, Any], raw: Mapping[str, list[Any]]
) -> Path:
    """Copy the staged batch's extracted packages, write the raw rows (a model that refused
    the batch leaves no package, and one that coerced it changed the values) and `diff.json`
    (last, so a folder with `diff.json` is whole); the folder's path. Raises OSError when the
    folder cannot be written."""
    from dlt.common import json as dlt_json

    from dlt_contract_ops.contracts.store import resource_filename

    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    # absolute: the report and the alert name it long after the cwd changed
    target: Path = (folder / str(staged.pipeline_name) / stamp).absolute()
    target.mkdir(parents=True, exist_ok=True)
    for load_id in staged.list_extracted_load_packages():
        info = staged.get_load_package_info(load_id)
        shutil.copytree(info.package_path, target / load_id)
    (target / "raw").mkdir()
    for resource, items in raw.items():
        path = target / "raw" / (resource_filename(resource)[: -len(".json")] + ".jsonl")
        path.write_text("".join(dlt_json.dumps(i) + "\n" for i in items), encoding="utf-8")
    (target / "diff.json").write_text(
        json.dumps(report, indent=2, ensure_ascii=False, default=str), encoding="utf-8"
    )
    return target


def default_quarantine() -> Path:
    import dlt

    return Path(str(dlt.current.run_context().data_dir)) / "contract_ops" / "quarantine"
