"""Results do not depend on how a log is cut into chunks (``--chunk-rows``): every segment's
rate, resampling and edge trim come from the segment itself (data.timing), never from its
first chunk."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dynid.data.io import load_joint_data, write_joint_data
from dynid.data.preprocess import Preprocessing, edge_samples, prepare
from dynid.data.segments import segment_ranges
from dynid.data.stream import with_edges
from dynid.identify import ModelOptions, base_parameters
from dynid.identify.pipeline import accumulate_sources
from dynid.simulate import random_multisine, simulate_joint_data

import dynid
from cli_helpers import read_columns, run_ok

FS = 500.0  # 3 fs / 20 Hz = 75 edge samples exactly: the rate estimate's rounding used to move it
CHUNKS = (613, 2048, 100_000)  # shorter than the filter margin, a few windows, the whole log


def _log(path, jitter: bool):
    """A planar2 log (12 s at 500 Hz, torque noise); ``jitter``: time stamps jittered by 10 % of
    the step and a 0.3 s gap (two segments)."""
    robot = dynid.load_robot("planar2")
    rng = np.random.default_rng(5)
    t = np.arange(0.0, 12.0, 1.0 / FS)
    if jitter:
        t = t + rng.uniform(-0.1, 0.1, t.size) / FS
        t = t[(t < 5.0) | (t > 5.3)]
    q, dq, ddq = random_multisine(robot, seed=3).sample(t)
    data, _, _ = simulate_joint_data(robot, t, q, dq, ddq, ModelOptions(), seed=4)
    data.tau = data.tau + rng.normal(0.0, 0.05, data.tau.shape)
    data.dq = data.ddq = None
    write_joint_data(path, data)
    return path


def _close(a, b, what, rel: float = 1e-12):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape, what
    np.testing.assert_allclose(a, b, rtol=0, atol=rel * max(np.abs(b).max(), 1e-300), err_msg=what)


@pytest.mark.parametrize("jitter", [False, True], ids=["clean", "jittered-with-gap"])
def test_identify_validate_predict_do_not_depend_on_chunk_rows(tmp_path, jitter):
    log = _log(tmp_path / "log.csv", jitter)
    runs = {}
    for rows in CHUNKS:
        result, pred, report = (tmp_path / f"{name}{rows}" for name in ("r.json", "p.csv", "v.json"))
        run_ok("identify", "-r", "planar2", "--data", log, "--out", result, "--chunk-rows", rows)
        run_ok("predict", "-r", "planar2", "--params", tmp_path / f"r.json{CHUNKS[0]}", "--data", log,
               "--out", pred, "--chunk-rows", rows)
        run_ok("validate", "-r", "planar2", "--params", tmp_path / f"r.json{CHUNKS[0]}", "--data", log,
               "--json", report, "--chunk-rows", rows)
        runs[rows] = (json.loads(result.read_text()), read_columns(pred), json.loads(report.read_text())[str(log)])
    first, columns, figures = runs[CHUNKS[0]]
    for rows, (result, pred, report) in runs.items():
        _close([p["value"] for p in result["base_parameters"]], [p["value"] for p in first["base_parameters"]],
               f"parameters at --chunk-rows {rows}")
        # the fit's RMSD comes from the normal equations, RSS = C - 2 B'beta + beta'A beta: a difference
        # of sums ||tau||^2 / RSS (here 2e3-7e4) times larger, whose rounding it carries (ddq differs by
        # rounding, ~1e-10 of 1/dt^2, between chunkings: the windows' filters start elsewhere)
        _close(result["fit"]["rmsd"], first["fit"]["rmsd"], f"fit at --chunk-rows {rows}", rel=1e-9)
        assert result["lowpass_selection"]["chosen_hz"] == first["lowpass_selection"]["chosen_hz"]
        assert sorted(pred) == sorted(columns)
        for name in columns:
            _close(pred[name], columns[name], f"predicted {name} at --chunk-rows {rows}")
        assert report["samples"] == figures["samples"]
        for key in ("rmsd", "relative_rmsd", "relative_error"):
            _close(report[key], figures[key], f"validation {key} at --chunk-rows {rows}")


def test_every_segment_loses_exactly_its_edge_samples_at_any_chunk_size(tmp_path):
    """The fit keeps a segment's prepared samples minus edge_samples at each end, at the
    segment's own rate; ``with_edges`` marks the same samples however the prepared log is cut,
    also into pieces shorter than the edge."""
    log = _log(tmp_path / "log.csv", jitter=True)
    robot = dynid.load_robot("planar2")
    prep = Preprocessing(lowpass_hz=20.0)
    ready = prepare(load_joint_data(log, robot, prep=prep), prep)
    parts = segment_ranges(ready)
    trims = [edge_samples(prep, 1.0 / np.median(np.diff(ready.t[rows]))) for _, rows in parts]
    assert len(parts) == 2
    base = base_parameters(robot, ModelOptions())
    for rows in (613, 100_000):
        acc = accumulate_sources(robot, [log], ModelOptions(), base, prep=prep, chunk_rows=rows)
        assert [s.samples for s in acc.sources[0].segments] == [
            r.stop - r.start - 2 * trim for (_, r), trim in zip(parts, trims)]
    whole = np.concatenate([np.r_[np.zeros(trim, bool), np.ones(r.stop - r.start - 2 * trim, bool),
                                  np.zeros(trim, bool)] for (_, r), trim in zip(parts, trims)])
    for size in (7, 30, 1000):  # pieces far shorter than the ~76 edge samples, and longer
        pieces = []
        for segment, r in parts:
            rate = 1.0 / np.median(np.diff(ready.t[r]))
            for a in range(r.start, r.stop, size):
                piece = ready.select(slice(a, min(a + size, r.stop)))
                piece.rate = rate
                pieces.append(piece)
        marked = list(with_edges(iter(pieces), prep))
        assert [len(c) for c, _, _ in marked] == [len(p) for p in pieces]
        np.testing.assert_array_equal(np.concatenate([keep for _, keep, _ in marked]), whole)
        assert sum(last for _, _, last in marked) == 2
