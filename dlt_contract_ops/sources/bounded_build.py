"""A user's source built within a time bound (`source_build_timeout` in `[contract_ops]`).

Building a source runs the user's code: the module's import and the source function. One that
waits on the network or a lock would keep a whole sweep (`reconcile --all`, `validate`)
waiting, so the build runs in a thread of its own and the caller waits at most the timeout;
then that source is a `SourceBuildTimeoutError` and the sweep goes on.

A Python thread cannot be stopped from outside, so a build still running is abandoned, and
made harmless:

- the thread is a daemon: the interpreter does not wait for it when the command ends;
- it writes its outcome only into a box of its own that the caller stops reading at the
  timeout: the source cache, the sweep and the results never see a late build (the cache is
  written by the caller, after a build returned in time);
- dlt's injection contexts (a source's schema, its config sections) are kept per thread by
  dlt's `Container`, so what dlt sets while the abandoned build runs stays in that thread.
  Its name must not start with `dlt-pool-`: dlt would share the caller's contexts with it.
  dlt keys those contexts by thread id and never drops a finished thread's, while the OS
  hands a finished thread's id to the next one: the build starts from no contexts (a pipeline
  left active by a dead thread would otherwise cap the naming at its destination's identifier
  length) and leaves none behind.

Each abandoned build keeps its thread until its code returns or the process exits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta
from typing import TypeVar

from dlt_contract_ops.errors import SourceBuildTimeoutError

KEY = "contract_ops.source_build_timeout"

_T = TypeVar("_T")


class _Outcome:
    """What the build thread returned or raised; read by the caller only if it came in time."""

    value: object = None
    error: BaseException | None = None

    def __init__(self) -> None:
        self.done = threading.Event()


def bounded_build(build: Callable[[], _T], source: str, ref: str, timeout: float) -> _T:
    """`build()` (the import and build of source `source`), or SourceBuildTimeoutError when
    it has not returned within `timeout` seconds; what it raises is raised here.

    >>> bounded_build(lambda: 42, "crm", "crm_mod:crm", 5.0)
    42
    """
    outcome = _Outcome()

    def run() -> None:
        _drop_thread_contexts()
        try:
            outcome.value = build()
        except BaseException as exc:  # handed to the caller (SystemExit from user code too)
            outcome.error = exc
        finally:
            _drop_thread_contexts()
            outcome.done.set()

    thread = threading.Thread(target=run, name=f"contract-ops-build-{source}", daemon=True)
    thread.start()
    if not outcome.done.wait(timeout):
        raise SourceBuildTimeoutError(_message(source, ref, timeout))
    if outcome.error is not None:
        raise outcome.error
    return outcome.value  # type: ignore[return-value]  # set by `build()`, of type _T


def _drop_thread_contexts() -> None:
    """Forget dlt's injection contexts kept under this thread's id (see the module doc)."""
    from dlt.common.configuration.container import Container

    container = Container()
    with Container._LOCK:
        container.thread_contexts.pop(threading.get_ident(), None)


def _message(source: str, ref: str, timeout: float) -> str:
    from dlt_contract_ops.settings.duration import human
    from dlt_contract_ops.settings.values import where

    module = ref.partition(":")[0]
    return (
        f"Source `{source}` was not built within {human(timedelta(seconds=timeout))} "
        f"(`source_build_timeout`): importing `{module}` or calling `{ref}` has not returned "
        "(a network call or a lock in the source function?). Make it return without waiting, "
        f"or raise {where(KEY)}."
    )
