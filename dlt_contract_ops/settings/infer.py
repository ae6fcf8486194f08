"""`models infer`'s settings, `[contract_ops.infer]`: when a text column is a code set."""

from __future__ import annotations

#: a text column with at most this many distinct values...
DEFAULT_CODE_SET_MAX_VALUES = 10
#: ...over at least this many non-NULL rows is declared a code set
DEFAULT_CODE_SET_MIN_ROWS = 100


def code_set_thresholds(
    max_values: int | None = None, min_rows: int | None = None
) -> tuple[int, int]:
    """(max values, min rows) of a code set: as given, else `[contract_ops.infer]`
    `code_set_max_values` / `code_set_min_rows`, else the `DEFAULT_*` constants. Inside a
    project context; ConfigError naming the key on a bad value."""
    from dlt_contract_ops.settings.resolve import _resolve
    from dlt_contract_ops.settings.specs import InferSpec
    from dlt_contract_ops.settings.values import COUNT, where

    spec = _resolve(InferSpec(), ("contract_ops", "infer"))

    def read(given: int | None, key: str, default: int) -> int:
        if given is not None:
            return given
        value = getattr(spec, key)
        return default if value is None else COUNT.read(value, where(f"contract_ops.infer.{key}"))

    return (read(max_values, "code_set_max_values", DEFAULT_CODE_SET_MAX_VALUES),
            read(min_rows, "code_set_min_rows", DEFAULT_CODE_SET_MIN_ROWS))
