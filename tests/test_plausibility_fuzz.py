"""Issue 18 section 3, by kind: nonsense that the readers accept is refused or warned with its
likely cause, never answered with a confident number (tests/plausibility_inputs.py makes the
cases: degrees, ms, spikes, wrapped angles, interpolated gaps, joints the robot lacks, swapped,
foreign or negated torques, edited results, robot files with duplicate names, missing conventions,
limits in degrees, negative limits, option values out of range, body data of another robot).
A longer campaign: bench/fuzz.py --plausibility N."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dynid.errors import DynidWarning
from plausibility_inputs import KINDS, make_context, run

CASES = settings(max_examples=6, derandomize=True, deadline=None, database=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    return make_context(tmp_path_factory.mktemp("plausibility"))


@pytest.mark.parametrize("kind", list(KINDS))
def test_nonsense_is_refused_or_warned(kind, ctx):
    @CASES
    @given(seed=st.integers(0, 2**31))
    def check(seed):
        expected, observed = run(kind, seed, ctx)
        assert observed == expected, f"{kind} seed {seed}: expected {expected}, got {observed}"

    check()


def test_valid_inputs_stay_silent(ctx):
    """The checks must not cry wolf: the valid logs, their validation and the result give no warning."""
    import dynid
    from dynid.data.io import load_joint_data
    from dynid.data.stream import raw_chunks
    from dynid.identify.prediction import validate_sources

    robot = dynid.load_robot("er3a")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for path in (ctx.log, ctx.validation):
            load_joint_data(path, robot)
            list(raw_chunks(path, robot, chunk_rows=150))
        reports = validate_sources(robot, ctx.result, [ctx.log, ctx.validation])
    assert not [str(w.message) for w in seen if issubclass(w.category, DynidWarning)]
    assert reports["overall"]["relative_error"] < 0.2
