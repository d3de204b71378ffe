import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


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


@pytest.fixture(scope="session")
def kuka_iiwa14() -> Path:
    """shared/real/kuka_iiwa14 (SOURCE.md there): the real iiwa 14 logs and URDF; skips without them."""
    path = shared_path("real", "kuka_iiwa14")
    if path is None:
        pytest.skip("the KUKA iiwa 14 logs (shared/real/kuka_iiwa14) are not on this machine; "
                    "set DYNID_SHARED to the directory that holds real/kuka_iiwa14")
    return path
