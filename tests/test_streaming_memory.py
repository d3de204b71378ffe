"""Issue 18 section 4: predict, validate and simulate stream long logs as identify does. The facts:
the streamed numbers equal those of the whole log at once (chunking is invisible), and the memory
a pass allocates does not grow with the log's length (tracemalloc counts NumPy's buffers)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import dynid
from cli_helpers import read_columns, run_ok
from dynid.identify.model import ModelOptions
from dynid.identify.prediction import prediction_columns, validate_sources
from dynid.identify.prediction import predict_file
from dynid.identify.result import load_result
from dynid.identify.validation import validation_report
from dynid.simulate import Measurement, random_multisine
from dynid.simulate.drift import FrictionDrift, Warmup
from dynid.simulate.stream import Timeline, simulated_chunks


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    d = tmp_path_factory.mktemp("streaming")
    for name, seconds in (("short.csv", "10"), ("long.csv", "40")):
        run_ok("simulate", "-r", "planar2", "--out", d / name, "--duration", seconds, "--rate", "500",
               "--tau-noise", "0.05")
    # a fixed cutoff: a pass holds chunk_rows + 3 margins (20 fs / cutoff, data/stream.py), so both
    # logs must be several margins long for "4x the rows, the same memory" to be the fact tested;
    # --lowpass auto's choice (2.5 Hz since the tie rule, margin 4000 rows) would make the 10 s log
    # shorter than one window and the comparison one of a whole log against windows
    run_ok("identify", "-r", "planar2", "--data", d / "short.csv", "--out", d / "r.json", "--lowpass", "20")
    return d


def test_simulation_in_chunks_is_the_simulation_at_once():
    robot = dynid.load_robot("planar2")
    line = Timeline.uniform(3.0, 200.0)
    kw = dict(options=ModelOptions(), measurement=Measurement((0.1, 0.2), 4096.0), seed=5,
              drift=FrictionDrift(), jitter=0.4, cycles=3, warmup=Warmup())
    sample = random_multisine(robot, seed=5).sample
    pieces = list(simulated_chunks(robot, line, sample, chunk=97, **kw))
    whole = list(simulated_chunks(robot, line, sample, chunk=10**6, **kw))
    assert len(pieces) == 7 and len(whole) == 1
    for key, values in whole[0].items():
        assert np.array_equal(np.concatenate([p[key] for p in pieces]), values), key
    assert np.all(np.diff(whole[0]["t"]) > 0) and whole[0]["cycle"][[0, -1]].tolist() == [1, 3]


def test_streamed_prediction_and_validation_equal_the_whole_log(d):
    robot = dynid.load_robot("planar2")
    result = load_result(d / "r.json", robot)
    whole = predict_file(robot, result, d / "long.csv")
    streamed = list(prediction_columns(robot, result, [d / "long.csv"], chunk_rows=1500))
    assert np.array_equal(np.concatenate([c["t"] for c in streamed]), whole["t"])
    for j in range(robot.n):
        assert np.allclose(np.concatenate([c[f"tau{j + 1}"] for c in streamed]), whole["tau_hat"][:, j],
                           rtol=0, atol=1e-9)
    whole = predict_file(robot, result, d / "long.csv", chunk_rows=1500)  # the same edge trims (fs estimate)
    k = whole["interior"]
    expected = validation_report(whole["tau"][k], whole["tau_hat"][k], whole["dq"][k], 0.05)
    report = validate_sources(robot, result, [d / "long.csv"], min_velocity=0.05, chunk_rows=1500)[str(d / "long.csv")]
    for key in ("rmsd", "relative_rmsd"):
        assert np.allclose(report[key], expected[key], rtol=1e-9)
        assert np.allclose(report["moving"][key], expected["moving"][key], rtol=1e-9)
    assert report["relative_error"] == pytest.approx(expected["relative_error"], rel=1e-9)
    assert report["torque_scale"] == pytest.approx(1.0, abs=0.02)  # the model's own robot


def test_predict_command_writes_what_predict_file_computes(d):
    robot = dynid.load_robot("planar2")
    run_ok("predict", "-r", "planar2", "--params", d / "r.json", "--data", d / "long.csv", "--out", d / "p.csv")
    written = read_columns(d / "p.csv")
    assert list(written) == ["t", "tau1", "tau2"]  # one segment: no segment column
    whole = predict_file(robot, load_result(d / "r.json", robot), d / "long.csv")
    assert np.allclose(written["tau2"], whole["tau_hat"][:, 1], rtol=0, atol=1e-9)


def _peak(call) -> int:
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_does_not_grow_with_the_log(d):
    """A four times longer log: the same peak of traced allocations (chunks of 2000 rows)."""
    robot = dynid.load_robot("planar2")
    result = load_result(d / "r.json", robot)
    line = {name: Timeline.uniform(seconds, 500.0) for name, seconds in (("short", 10.0), ("long", 40.0))}
    sample = random_multisine(robot).sample

    def passes(name):
        yield lambda: validate_sources(robot, result, [d / f"{name}.csv"], chunk_rows=2000)
        yield lambda: [c for c in prediction_columns(robot, result, [d / f"{name}.csv"], chunk_rows=2000)]
        yield lambda: [c for c in simulated_chunks(robot, line[name], sample, chunk=2000)]

    for short, long in zip(passes("short"), passes("long")):
        small, large = _peak(short), _peak(long)
        assert large < 1.3 * small + 2e6, (small, large)  # 4x the rows, not 4x the memory
