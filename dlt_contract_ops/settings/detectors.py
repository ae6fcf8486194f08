"""What a detector's settings model is made of: its keys (the unknown-key check of
`settings.problems`) and `Duration`, the settings' one duration grammar as a pydantic type.

A detector declares its settings as `Detector.settings` (see `dlt_contract_ops.detection.detector`):
a pydantic model, read from `[contract_ops.<detector>]` overlaid per source by
`[sources.<X>.contract_ops.<detector>]` (`detector_settings.own_settings`); or a function of
the source's resolved settings (the built-ins, whose tables `settings.project` reads).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any, Protocol

from pydantic import BaseModel, BeforeValidator

from dlt_contract_ops.errors import ConfigError
from dlt_contract_ops.registry import resolve
from dlt_contract_ops.settings.duration import parse_duration


class Configurable(Protocol):
    """What the settings read of a detector: its name and its `settings` declaration (a
    `Detector` is one). Settings sit below the detectors, so they name no `Detector`."""

    @property
    def name(self) -> str: ...

    @property
    def settings(self) -> Any: ...


def _duration(value: Any) -> timedelta:
    try:
        return parse_duration(value, "the value")
    except ConfigError as exc:  # pydantic reports a ValueError with the key it validated
        raise ValueError(str(exc).removeprefix("`the value` = ")) from None


#: a span of time in the settings' one grammar (`"90s"`, `"6h"`, `"1d"`, `"PT6H"`, seconds),
#: for a detector's settings model: `max_age: Duration = timedelta(days=1)`
Duration = Annotated[timedelta, BeforeValidator(_duration)]


def settings_model(detector: Configurable) -> type[BaseModel] | None:
    """The detector's settings model, when its settings are one (else None)."""
    value = resolve(detector.settings) if detector.settings is not None else None
    if isinstance(value, type) and issubclass(value, BaseModel):
        return value
    return None


def model_keys(detector: Configurable) -> frozenset[str] | None:
    """The keys `[contract_ops.<detector>]` may hold; None when the detector has no model."""
    model = settings_model(detector)
    return None if model is None else frozenset(model.model_fields)
