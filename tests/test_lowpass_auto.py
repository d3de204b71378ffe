"""--lowpass auto: blocked cross-validation of the low-pass cutoff (identify/crossval.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dynid
from dynid.data.blocks import read_blocks
from dynid.data.io import write_joint_data
from dynid.data.preprocess import Preprocessing, edge_mask, edge_samples, prepare, sample_rate
from dynid.identify.base import base_parameters, identifiability_table
from dynid.identify.crossval import (
    CrossValidationError, choose_lowpass, fold_equations, fold_labels, held_out_score, select_lowpass,
)
from dynid.identify.estimators import OrdinaryLeastSquares
from dynid.identify.model import ModelOptions, own_columns
from dynid.identify.pipeline import fit_data, regressor_arrays
from dynid.identify.undetermined import find_undetermined

from cli_helpers import runner
from realistic_logs import realistic_log
from dynid.cli.main import app


def test_folds_are_contiguous_runs_with_gaps_only_around_cuts_inside_a_block():
    labels = fold_labels([1000, 400], folds=5, gap=10)
    rows = np.concatenate(labels)
    for k in range(5):
        idx = np.flatnonzero(rows == k)
        runs = np.count_nonzero(np.diff(idx) > 1) + 1
        assert runs == 1 or (runs == 2 and idx[0] < 1000 <= idx[-1]), k  # contiguous (a block end may split one)
    assert np.all(np.diff(rows[rows >= 0]) >= 0)  # folds follow time order
    gaps = np.flatnonzero(rows < 0)
    cuts = np.ceil(np.arange(1, 5) * 1400 / 5)
    assert all(np.min(np.abs(cuts - g)) < 10 for g in gaps)
    # files or segments near the cuts: the folds are whole pieces, no gap needed
    assert [np.unique(lab).tolist() for lab in fold_labels([50, 60, 70], folds=3, gap=5)] == [[0], [1], [2]]
    assert [np.unique(lab).tolist() for lab in fold_labels([200] * 10, folds=5, gap=5)] == [[k // 2] for k in range(10)]


def test_files_and_segments_are_cross_validated_as_pieces_of_their_own(tmp_path):
    """Nothing is filtered across a file or segment boundary (each is a piece, prepared alone)."""
    robot = dynid.load_robot("planar2")
    paths = []
    for k in range(2):  # two files, the second with a 2 s gap in the middle: three segments
        data, _, _ = realistic_log(robot, 100.0, 40.0, seed=20 + k, drop=0.0)
        if k == 1:
            data = data.select(np.abs(data.t - 20.0) > 1.0)
        write_joint_data(tmp_path / f"log{k}.csv", data)
        paths.append(tmp_path / f"log{k}.csv")
    options = ModelOptions()
    prep, selection = choose_lowpass(robot, paths, options, base_parameters(robot, options), folds=3)
    assert selection.blocks == 3 and prep.lowpass_hz == selection.chosen_hz


def test_leave_one_fold_out_by_subtraction_equals_refitting_on_the_other_folds():
    robot = dynid.load_robot("planar2")
    options = ModelOptions()
    base = base_parameters(robot, options)
    data, _, _ = realistic_log(robot, 200.0, 20.0, seed=3)
    prep = Preprocessing(lowpass_hz=5.0)
    labels = fold_labels([len(data)], 4, gap=20)
    table = identifiability_table(robot, options)
    parts = fold_equations(robot, [data], labels, options, base, prep, prep, 4, table)
    score, rss = held_out_score(parts, base.names, 1e7)
    # the same from the samples: refit on the other folds' rows, residual on the fold's rows
    ready = prepare(data, prep, joint_columns=own_columns(robot, options))
    y, tau, _ = regressor_arrays(robot, ready, options, base, prep)
    keep = edge_mask(len(ready), edge_samples(prep, sample_rate(ready.t)))
    fold = labels[0][np.clip(np.searchsorted(data.t, ready.t), 0, len(data) - 1)]
    direct = []
    for k in range(4):
        train = keep & (fold >= 0) & (fold != k)
        est = OrdinaryLeastSquares().fit(y[train], tau[train])
        test = keep & (fold == k)
        direct.append(np.sum((tau[test] - y[test] @ est.coef_) ** 2, axis=0))
    np.testing.assert_allclose(rss, np.array(direct), rtol=1e-6)
    held = keep & (fold >= 0)
    assert score == pytest.approx(np.sqrt(np.sum(direct) / np.sum(tau[held] ** 2)), rel=1e-6)


def test_each_refit_holds_what_the_log_cannot_determine_as_identify_does():
    """Joint 1 held within 0.02 rad: the parameters only its motion excites keep the
    description's values in every leave-one-fold-out refit (identify/undetermined.py), and the
    others are refitted; the held-out residuals equal identify's fit on the other folds."""
    robot = dynid.load_robot("planar2")
    options = ModelOptions()
    base = base_parameters(robot, options)
    data, _, _ = realistic_log(robot, 200.0, 20.0, seed=4, still=(0,), still_amplitude=0.01)
    prep = Preprocessing(lowpass_hz=5.0)
    labels = fold_labels([len(data)], 4, gap=20)
    parts = fold_equations(robot, [data], labels, options, base, prep, prep, 4, identifiability_table(robot, options))
    ready = prepare(data, prep, joint_columns=own_columns(robot, options))
    keep = edge_mask(len(ready), edge_samples(prep, sample_rate(ready.t)))
    found = find_undetermined(robot, options, base, ready.q[keep].min(axis=0), ready.q[keep].max(axis=0))
    assert found.still == [0] and "Fv1" in [base.names[k] for k in found.index]
    _, rss = held_out_score(parts, base.names, 1e7, found)
    y, tau, _ = regressor_arrays(robot, ready, options, base, prep)
    fold = labels[0][np.clip(np.searchsorted(data.t, ready.t), 0, len(data) - 1)]
    direct = []
    for k in range(4):
        train, test = keep & (fold >= 0) & (fold != k), keep & (fold == k)
        est = OrdinaryLeastSquares(base.names, **found.options()).fit(y[train], tau[train])
        assert np.all(est.coef_[found.index] == found.prior[found.index])
        direct.append(np.sum((tau[test] - y[test] @ est.coef_) ** 2, axis=0))
    np.testing.assert_allclose(rss, np.array(direct), rtol=1e-6)
    selection = select_lowpass(robot, [data], options, base)
    assert selection.undetermined == [base.names[k] for k in found.index]
    assert select_lowpass(robot, [data], options, base, still_range=0.0).undetermined == []


