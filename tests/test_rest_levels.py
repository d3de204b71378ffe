"""The levels of the rests (identify/rest_levels.py, H1) summed in the pass that builds the Gram
matrices equal the straightforward computation: the whole regressor of the prepared log, each
rest's rows summed (S, s, m) joint by joint, A_j -= S S^T / m, B_j -= S s / m, C_j -= s^2 / m.
On the tree kernel (er3a), with a coupled transmission (tx40: a row holds every motor at rest
acting on it) and on the NumPy path of mimic joints; rests that cross the worker threads' shares,
the regressor's blocks and the chunks of a stream."""

from __future__ import annotations

import numpy as np
import pytest
from realistic_logs import resting_log

import dynid
from dynid.data.columns import ColumnMapping
from dynid.data.io import load_joint_data, write_joint_data
from dynid.data.preprocess import Preprocessing, edge_samples, prepare, prepared_rate
from dynid.data.rest import choose_rest
from dynid.data.segments import segment_edge_mask
from dynid.identify import ModelOptions, base_parameters
from dynid.identify.model import identification_regressor, own_columns, place_motor_columns
from dynid.identify.normal_equations import NormalEquations
from dynid.identify.pipeline import accumulate_sources, fitted_rest, make_estimator, row_mask
from dynid.identify.rest_levels import RestLevels, RestRuns, runs


def _prepared(robot, path, options, prep):
    """The whole log prepared in memory, and its fitted rows away from the segment edges (N,)."""
    ready = prepare(load_joint_data(path, robot, ColumnMapping(), "drop", prep), prep,
                    joint_columns=own_columns(robot, options))
    return ready, segment_edge_mask(ready, edge_samples(prep, prepared_rate(ready)))


def _level_terms(robot, ready, keep, options, base, prep) -> tuple[NormalEquations, np.ndarray]:
    """(the straightforward H1 terms of the prepared log: each rest's sums S, s, m taken from the
    full regressor one rest at a time, then S S^T / m, S s / m, s^2 / m; rests per joint)."""
    y = identification_regressor(robot, ready.q, ready.dq, ready.ddq, options)
    if ready.own is not None:
        place_motor_columns(robot, options, ready.own, y)
    y = y[..., base.independent]
    terms, rests = NormalEquations(robot.n, base.rank), np.zeros(robot.n, dtype=np.int64)
    rest = fitted_rest(robot, ready.dq, keep, prep)
    segment = ready.segment if ready.segment is not None else np.zeros(len(ready), dtype=np.int64)
    for j in range(robot.n):
        for start, stop in runs(rest[:, j]):  # a rest ends with its segment
            for piece in np.split(np.arange(start, stop), np.flatnonzero(np.diff(segment[start:stop])) + 1):
                s_y, s_tau, m = y[piece, j].sum(axis=0), ready.tau[piece, j].sum(), piece.size
                terms.A[j] += np.outer(s_y, s_y) / m
                terms.B[j] += s_y * s_tau / m
                terms.C[j] += s_tau**2 / m
                terms.rows[j] += 1
                terms.tau_sum[j] += s_tau
                rests[j] += 1
    return terms, rests


def _straightforward(robot, path, options, base, prep) -> tuple[NormalEquations, np.ndarray]:
    """(the normal equations of the whole prepared log by NumPy less the straightforward H1 terms;
    rests per joint)."""
    ready, keep = _prepared(robot, path, options, prep)
    terms, rests = _level_terms(robot, ready, keep, options, base, prep)
    y = identification_regressor(robot, ready.q, ready.dq, ready.ddq, options)
    if ready.own is not None:
        place_motor_columns(robot, options, ready.own, y)
    ne = NormalEquations(robot.n, base.rank)
    ne.add(y[..., base.independent], ready.tau, row_mask(ready.dq, keep, prep))
    return ne - terms, rests


def _robot(name, tmp_path):
    if name != "mimic":
        return dynid.load_robot(name)
    from urdf_factory import random_urdf

    return dynid.load_robot(random_urdf(tmp_path / "mimic.urdf", np.random.default_rng(3), [0, 1, 2, 3],
                                        ["revolute"] * 4, {3: (2, 0.7, 0.3)}))


@pytest.mark.parametrize("name", ["er3a", "tx40", "mimic"])
def test_rest_levels_from_the_gram_pass_equal_the_straightforward_computation(tmp_path, name):
    """The streamed normal equations (two worker threads, blocks of 2048 rows) equal NumPy's with
    the straightforward rest terms to 1e-12, and so do the fitted parameters where the fit is
    conditioned well enough for that to mean anything (er3a, tx40: normal equations perturbed by
    1e-16 move them by 3e-14; on the random mimic robot by 1e-10, so there the equations are
    compared)."""
    robot = _robot(name, tmp_path)
    options = ModelOptions()
    base = base_parameters(robot, options)
    data, *_ = resting_log(robot, 250.0, 40.0, seed=4, together=False)
    path = tmp_path / "log.csv"
    write_joint_data(path, data)
    prep, _, _ = choose_rest(robot, [path], Preprocessing(lowpass_hz=8.0))
    assert prep.rest_band
    reference, rests = _straightforward(robot, path, options, base, prep)
    assert rests.min() >= 2, rests  # every joint rests, on its own
    streamed = accumulate_sources(robot, [path], options, base, prep=prep, chunk_rows=len(data.t) + 1, workers=2).ne
    np.testing.assert_array_equal(streamed.rows, reference.rows)
    for got, want in [(streamed.A, reference.A), (streamed.B, reference.B), (streamed.C, reference.C)]:
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * np.abs(want).max())
    if name != "mimic":
        fit = lambda ne: make_estimator("ols", robot, options, base).fit_normal_equations(ne).coef_  # noqa: E731
        expected = fit(reference)
        np.testing.assert_allclose(fit(streamed), expected, rtol=0, atol=1e-12 * np.abs(expected).max())


