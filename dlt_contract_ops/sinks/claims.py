"""Who holds a pending claim on a finding's alert in the dedup state (`sinks.dedup`): a run
names itself `host:pid`; its claim stands while that process runs on this host, or, from
another host, until its lease runs out, so a claim a killed run left never blocks for long."""

from __future__ import annotations

import os
import socket
from typing import Any

from dlt_contract_ops.statefile import pid_alive

#: a pending claim of a run on another host stops counting after this many seconds
PENDING_LEASE = 900.0


def owner() -> str:
    """This process, as a claim names its owner."""
    return f"{socket.gethostname()}:{os.getpid()}"


def owner_alive(owner: Any, now: float, since: Any, lease: float) -> bool:
    """Whether a pending claim still stands: its process runs (same host) or, on another
    host, its lease has not run out."""
    if not isinstance(since, int | float) or now - float(since) >= lease:
        return False
    host, _, pid = str(owner).rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return True
    return pid_alive(int(pid))