def _held_out(robot, options, base, train, val, val_true, cutoff):
    """(relative error against the measured, against the true torque) on the validation log."""
    prep = Preprocessing(lowpass_hz=cutoff)
    est = fit_data(robot, train, options, base, OrdinaryLeastSquares(), prep)
    ready = prepare(val, prep)
    y, tau, _ = regressor_arrays(robot, ready, options, base, prep)
    keep = edge_mask(len(ready), int(1.5 * sample_rate(ready.t)))  # the same samples for every cutoff
    pred = y[keep] @ est.coef_
    true = val_true[keep]
    return (np.linalg.norm(tau[keep] - pred) / np.linalg.norm(tau[keep]),
            np.linalg.norm(true - pred) / np.linalg.norm(true))


@pytest.mark.parametrize("rate, seconds", [(100.0, 60.0), (1000.0, 24.0), (5000.0, 12.0)])
def test_automatic_cutoff_is_within_ten_percent_of_the_best_fixed_one(rate, seconds):
    """planar2 (direct drive): a 2^16-count joint encoder quantizes q as a 500-count motor
    encoder behind a 1:121 gear would (bench/lowpass_auto.py runs the er3a)."""
    robot = dynid.load_robot("planar2")
    options = ModelOptions()
    base = base_parameters(robot, options)
    train, _, _ = realistic_log(robot, rate, seconds, seed=11, encoder_counts=2**16)
    val, _, tau_val = realistic_log(robot, rate, 12.0, seed=12, encoder_counts=2**16, drop=0.0)
    chosen = select_lowpass(robot, [train], options, base).chosen_hz
    fine = np.geomspace(max(0.5, 30.0 / seconds), min(50.0, 0.4 * rate), 10)  # edges below a tenth of the log
    errors = np.array([_held_out(robot, options, base, train, val, tau_val, fc) for fc in fine])
    auto = _held_out(robot, options, base, train, val, tau_val, chosen)
    assert auto[0] <= 1.10 * errors[:, 0].min(), (chosen, auto, errors)
    assert auto[1] <= 1.2 * errors[:, 1].min(), (chosen, auto, errors)  # and against the noise-free torque


