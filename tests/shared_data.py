"""Where the project's shared data lies (no pytest: the bench scripts import it too)."""

from __future__ import annotations

import os
from pathlib import Path


def shared_path(*parts: str) -> Path | None:
    """A file or directory of the project's shared data, or None when this machine lacks it:
    under $DYNID_SHARED when set, else under the first ``shared/`` found walking up from the
    repository (works from /work/main, a worktree /work/wt/NAME, and a CI checkout beside
    ``shared/``). Real data is read from there, never copied into the repository."""
    roots = [Path(os.environ["DYNID_SHARED"])] if os.environ.get("DYNID_SHARED") else []
    roots += [parent / "shared" for parent in Path(__file__).resolve().parents]
    for root in roots:
        path = root.joinpath(*parts)
        if path.exists():
            return path
    return None
