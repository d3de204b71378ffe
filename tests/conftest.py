import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from shared_data import shared_path  # noqa: E402


@pytest.fixture(scope="session")
def kuka_iiwa14() -> Path:
    """shared/real/kuka_iiwa14 (SOURCE.md there): the real iiwa 14 logs and URDF; skips without them."""
    path = shared_path("real", "kuka_iiwa14")
    if path is None:
        pytest.skip("the KUKA iiwa 14 logs (shared/real/kuka_iiwa14) are not on this machine; "
                    "set DYNID_SHARED to the directory that holds real/kuka_iiwa14")
    return path
