import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# The commands' output is checked as a log or a pipe gets it (cli.common: PIPED_COLUMNS, wider if
# COLUMNS asks): a test that wants a width sets COLUMNS for its subprocess.
os.environ.pop("COLUMNS", None)

from shared_data import shared_path  # noqa: E402
from tiers import REPORT_ABOVE, file_cost, is_slow, stale_entries  # noqa: E402

import installed_wheel  # noqa: E402


def pytest_configure(config):
    """xdist's ``--dist loadfile`` hands out the files in collection order (most expensive first,
    ``pytest_collection_modifyitems``), not its own (most tests first)."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


# Files that share a session fixture too expensive to run twice go to one xdist worker (session
# fixtures are per worker): the report of the demo run from the installed wheel (installed_wheel.py).
SHARED_SCOPES = {"test_report.py": "test_wheel.py"}


@pytest.hookimpl(optionalhook=True)  # an xdist hook: without xdist, nothing to schedule
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` with the files of ``SHARED_SCOPES`` as one unit of work."""
    if config.getoption("dist", None) != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SharedFixtureScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            folder, _, name = scope.rpartition("/")
            shared = SHARED_SCOPES.get(name)
            return f"{folder}/{shared}" if shared and folder else shared or scope

    return SharedFixtureScheduling(config, log)


def pytest_collection_modifyitems(config, items):
    """Mark the slow tier (tests/tiers.py): ``make check`` runs ``-m "not slow"``; order the files
    by their cost (tests/tiers.py: FILE_SECONDS), the tests of a file kept together in their order."""
    items.sort(key=lambda item: -file_cost(item.path.name))  # stable: each file's tests stay in order
    collected = set()
    for item in items:
        name = getattr(item, "originalname", None) or item.name.split("[")[0]
        collected.add((item.path.name, name))
        if is_slow(item.path.name, name):
            item.add_marker(pytest.mark.slow)
    for entry in stale_entries(collected):
        config.issue_config_time_warning(pytest.PytestConfigWarning(
            f"tests/tiers.py: SLOW_TESTS names {entry}, which is not collected (renamed or removed?)"), 2)


_long_fast_tests: list[tuple[float, str]] = []


def pytest_runtest_logreport(report):
    if report.when in ("setup", "call") and "slow" not in report.keywords and report.duration > REPORT_ABOVE:
        _long_fast_tests.append((report.duration, f"{report.nodeid} ({report.when})"))


def pytest_terminal_summary(terminalreporter):
    if _long_fast_tests:
        terminalreporter.write_sep("-", f"fast-tier tests over {REPORT_ABOVE:.0f} s (a busy machine, or add them "
                                        "to tests/tiers.py)")
        for duration, nodeid in sorted(_long_fast_tests, reverse=True):
            terminalreporter.write_line(f"{duration:6.1f} s  {nodeid}")


@pytest.fixture(scope="session")
def kuka_iiwa14() -> Path:
    """shared/real/kuka_iiwa14 (SOURCE.md there): the real iiwa 14 logs and URDF; skips without them."""
    path = shared_path("real", "kuka_iiwa14")
    if path is None:
        pytest.skip("the KUKA iiwa 14 logs (shared/real/kuka_iiwa14) are not on this machine; "
                    "set DYNID_SHARED to the directory that holds real/kuka_iiwa14")
    return path


@pytest.fixture(scope="session")
def wheel_venv(tmp_path_factory) -> Path:
    """A fresh virtual environment with dynid's wheel installed (installed_wheel.py)."""
    keep = os.environ.get("DYNID_WHEEL_KEEP")
    return installed_wheel.install_wheel(Path(keep) if keep else tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="session")
def wheel_demo(wheel_venv) -> tuple[Path, str]:
    """(demo directory, printed output) of ``dynid demo`` run from ``wheel_venv``, small budget."""
    return installed_wheel.run_demo(wheel_venv)