def test_a_known_excitation_narrows_the_search_without_losing_accuracy():
    """The multi-sine's highest harmonic (0.2 Hz x 5 = 1 Hz) given (identify --excitation T):
    fewer candidates are scored, and the choice still predicts another log within 10 % of the
    best fixed cutoff."""
    robot = dynid.load_robot("planar2")
    options = ModelOptions()
    base = base_parameters(robot, options)
    train, _, _ = realistic_log(robot, 200.0, 60.0, seed=13, encoder_counts=2**16)
    val, _, tau_val = realistic_log(robot, 200.0, 12.0, seed=14, encoder_counts=2**16, drop=0.0)
    blind = select_lowpass(robot, [train], options, base)
    known = select_lowpass(robot, [train], options, base, bandwidth=1.0)
    assert len(known.candidates_hz) < len(blind.candidates_hz) and "excitation" in known.grid["source"]
    fine = np.geomspace(0.5, 50.0, 10)
    best = min(_held_out(robot, options, base, train, val, tau_val, fc)[0] for fc in fine)
    assert _held_out(robot, options, base, train, val, tau_val, known.chosen_hz)[0] <= 1.10 * best


def test_long_logs_are_sampled_in_evenly_spread_contiguous_blocks(tmp_path):
    robot = dynid.load_robot("planar2")
    data, _, _ = realistic_log(robot, 100.0, 100.0, seed=5, drop=0.0)
    write_joint_data(tmp_path / "log.csv", data)
    blocks = read_blocks(tmp_path / "log.csv", robot, budget=2000, count=4, chunk_rows=700)
    assert [len(b) for b in blocks] == [500] * 4
    for b in blocks:
        np.testing.assert_allclose(np.diff(b.t), 0.01, atol=1e-9)  # contiguous rows
    middles = np.array([b.t.mean() for b in blocks])
    np.testing.assert_allclose(middles, (np.arange(4) + 0.5) * data.t[-1] / 4, atol=0.5)
    whole = read_blocks(tmp_path / "log.csv", robot, budget=20_000, count=4, chunk_rows=700)
    assert len(whole) == 1 and len(whole[0]) == len(data)


def test_identify_chooses_the_cutoff_by_default_and_an_explicit_one_wins(tmp_path):
    robot = dynid.load_robot("planar2")
    data, _, _ = realistic_log(robot, 200.0, 30.0, seed=6)
    write_joint_data(tmp_path / "log.csv", data)
    common = ["identify", "-r", "planar2", "--data", str(tmp_path / "log.csv")]
    result = runner.invoke(app, common + ["--out", str(tmp_path / "auto.json")])
    assert result.exit_code == 0, result.output
    saved = json.loads((tmp_path / "auto.json").read_text())
    selection = saved["lowpass_selection"]
    best = selection["candidates_hz"][int(np.argmin([np.inf if s is None else s for s in selection["scores"]]))]
    assert saved["preprocessing"]["lowpass_hz"] == selection["chosen_hz"] == best
    assert selection["folds"] == 5 and "cross-validation" in result.output
    result = runner.invoke(app, common + ["--out", str(tmp_path / "fixed.json"), "--lowpass", "7.5"])
    fixed = json.loads((tmp_path / "fixed.json").read_text())
    assert fixed["preprocessing"]["lowpass_hz"] == 7.5 and "lowpass_selection" not in fixed


def test_a_log_too_short_for_its_folds_is_one_clear_error_when_auto_is_asked(tmp_path):
    robot = dynid.load_robot("planar2")
    data, _, _ = realistic_log(robot, 100.0, 0.6, seed=7)  # 5 folds of 0.12 s: 2 periods of 16.7 Hz
    write_joint_data(tmp_path / "short.csv", data)
    common = ["identify", "-r", "planar2", "--data", str(tmp_path / "short.csv")]
    result = runner.invoke(app, common + ["--out", str(tmp_path / "r.json"), "--lowpass", "auto"])
    assert result.exit_code == 2 and "too short for 5-fold cross-validation" in result.output
    assert "short.csv" in result.output and not (tmp_path / "r.json").exists()
    with pytest.raises(CrossValidationError, match="at least 2 folds"):
        select_lowpass(robot, [data], ModelOptions(), base_parameters(robot, ModelOptions()), folds=1)
    # the default falls back to the fixed cutoff, and says so
    result = runner.invoke(app, common + ["--out", str(tmp_path / "d.json")])
    assert result.exit_code == 0, result.output
    saved = json.loads((tmp_path / "d.json").read_text())
    assert saved["preprocessing"]["lowpass_hz"] == pytest.approx(10.0) and "reason" in saved["lowpass_selection"]
    assert any("not cross-validated" in n for n in saved["data_notes"])
