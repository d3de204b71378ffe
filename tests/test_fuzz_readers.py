"""Fuzzing harness (issue 14 part 2, issue 18 section 2): for every reader, malformed inputs made
from a valid file by seeded mutations (tests/fuzz_inputs.py: random bytes, truncation, wrong
encodings, missing/duplicated/extra columns, NaN/inf/huge values, wrong types, deep nesting, YAML
alias bombs) either read or raise dynid's own error type; through the CLI they end in exit code 0,
or 2 with one 'error:' line. The kinds of issue 26 (tests/fuzz_kinds.py: options naming one thing
twice, number lists with NaN, corrupt covariances, impossible drive values and transmissions,
gravity in other units, locks beyond the limits, time stamps beyond float resolution, broken
signal files, one log under two names, limits given twice, outputs inside inputs, bag clocks that
restart or stand still, cutoffs above Nyquist, convert --joints twice or short of the robot's, file
names holding glob characters, inputs that do not exist, names the model does not have, robot
names that are lists, report directories of two robots) end as their kind says: refused, warned
or read.
A longer campaign: bench/fuzz.py."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_helpers import run_ok, runner
from dynid.cli.main import app
from dynid.errors import DynidError, DynidWarning
from fuzz_inputs import READERS, cli_command, write_case
from fuzz_kinds import INTERNAL_REPR, KINDS, make_context, run

FAST = settings(max_examples=30, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
CLI = settings(max_examples=6, derandomize=True, deadline=None, database=None,
               suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(scope="module")
def bases(tmp_path_factory):
    """Valid content of each reader's file (the result: one that identify wrote)."""
    d = tmp_path_factory.mktemp("fuzz-base")
    run_ok("simulate", "-r", "planar2", "--out", d / "log.csv", "--duration", "3")
    run_ok("identify", "-r", "planar2", "--data", d / "log.csv", "--out", d / "r.json")
    out = {name: (make() if make else None) for name, (_, make, _) in READERS.items()}
    out["result"] = (d / "r.json").read_bytes()
    out["log"] = d / "log.csv"
    return out


def check_reader(name, seed, base, directory):
    mutation, path = write_case(directory, name, seed, base)
    try:
        with warnings.catch_warnings():  # a mutated log is expected to look implausible: the property is
            warnings.simplefilter("ignore", DynidWarning)  # the exception type, not the warnings on the way
            READERS[name][2](path)
    except DynidError:
        pass
    except Exception as exc:  # noqa: BLE001 - the property under test
        pytest.fail(f"{name} reader, seed {seed} ({mutation}): {type(exc).__name__}: {exc}"[:2000])


@pytest.mark.parametrize("name", list(READERS))
def test_readers_raise_only_dynid_errors(name, bases, tmp_path):
    @FAST
    @given(seed=st.integers(0, 2**31))
    def run(seed):
        check_reader(name, seed, bases[name], tmp_path)

    run()


@pytest.mark.parametrize("name", list(READERS))
def test_cli_turns_bad_input_into_one_line_and_exit_2(name, bases, tmp_path):
    @CLI
    @given(seed=st.integers(0, 2**31))
    def run(seed):
        mutation, path = write_case(tmp_path, name, seed, bases[name])
        out = tmp_path / "out.json"
        result = runner.invoke(app, cli_command(name, path, bases["log"], out))
        where = f"{name} seed {seed} ({mutation}): exit {result.exit_code}\n{result.output[-1500:]}"
        assert result.exit_code in (0, 2), where + repr(result.exception)
        if result.exit_code == 2:
            errors = [ln for ln in result.output.splitlines() if ln.startswith("error: ")]
            assert len(errors) == 1 and "Traceback" not in result.output, where
            assert not INTERNAL_REPR.search(errors[0]), where  # the user's values, not np.float64(...)

    run()


@pytest.fixture(scope="module")
def kinds_context(tmp_path_factory):
    return make_context(tmp_path_factory.mktemp("fuzz-kinds"))


@pytest.mark.parametrize("kind", list(KINDS))
def test_issue26_kinds_are_refused_or_warned(kind, kinds_context, tmp_path):
    @CLI
    @given(seed=st.integers(0, 2**31))
    def check(seed):
        expected, observed, case = run(kind, seed, kinds_context, tmp_path / str(seed))
        assert observed == expected, f"{kind} seed {seed}: {[str(a) for a in case.argv]}: expected {expected}, " \
                                     f"got {observed}"

    check()
