"""dynid predict --std: the standard deviation of each predicted torque (identify/bands.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dynid
from dynid.data.io import write_joint_data
from dynid.data.preprocess import Preprocessing, prepare
from dynid.identify.bands import torque_std
from dynid.identify.base import base_parameters
from dynid.identify.estimators import WeightedLeastSquares
from dynid.identify.model import ModelOptions
from dynid.identify.pipeline import fit_data, regressor_arrays

from cli_helpers import read_columns, run_ok, runner
from dynid.cli.main import app
from realistic_logs import realistic_log


def _model_band(encoder_counts: float, cutoff: float, ripple: float = 0.0, drop: float = 0.0):
    """30 training logs of planar2 (other noise and trajectory each; torque noise 2 % of each
    joint's RMS torque, drive ripple ``ripple`` of it, a share ``drop`` of the rows lost), one
    validation trajectory: (errors of the predicted torques against the noise-free ones,
    their predicted std sqrt(y C y)), each (draws, samples, joints)."""
    robot = dynid.load_robot("planar2")
    options = ModelOptions()
    base = base_parameters(robot, options)
    prep = Preprocessing(lowpass_hz=cutoff)
    val, _, true = realistic_log(robot, 200.0, 20.0, seed=99, noise=0.02, ripple=0.0,
                                 encoder_counts=encoder_counts, drop=0.0)
    y, _, _ = regressor_arrays(robot, prepare(val, prep), options, base, prep)
    inner = slice(300, -300)  # filter edges
    errors, std = [], []
    for draw in range(30):
        train, _, _ = realistic_log(robot, 200.0, 30.0, seed=100 + draw, noise=0.02, ripple=ripple,
                                    encoder_counts=encoder_counts, drop=drop)
        est = fit_data(robot, train, options, base, WeightedLeastSquares(), prep)
        errors.append((true - y @ est.coef_)[inner])
        std.append(torque_std(y, est.cov_)[inner])
    return np.array(errors), np.array(std)


@pytest.mark.parametrize("encoder_counts, cutoff, drop", [(0.0, 0.0, 0.0), (2.0**16, 5.0, 0.0), (2.0**16, 5.0, 0.01)])
def test_about_95_percent_of_noise_free_torques_lie_in_the_two_sigma_band(encoder_counts, cutoff, drop):
    """The share of (draw, sample) pairs whose noise-free torque lies within +-2 sqrt(y C y) of the
    prediction. Exact derivatives (0 Hz: no filter), quantized positions low-passed at 5 Hz, and
    the same with 1 % of the training rows dropped (irregular stamps, resampled)."""
    errors, std = _model_band(encoder_counts, cutoff, drop=drop)
    inside = np.abs(errors) <= 2.0 * std
    assert 0.92 <= np.mean(inside) <= 0.98, np.mean(inside, axis=(0, 1))


def test_drive_ripple_is_a_model_error_the_band_does_not_cover():
    """Realistic defects (docs/identification.md "Prediction bands"): drive ripple of 0.5 % of each
    joint's RMS torque (R1: six periods per revolution of planar2's direct-drive motors, so inside
    the excitation band and a function of q), 1 % of the rows dropped, 2^16-count encoders. The
    ripple is not noise the covariance knows of: the parameters scatter about 3 x as far as
    C = sigma^2 (Y^T W Y)^-1 says (measured 2.96 x), and only about half of the noise-free
    torques (measured 47.6 %) lie in the +-2 sigma model band."""
    errors, std = _model_band(2.0**16, 5.0, ripple=0.005, drop=0.01)
    share = np.mean(np.abs(errors) <= 2.0 * std)
    spread = np.sqrt(np.mean(errors**2) / np.mean(std**2))
    assert 0.35 <= share <= 0.6 and 2.3 <= spread <= 3.8, (share, spread)


def test_predict_writes_model_and_measurement_bands(tmp_path):
    robot = dynid.load_robot("planar2")
    train, _, _ = realistic_log(robot, 200.0, 30.0, seed=7, noise=0.02, ripple=0.0, encoder_counts=0.0, drop=0.0)
    val, _, _ = realistic_log(robot, 200.0, 20.0, seed=8, noise=0.02, ripple=0.0, encoder_counts=0.0, drop=0.0)
    write_joint_data(tmp_path / "train.csv", train)
    write_joint_data(tmp_path / "val.csv", val)
    run_ok("identify", "-r", "planar2", "--data", tmp_path / "train.csv", "--out", tmp_path / "r.json",
           "--estimator", "wls", "--lowpass", "0")
    bands = {}
    for kind in ("model", "measurement"):
        run_ok("predict", "-r", "planar2", "--params", tmp_path / "r.json", "--data", tmp_path / "val.csv",
               "--out", tmp_path / f"{kind}.csv", "--std", kind)
        cols = read_columns(tmp_path / f"{kind}.csv")
        bands[kind] = np.column_stack([cols["std1"], cols["std2"]])
        hat = np.column_stack([cols["tau1"], cols["tau2"]])
    assert np.all(bands["model"] > 0) and np.all(bands["measurement"] > bands["model"])
    inner = slice(300, -300)
    share = np.mean(np.abs(val.tau[inner] - hat[inner]) <= 2.0 * bands["measurement"][inner])
    assert 0.93 <= share <= 0.97, share  # measured torques: residual variance included
    result = json.loads((tmp_path / "r.json").read_text())
    del result["covariance"]
    (tmp_path / "old.json").write_text(json.dumps(result))
    out = runner.invoke(app, ["predict", "-r", "planar2", "--params", str(tmp_path / "old.json"), "--data",
                              str(tmp_path / "val.csv"), "--out", str(tmp_path / "x.csv"), "--std", "model"])
    assert out.exit_code == 2 and "covariance" in out.output and not (tmp_path / "x.csv").exists()
