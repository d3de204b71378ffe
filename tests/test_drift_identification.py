"""A model whose friction drifts from cold to warm (identify --friction-drift, eq. 5.4 in the
model): on a simulated thesis test with the thesis' drift (Table 5.6) it predicts a cold and a
warm log as well as its own training log, where the static model misses both by far."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from cli_helpers import failing, read_columns, run_ok
from doc_figures import assert_same_figures, doc_rows, doc_text
from dynid.data.io import write_columns
from dynid.simulate.thesis_friction import TABLE_5_6

NOISE = 0.3  # N m
DOC = "thesis-chapter5.md"  # figures of its section 1 (Fig. 5.15) and of docs/identification.md come from here


def _error(output: str) -> float:
    """The relative error ||tau - tau_hat|| / ||tau|| printed by dynid validate, as a fraction."""
    line = next(x for x in output.splitlines() if x.startswith("relative error"))
    return float(line.rsplit("=", 1)[1].strip().rstrip("%")) / 100.0


@pytest.fixture(scope="module")
def thesis_test(tmp_path_factory):
    """Six cycles of the thesis protocol at 10 Hz (35 min) with the thesis' friction and drift,
    identified with a static and a drifting friction; an excitation log (thesis Table 4.1, 60 s)
    recorded cold (at the cold start) and warm (right after the test)."""
    d = tmp_path_factory.mktemp("drift")
    run_ok("excite", "protocol", "-r", "er3a", "-o", d / "p.csv", "-K", 6, "--rate", 10)
    run_ok("simulate", "-r", "er3a", "--trajectory", d / "p.csv", "-o", d / "test.csv", "--tau-noise", NOISE)
    end = float(read_columns(d / "p.csv")["t"][-1])
    common = ["simulate", "-r", "er3a", "--trajectory", "thesis-table-4.1", "--duration", 60, "--rate", 10,
              "--thesis-friction", "--tau-noise", NOISE]
    run_ok(*common, "--seed", 5, "--since-cold", 0, "-o", d / "cold.csv")
    run_ok(*common, "--seed", 6, "--since-cold", end, "-o", d / "warm.csv")
    # --rest off: this noise-free 10 Hz log's truth keeps Coulomb friction through the stationary
    # points of its trajectory (|dq| down to 1e-4 rad/s for 0.3-0.8 s at each period's end), and at
    # 10 Hz its fast swings reach the rate where rest detection measures the noise (data/rest.py):
    # those points would count as rests (docs/identification.md, "Standing still")
    fit = ["identify", "-r", "er3a", "-d", d / "test.csv", "--friction", "polynomial", "--lowpass", 0, "--rest", "off"]
    run_ok(*fit, "-o", d / "static.json")
    printed = run_ok(*fit, "--friction-drift", "time", "-o", d / "drift.json")
    return d, end, printed


def test_the_drifting_model_predicts_cold_and_warm_where_the_static_one_misses(thesis_test):
    d, end, _ = thesis_test
    errors = {}
    for model in ("static", "drift"):
        errors[model, "self"] = _error(run_ok("validate", "-r", "er3a", "-p", d / f"{model}.json", "-d",
                                              d / "test.csv"))
        for log, since in (("cold", 0), ("warm", end)):
            errors[model, log] = _error(run_ok("validate", "-r", "er3a", "-p", d / f"{model}.json", "-d",
                                               d / f"{log}.csv", "--since-cold", since))
    own = errors["drift", "self"]
    assert errors["drift", "cold"] <= 1.5 * own and errors["drift", "warm"] <= 1.5 * own, errors
    documented = {r[0]: r[1:] for r in doc_rows("identification.md", "| relative error | training log")}
    for model, label in (("static", "static model"), ("drift", "drifting friction")):  # docs/identification.md
        assert_same_figures(documented[label], [f"{100 * errors[model, log]} %" for log in ("self", "cold", "warm")],
                            label)
    assert errors["static", "cold"] >= 3 * own and errors["static", "warm"] >= 3 * own, errors
    # the static model averages cold and warm: off on its own training log too
    assert errors["static", "self"] >= 3 * own, errors


def test_time_constants_and_cold_friction_of_table_5_6(thesis_test):
    """The fast constants (below a cycle) within 10 % of Table 5.6; the printed cold/warm friction
    ratio at 60 % of dq_max within 10 % of 1 + (b + c) / a where t1 is determined by 35 minutes."""
    d, _, printed = thesis_test
    drift = json.loads((d / "drift.json").read_text())["friction_drift"]
    tc = np.array(drift["time_constants"]) / 60.0
    np.testing.assert_allclose(tc[:, 1], TABLE_5_6[:, 4], rtol=0.10)
    assert drift["mode"] == "time" and len(drift["parameters"]) == 6 * 4 * 2
    assert drift["sources"][0]["since_cold"] == 0.0  # the training log starts cold, by default
    truth = 1 + (TABLE_5_6[:, 1] + TABLE_5_6[:, 3]) / TABLE_5_6[:, 0]
    rows = [line.split("│") for line in printed.splitlines() if line.count("│") == 5]
    ratio = np.array([float(r[4]) for r in rows if r[1].strip().isdigit()])
    determined = tc[:, 0] < 60  # joint 2's t1 (57 min) is beyond what 35 minutes determine
    np.testing.assert_allclose(ratio[determined], truth[determined], rtol=0.10)
    text = doc_text("identification.md", flat=True)  # the figures docs/identification.md quotes
    fast = re.search(r"\(([\d.]+), ([\d.]+), ([\d.]+) min for joints 3, 5, 6 against", text).groups()
    assert_same_figures(list(fast), [f"{v}" for v in tc[[2, 4, 5], 1]], "t2 of joints 3, 5, 6")
    quoted = re.search(r"cold over warm \(here ([\d., ]+); Table 5.6", text).group(1).split(", ")
    assert_same_figures(quoted, [f"{v}" for v in ratio], "cold / warm")


def test_the_operating_time_of_a_log_is_stated(thesis_test, tmp_path):
    """A separate log needs its time since the cold start: the option, or a since_cold column
    (the same figures); the training log keeps what identify used; nothing given is an error."""
    d, end, _ = thesis_test
    line = failing("validate", "-r", "er3a", "-p", d / "drift.json", "-d", d / "warm.csv")
    assert "--since-cold" in line and "since_cold" in line
    cols = read_columns(d / "warm.csv")
    cols["since_cold"] = cols["t"] - cols["t"][0] + end
    write_columns(tmp_path / "warm_column.csv", cols)
    by_option = _error(run_ok("validate", "-r", "er3a", "-p", d / "drift.json", "-d", d / "warm.csv",
                              "--since-cold", end))
    by_column = _error(run_ok("validate", "-r", "er3a", "-p", d / "drift.json", "-d", tmp_path / "warm_column.csv"))
    assert by_column == pytest.approx(by_option, rel=1e-9)
    cold_claimed = _error(run_ok("validate", "-r", "er3a", "-p", d / "drift.json", "-d", d / "warm.csv",
                                 "--since-cold", 0))
    assert cold_claimed > 3 * by_option  # a warm log called cold is predicted with cold friction


def test_fig_5_15_errors_at_the_start_and_the_end_of_the_first_warming(thesis_test):
    """Thesis 5.1.6, Fig. 5.15: cycle 1's own (static) parameters miss the end of its warming stage
    more than its start, the friction having fallen meanwhile; the drifting model misses neither
    beyond the noise."""
    d, _, _ = thesis_test
    run_ok("validate", "-r", "er3a", "-p", d / "drift.json", "-d", d / "test.csv", "--per", "cycle",
           "--start-end-figure", d / "f515.png", "--json", d / "f515.json")
    assert (d / "f515.png").read_bytes()[:4] == b"\x89PNG"
    rmsd = json.loads((d / "f515.json").read_text())[str(d / "test.csv")]["start_end"]["rmsd"]
    own = {w: np.array(rmsd[w]["own"]) for w in ("start", "end")}
    assert np.all(own["end"] > own["start"]), own
    quoted = re.search(r"\(RMSD ([\d. /]+) N m at the start, ([\d. /]+) at the end\)", doc_text(DOC, flat=True))
    for text, w in zip(quoted.groups(), ("start", "end")):  # docs/thesis-chapter5.md section 1
        assert_same_figures(text.split(" / "), [f"{v}" for v in own[w]], f"Fig. 5.15 {w}")
    for w in ("start", "end"):
        np.testing.assert_allclose(rmsd[w]["whole"], NOISE, rtol=0.2)


def test_predict_adds_the_drift_and_its_band(thesis_test, tmp_path):
    d, _, _ = thesis_test
    run_ok("predict", "-r", "er3a", "-p", d / "drift.json", "-d", d / "cold.csv", "--since-cold", 0,
           "-o", tmp_path / "cold.csv", "--std", "model")
    run_ok("predict", "-r", "er3a", "-p", d / "drift.json", "-d", d / "cold.csv", "--since-cold", "warm",
           "-o", tmp_path / "warm.csv", "--std", "model")
    cold, warm, measured = (read_columns(p) for p in (tmp_path / "cold.csv", tmp_path / "warm.csv", d / "cold.csv"))
    tau = np.column_stack([measured[f"tau{j}"] for j in range(1, 7)])
    hat = {k: np.column_stack([c[f"tau{j}"] for j in range(1, 7)]) for k, c in (("cold", cold), ("warm", warm))}
    err = {k: np.sqrt(np.mean((v - tau) ** 2, axis=0)) for k, v in hat.items()}
    assert np.all(err["cold"] < 2 * NOISE) and np.all(err["warm"] > err["cold"]), err
    std = np.column_stack([cold[f"std{j}"] for j in range(1, 7)])
    assert np.all(std > 0) and np.all(np.median(std, axis=0) < NOISE)


def test_temperature_drift(tmp_path):
    """planar2 whose friction is affine in a first-order warm-up temperature (r2 = 0 and the
    warm-up's time constant = t1): identified with --friction-drift temperature, a cold and a
    warm log are predicted at the noise, the static model is off on both."""
    common = ["simulate", "-r", "planar2", "--rate", 20, "--tau-noise", 0.05, "--coulomb", 0.4, "--viscous", 0.3,
              "--friction-drift", "0.8,300,0,300", "--temperature", "20,25,300"]
    run_ok(*common, "--duration", 900, "-o", tmp_path / "train.csv")
    run_ok(*common, "--duration", 60, "--seed", 3, "-o", tmp_path / "cold.csv")
    run_ok(*common, "--duration", 60, "--seed", 4, "--since-cold", 900, "-o", tmp_path / "warm.csv")
    fit = ["identify", "-r", "planar2", "-d", tmp_path / "train.csv", "--lowpass", 0]
    run_ok(*fit, "-o", tmp_path / "static.json")
    run_ok(*fit, "--friction-drift", "temperature", "--essential", "-o", tmp_path / "temp.json")
    result = json.loads((tmp_path / "temp.json").read_text())
    values = {p["name"]: p["value"] for p in result["friction_drift"]["parameters"]}
    # f(T) = f_warm (1 + 0.8 (1 - (T - 20) / 25)): df/dT = -0.8 f_warm / 25
    assert values["Fc1_dT"] == pytest.approx(-0.8 * 0.4 / 25, rel=0.05)
    assert values["Fv2_dT"] == pytest.approx(-0.8 * 0.3 / 25, rel=0.05)
    # --essential eliminates over the base parameters and the drift coefficients together: the
    # drift that is there stays (it crashed before: the drift columns had no names)
    essential = result["essential"]
    assert essential["of"] == len(result["base_parameters"]) + len(values), essential["of"]
    kept = {p["name"] for p in essential["parameters"]}
    assert {"Fc1_dT", "Fv1_dT", "Fc2_dT", "Fv2_dT"} <= kept, kept
    err = {(m, log): _error(run_ok("validate", "-r", "planar2", "-p", tmp_path / f"{m}.json", "-d",
                                   tmp_path / f"{log}.csv"))
           for m in ("static", "temp") for log in ("train", "cold", "warm")}
    own = err["temp", "train"]
    assert err["temp", "cold"] <= 1.5 * own and err["temp", "warm"] <= 1.5 * own, err
    assert err["static", "cold"] >= 3 * own and err["static", "warm"] >= 2 * own, err


def test_refused_combinations(tmp_path):
    run_ok("simulate", "-r", "planar2", "--duration", 5, "--rate", 50, "-o", tmp_path / "a.csv")
    assert "--friction-drift" in failing("identify", "-r", "planar2", "-d", tmp_path / "a.csv", "-o",
                                         tmp_path / "r.json", "--friction-drift", "hours")
    assert "friction model" in failing("identify", "-r", "planar2", "-d", tmp_path / "a.csv", "-o",
                                       tmp_path / "r.json", "--friction-drift", "time", "--friction", "none")
    assert "estimator" in failing("identify", "-r", "planar2", "-d", tmp_path / "a.csv", "-o",
                                  tmp_path / "r.json", "--friction-drift", "time", "--estimator", "irls")
    assert "temp1" in failing("identify", "-r", "planar2", "-d", tmp_path / "a.csv", "-o",
                              tmp_path / "r.json", "--friction-drift", "temperature")
    run_ok("identify", "-r", "planar2", "-d", tmp_path / "a.csv", "-o", tmp_path / "r.json")
    assert "--since-cold" in failing("validate", "-r", "planar2", "-p", tmp_path / "r.json", "-d",
                                     tmp_path / "a.csv", "--since-cold", "-3")
