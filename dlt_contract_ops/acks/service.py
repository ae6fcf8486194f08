"""What `ack`, `acks` and `unack` do, so the commands only parse and render."""

from __future__ import annotations

import datetime as dt
import getpass
import os
from pathlib import Path

from dlt_contract_ops.acks.store import (
    ACKS_FILE,
    Ack,
    add_ack,
    parse_until,
    read_acks,
    remove_ack,
)
from dlt_contract_ops.errors import ConfigError
from dlt_contract_ops.history.index import known_findings
from dlt_contract_ops.settings.project import lock_timeout_setting


def record_ack(
    finding_id: str,
    until: str,
    reason: str,
    by: str | None,
    *,
    force: bool = False,
    project_dir: str | os.PathLike[str] | None = None,
    now: dt.datetime | None = None,
) -> tuple[Ack, Path]:
    """Write one acknowledgement; ConfigError for an unknown id (unless `force`), a bad
    `until` or an empty reason."""
    from dlt_contract_ops.settings.files import project_context

    now = now or dt.datetime.now(dt.timezone.utc)
    with project_context(project_dir) as pdir:
        fid = finding_id.strip().lower()
        if len(fid) != 12 or any(c not in "0123456789abcdef" for c in fid):
            raise ConfigError(
                f"`{finding_id}` is not a finding id: copy the 12-character id `reconcile` "
                "prints (`id ...` in text, `\"id\"` in JSON)."
            )
        if not reason.strip():
            raise ConfigError("`--reason` must say why the drift is accepted.")
        expires = parse_until(until, now)
        if expires <= now:
            raise ConfigError(f"`--until {until}` is in the past.")
        seen = known_findings(pdir).get(fid)
        if seen is None and not force:
            raise ConfigError(
                f"No recent run found finding `{fid}`: run `dlt-contract-ops reconcile` and copy "
                "an id it prints, or pass `--force` to acknowledge a drift you expect."
            )
        seen = seen or {}
        entry = Ack(
            id=fid,
            until=expires,
            reason=reason.strip(),
            by=(by or os.environ.get("USER") or getpass.getuser() or "unknown").strip(),
            created=now.replace(microsecond=0),
            source=seen.get("source"),
            table=seen.get("table"),
            detector=seen.get("detector"),
            columns=tuple(seen.get("columns") or ()),
            # what the finding said when acknowledged: it covers that, or narrower; an id the
            # index does not describe (`--force`, an index from before) is covered by id alone
            content=tuple(seen["content"]) if isinstance(seen.get("content"), list) else None,
            digest=seen.get("digest"),
            summary=seen.get("summary"),
        )
        path = Path(pdir) / ACKS_FILE
        add_ack(path, entry, lock_timeout=lock_timeout_setting())
        return entry, path


def list_acks(
    project_dir: str | os.PathLike[str] | None = None,
) -> tuple[list[Ack], list[str], dt.datetime]:
    from dlt_contract_ops.settings.files import project_context

    with project_context(project_dir) as pdir:
        entries, problems = read_acks(Path(pdir) / ACKS_FILE)
    return entries, problems, dt.datetime.now(dt.timezone.utc)


def withdraw_ack(finding_id: str, project_dir: str | os.PathLike[str] | None = None) -> bool:
    from dlt_contract_ops.settings.files import project_context

    with project_context(project_dir) as pdir:
        return remove_ack(Path(pdir) / ACKS_FILE, finding_id.strip().lower(),
                          lock_timeout=lock_timeout_setting())


def ack_problems(project_dir: str, now: dt.datetime | None = None) -> list[tuple[str, str]]:
    """(rule, message) for `validate`: malformed, expired and orphaned acknowledgements."""
    now = now or dt.datetime.now(dt.timezone.utc)
    path = Path(project_dir) / ACKS_FILE
    entries, problems = read_acks(path)
    out = [("ack_malformed", p) for p in problems]
    known = known_findings(project_dir)
    for a in entries:
        if a.expired(now):
            out.append(("ack_expired", f"acknowledgement `{a.id}` ({ACKS_FILE}) expired on "
                        f"{a.until.isoformat()}: its drift alerts again; extend it with `ack "
                        f"{a.id} --until ...` or remove it with `unack {a.id}`."))
        elif known and a.id not in known:
            out.append(("ack_orphaned", f"acknowledgement `{a.id}` ({ACKS_FILE}) matches no "
                        "drift a recent run found: the drift is gone or changed; remove it with "
                        f"`unack {a.id}`."))
    return out