def test_rests_cut_into_chunks_give_the_terms_of_the_whole():
    """RestRuns labels the runs of each joint's rest rows; RestLevels continues a rest that goes on
    into the next chunk and ends it at its run's end, the chunk that closes, or a chunk that does
    not start at rest: the terms of a log cut anywhere equal those of the whole, and the
    straightforward ones (S S^T / m, S s / m, s^2 / m per run)."""
    rng = np.random.default_rng(7)
    count, n, b = 3000, 3, 5
    rest = np.repeat(rng.random((count // 50, n)) < 0.5, 50, axis=0) & (rng.random((count, n)) < 0.97)
    rest[:40, 0] = rest[-40:, 1] = True  # rests at both ends
    y, tau = rng.normal(size=(count, n, b)), rng.normal(size=(count, n))

    def feed(levels, lo, hi, close):
        rests = RestRuns.of(rest[lo:hi])
        assert np.array_equal(rests.label >= 0, rest[lo:hi])
        for r, (j, start, stop) in enumerate(zip(rests.joint, rests.start, rests.stop)):
            assert np.all(rests.label[start:stop, j] == r) and [(start, stop)] == [
                p for p in runs(rest[lo:hi, j]) if p[0] == start]
        y_sum = np.array([y[lo + s:lo + e, j].sum(axis=0) for j, s, e in zip(rests.joint, rests.start, rests.stop)])
        tau_sum = np.array([tau[lo + s:lo + e, j].sum() for j, s, e in zip(rests.joint, rests.start, rests.stop)])
        levels.add(rests, y_sum.reshape(-1, b), tau_sum, hi - lo, close)

    whole = RestLevels(n, b)
    feed(whole, 0, count, close=True)
    expected = NormalEquations(n, b)
    for j in range(n):
        for start, stop in runs(rest[:, j]):
            s_y, s_tau, m = y[start:stop, j].sum(axis=0), tau[start:stop, j].sum(), stop - start
            expected.A[j] += np.outer(s_y, s_y) / m
            expected.B[j] += s_y * s_tau / m
            expected.C[j] += s_tau**2 / m
            expected.rows[j] += 1
    cuts = np.unique(np.concatenate([[0, 40, 41, 1000, 1050, count - 40], rng.integers(1, count, 20), [count]]))
    chunked = RestLevels(n, b)
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        feed(chunked, lo, hi, close=hi == count)
    for terms in (whole.take(), chunked.take()):
        np.testing.assert_array_equal(terms.rows, expected.rows)
        for got, want in [(terms.A, expected.A), (terms.B, expected.B), (terms.C, expected.C)]:
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * np.abs(want).max())


def test_in_memory_fits_from_the_gram_pass_equal_the_fits_of_the_regressor_array(tmp_path):
    """fit_data (per cycle, cycle validation) fits an estimator that works from normal equations
    from ``sample_equations`` (the Gram pass, the rests' sums on the way) instead of the (N, n, b)
    regressor with each rest's mean removed: the same parameters to 1e-12; each rest counts as
    the unknown it is (one row less per rest, as in the streamed equations)."""
    from dynid.identify.pipeline import fit_data, regressor_arrays, sample_equations

    robot = dynid.load_robot("er3a")
    options, base = ModelOptions(), base_parameters(robot, ModelOptions())
    data, *_ = resting_log(robot, 250.0, 40.0, seed=4, together=False)
    path = tmp_path / "log.csv"
    write_joint_data(path, data)
    prep, _, _ = choose_rest(robot, [path], Preprocessing(lowpass_hz=8.0))
    ready, keep = _prepared(robot, path, options, prep)
    y, tau, mask = regressor_arrays(robot, ready, options, base, prep)
    from_array = make_estimator("ols", robot, options, base).fit(y, tau, mask)
    from_gram = fit_data(robot, ready, options, base, make_estimator("ols", robot, options, base), prep, prepared=True)
    np.testing.assert_allclose(from_gram.coef_, from_array.coef_, rtol=0, atol=1e-12 * np.abs(from_array.coef_).max())
    _, rests = _level_terms(robot, ready, keep, options, base, prep)
    np.testing.assert_array_equal(sample_equations(robot, ready, options, base, prep).rows, mask.sum(axis=0) - rests)
