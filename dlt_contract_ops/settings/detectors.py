"""Each detector's own settings: `[contract_ops.<detector>]`, overlaid per source by
`[sources.<X>.contract_ops.<detector>]`, validated into the detector's pydantic model.

A detector declares its settings as `Detector.settings` (see `dlt_contract_ops.detector`):
a pydantic model, read here from dlt's providers (environment variables, secrets.toml,
config.toml, in dlt's order) at exactly those two tables; or a function of the source's
resolved settings (the built-ins, whose tables `settings.project` reads). A value the model
refuses is a ConfigError naming the key, the file and the environment variable; an unknown
key in the table is one too (`settings.problems`, from `model_keys`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, BeforeValidator, ValidationError

from dlt_contract_ops.detector import resolve
from dlt_contract_ops.errors import ConfigError
from dlt_contract_ops.settings.duration import parse_duration
from dlt_contract_ops.settings.project import PROJECT_SECTION, _exact_value, source_section, where

if TYPE_CHECKING:
    from dlt_contract_ops.detector import Detector
    from dlt_contract_ops.settings.project import SourceSettings


def _duration(value: Any) -> timedelta:
    try:
        return parse_duration(value, "the value")
    except ConfigError as exc:  # pydantic reports a ValueError with the key it validated
        raise ValueError(str(exc).removeprefix("`the value` = ")) from None


#: a span of time in the settings' one grammar (`"90s"`, `"6h"`, `"1d"`, `"PT6H"`, seconds),
#: for a detector's settings model: `max_age: Duration = timedelta(days=1)`
Duration = Annotated[timedelta, BeforeValidator(_duration)]


def settings_model(detector: Detector) -> type[BaseModel] | None:
    """The detector's settings model, when its settings are one (else None)."""
    value = resolve(detector.settings) if detector.settings is not None else None
    if isinstance(value, type) and issubclass(value, BaseModel):
        return value
    return None


def model_keys(detector: Detector) -> frozenset[str] | None:
    """The keys `[contract_ops.<detector>]` may hold; None when the detector has no model."""
    model = settings_model(detector)
    return None if model is None else frozenset(model.model_fields)


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
    from dlt_contract_ops.settings.problems import not_a_table, raise_problems

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
