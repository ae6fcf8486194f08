"""Regenerate every golden file from the code as it is: `make golden`.

The tests only compare; after a deliberate change run this, then review the diff of the
golden folders like code (`git diff tests/*/golden`). Files no case produces are left alone
and reported, and `test_every_golden_file_has_a_case` fails on them.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.contracts import test_golden as contracts_golden
from tests.contracts import test_odcs_mapping as odcs_golden
from tests.destinations import test_golden as destinations_golden


def main() -> int:
    """Write each golden file whose content differs; print what changed."""
    os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")
    files: dict[Path, str] = {**destinations_golden.golden_files(),
                              **contracts_golden.golden_files(), **odcs_golden.golden_files()}
    changed = 0
    for path, text in sorted(files.items()):
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}")
        changed += 1
    for folder in {p.parent for p in files}:
        for stray in sorted(set(folder.glob("*.*")) - set(files)):
            print(f"no case produces {stray}: delete it if the case is gone")
    print(f"{changed} of {len(files)} golden files changed; review them with `git diff`.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
