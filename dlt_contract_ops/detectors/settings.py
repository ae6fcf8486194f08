"""Each detector's own settings for one source (`DetectorRun.settings`).

A detector with a pydantic settings model (`Detector.settings`) owns `[contract_ops.<name>]`,
overlaid per source by `[sources.<X>.contract_ops.<name>]`: each key is read from dlt's
providers (environment variables, secrets.toml, config.toml, in dlt's order) at exactly
those tables, and the merged values are validated into the model. A value the model refuses
is a ConfigError naming the key, the file and the environment variable (exit 2); an unknown
key is one too (`settings.problems`). A built-in's settings are a function of the source's
resolved settings (`detectors.builtin`), read and checked by `settings.project`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from dlt_contract_ops.errors import ConfigError
from dlt_contract_ops.registry import resolve
from dlt_contract_ops.settings.detectors import settings_model
from dlt_contract_ops.settings.problems import not_a_table, raise_problems
from dlt_contract_ops.settings.project import PROJECT_SECTION, source_section
from dlt_contract_ops.settings.resolve import _exact_value
from dlt_contract_ops.settings.values import where

if TYPE_CHECKING:
    from dlt_contract_ops.detection.detector import Detector
    from dlt_contract_ops.settings.project import SourceSettings


def _raw(model: type[BaseModel], sections: tuple[str, ...]) -> dict[str, Any]:
    """The model's keys set at exactly `sections`, from dlt's providers."""
    out = {}
    for key in model.model_fields:
        value = _exact_value(key, Any, sections)
        if value is not None:
            out[key] = value
    return out


def own_settings(detector: Detector, source: SourceSettings) -> Any:
    """The detector's settings for `source` (`DetectorRun.settings`); None without any."""
    if detector.settings is None:
        return None
    model = settings_model(detector)
    if model is None:
        return resolve(detector.settings)(source)

    project = f"{PROJECT_SECTION}.{detector.name}"
    own = f"{source_section(source.name)}.{detector.name}"
    raise_problems([m for m in (not_a_table(project), not_a_table(own)) if m])
    values: dict[str, Any] = _raw(model, tuple(project.split(".")))
    origin = dict.fromkeys(values, project)
    per_source = _raw(model, ("sources", source.name, PROJECT_SECTION, detector.name))
    values.update(per_source)
    origin.update(dict.fromkeys(per_source, own))
    return validate(model, values, origin, project)


def validate(
    model: type[BaseModel], values: Mapping[str, Any], origin: Mapping[str, str], section: str
) -> BaseModel:
    """`values` as `model`; ConfigError naming each refused key where it is set."""
    try:
        return model.model_validate(dict(values))
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            key = str(error["loc"][0]) if error["loc"] else ""
            at = origin.get(key, section)
            given = f" = {values[key]!r}" if key in values else ""
            problems.append(f"{where(f'{at}.{key}')}{given}: {error['msg']}.")
        raise ConfigError(" ".join(problems)) from None
