"""What a detector declares it reads beyond the source's input (`Detector.profiles`).

Light on purpose: `detection.detector` imports it at run time, and the registry and the
CLI's `--help` import that without pydantic, dlt or a driver.
"""

from __future__ import annotations

from typing import Literal

#: what a detector reads of the source's load profiles: row and non-NULL counts per load
#: (removal's windows), or those and distinct counts, ranges and categories too (the
#: distribution rule)
ProfileNeed = Literal["counts", "detailed"]
#: every `ProfileNeed`, least first
PROFILE_NEEDS: tuple[ProfileNeed, ...] = ("counts", "detailed")
