"""The thesis' protocol and friction as the defaults of simulated er3a protocols (thesis 4.4,
4.5, Table H, Table 5.6), and Table 5.6 recovered from synthetic data built from it: the
per-sample eq. 5.4 fit resolves the fast time constants that one point per cycle cannot."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import dynid
from cli_helpers import read_columns, run_ok
from doc_figures import assert_same_figures, doc_rows, doc_text, printed_rows
from dynid.data.io import write_columns
from dynid.excite.builtin import thesis_table_4_1
from dynid.excite.protocol import FRICTION_LEVELS, ProtocolSettings, cycle_timeline
from dynid.simulate.thesis_friction import (TABLE_5_6, TABLE_H_F_WARM, TABLE_N1_ROBOT2_TEST1, table_5_6_truth,
                                            warm_level_friction)

DOC = "thesis-chapter5.md"  # its figures are those of the commands here (tests/doc_figures.py)


def test_table_n1_lists_the_reciprocal_time_constants_of_table_5_6():
    np.testing.assert_allclose(TABLE_N1_ROBOT2_TEST1[:, [0, 1, 3]], TABLE_5_6[:, [0, 1, 3]])
    np.testing.assert_allclose(TABLE_N1_ROBOT2_TEST1[:, [2, 4]], 1.0 / TABLE_5_6[:, [2, 4]], rtol=2e-4)


def test_table_h_warm_friction_at_60_percent_is_table_5_6_a():
    """Two tables of one test: f1..f4 (Table H, cycles 6-24) at 60 % of the er3a's dq_max
    (Table 2.1) give the warm friction a of the 60 % level's fit (Table 5.6) within 13 %."""
    ratio = warm_level_friction(dynid.load_robot("er3a"), TABLE_H_F_WARM) / TABLE_5_6[:, 0]
    assert np.all(np.abs(ratio - 1) < 0.14), ratio


def test_default_cycle_is_the_thesis_cycle():
    """Six levels 5..100 % of dq_max reached on every er3a joint, equal duration; warming 180 s
    at 80 % of range and speed; a cycle of about 5 minutes (24 of them: about 2 hours)."""
    robot = dynid.load_robot("er3a")
    _, s = cycle_timeline(robot, thesis_table_4_1(), ProtocolSettings())
    assert 4.5 * 60 <= s["cycle_duration"] <= 6.5 * 60
    shares = np.array(s["friction_speed_shares"])
    np.testing.assert_allclose(shares, np.tile(FRICTION_LEVELS, (6, 1)))
    cruise = np.array([[u["cruise"] for u in levels] for levels in s["friction_levels"]])
    assert np.all(cruise >= ProtocolSettings().min_cruise - 1e-9)
    assert s["stage_durations"]["friction"] == pytest.approx(36 * ProtocolSettings().level_duration)
    np.testing.assert_allclose(s["warming"]["speed_shares"], 0.8)


@pytest.fixture(scope="module")
def thesis_log(tmp_path_factory):
    """24 cycles of the default protocol at 10 Hz, simulated with the defaults: the thesis'
    friction and drift (no friction option given)."""
    d = tmp_path_factory.mktemp("thesis")
    run_ok("excite", "protocol", "-r", "er3a", "-o", d / "p.csv", "--rate", 10)
    out = run_ok("simulate", "-r", "er3a", "--trajectory", d / "p.csv", "-o", d / "s.csv", "--tau-noise", 0.3)
    assert "Table 5.6" in out
    return d


def test_protocol_file_stores_every_level_used(thesis_log):
    summary = json.loads((thesis_log / "p.protocol.json").read_text())
    assert summary["cycles"] == 24
    for levels in summary["friction_levels"]:
        assert [u["target"] for u in levels] == list(FRICTION_LEVELS)
        assert all(abs(u["share"] - u["target"]) < 1e-12 for u in levels)


def test_simulated_protocol_defaults_to_the_thesis_friction(thesis_log):
    """The torque beyond rigid body and rotor inertia is the Table H polynomial, every coefficient
    scaled by 1 + (b/a) e^(-t/t1) + (c/a) e^(-t/t2) of Table 5.6 (t from the first sample)."""
    robot = dynid.load_robot("er3a")
    cols = read_columns(thesis_log / "s.csv")
    t = cols["t"] - cols["t"][0]
    q, dq, ddq, tau = (np.column_stack([cols[f"{p}{j}"] for j in range(1, 7)]) for p in ("q", "dq", "ddq", "tau"))
    rigid = dynid.inverse_dynamics(robot, q, dq, ddq) + robot.rotor_inertias * ddq
    a, b, t1, c, t2 = TABLE_5_6.T
    factor = 1 + b / a * np.exp(-t[:, None] / (60 * t1)) + c / a * np.exp(-t[:, None] / (60 * t2))
    v, f = np.abs(dq), TABLE_H_F_WARM
    model = np.sign(dq) * (f[:, 0] + f[:, 1] * v + f[:, 2] * v**2 + f[:, 3] * v**3) * factor
    residual = tau - rigid - model
    np.testing.assert_allclose(residual.std(axis=0), 0.3, rtol=0.03)  # the torque noise alone
    assert np.all(np.abs(residual.mean(axis=0)) < 0.01)


def test_table_5_6_recovered_from_every_sample(thesis_log):
    """dynid friction drift on the simulated thesis test: recovered beside the synthetic truth
    (Table 5.6's ratios and time constants on Table H's warm friction) and beside Table 5.6."""
    out = run_ok("friction", "drift", "-r", "er3a", "-d", thesis_log / "s.csv", "--max-rows", 6000, "--thesis",
                 "--json", thesis_log / "drift.json")
    for doc, printed in zip(doc_rows(DOC, "| joint | a | b | t1"), printed_rows(out)):  # the page's table
        assert_same_figures(doc[:6], printed[:6], "docs/thesis-chapter5.md section 3")
    rows = json.loads((thesis_log / "drift.json").read_text())["joints"]
    truth = table_5_6_truth(dynid.load_robot("er3a"))
    got = np.array([[r[k] for k in ("a", "b", "t1", "c", "t2")] for r in rows], dtype=float)
    std = np.array([[r["std"][k] for k in ("a", "b", "t1", "c", "t2")] for r in rows], dtype=float)
    assert np.all(np.abs(got - truth) <= 4 * std + 1e-9), (got, truth, std)
    np.testing.assert_allclose(got[:, [0, 1, 3]], truth[:, [0, 1, 3]], rtol=0.08)
    np.testing.assert_allclose(got[:, 2], truth[:, 2], rtol=0.10)  # t1: 12.8 .. 56.6 min
    # the fast constants of joints 3, 5, 6 (0.54, 0.47, 0.31 min) within 5 % of Table 5.6
    np.testing.assert_allclose(got[[2, 4, 5], 4], TABLE_5_6[[2, 4, 5], 4], rtol=0.05)


def test_one_point_per_cycle_misses_the_fast_constants(thesis_log):
    """The thesis' own fit (one friction value per cycle, 60 % level) on the same log: for joints
    3, 5, 6 the fast term has (nearly) decayed before the first point, so it returns another
    (c, t2) - or flags t2 as undetermined - instead of Table 5.6's (the issue's audit: t2 stuck
    at 1.25 min, c 2.6 / 5.3 / 2.7 instead of 8.4 / 19.6 / 33.8)."""
    run_ok("friction", "analyze", "-r", "er3a", "-d", thesis_log / "s.csv", "-o", thesis_log / "fa.json")
    fits = {e["joint"]: e for e in json.loads((thesis_log / "fa.json").read_text())["drift"] if e["level"] == 4}
    truth = table_5_6_truth(dynid.load_robot("er3a"))
    for j in (3, 5, 6):
        p = fits[j]["parameters"]
        flagged = any("not determined separately" in n for n in fits[j]["notes"])
        assert flagged or (p["c"] < 0.5 * truth[j - 1, 3] and p["t2"] / 60 > 3 * truth[j - 1, 4]), fits[j]
    quoted = re.search(r"c = ([-\d.]+) / ([-\d.]+) / ([-\d.]+) N m and t2 = ([\d.]+) / ([\d.]+) / ([\d.]+) min",
                       doc_text(DOC, flat=True)).groups()
    measured = [fits[j]["parameters"]["c"] for j in (3, 5, 6)] + [fits[j]["parameters"]["t2"] / 60 for j in (3, 5, 6)]
    assert_same_figures(list(quoted), [f"{v}" for v in measured], "docs/thesis-chapter5.md section 3")


def test_validate_per_stage(thesis_log):
    """Per-stage figures of one model: the excitation, friction and warming stages each scored."""
    d = thesis_log
    run_ok("identify", "-r", "er3a", "-d", d / "s.csv", "-o", d / "r.json", "--friction", "polynomial",
           "--cycles", "13-24")
    run_ok("validate", "-r", "er3a", "-p", d / "r.json", "-d", d / "s.csv", "--per", "stage", "--json", d / "st.json")
    rep = json.loads((d / "st.json").read_text())[str(d / "s.csv")]
    assert {"excitation", "friction", "warming"} <= set(rep["labels"])
    whole = np.array(rep["kinds"]["whole"]["moving_rmsd"], dtype=float)
    assert np.all(np.isfinite(whole)) and np.all(whole > 0.25)  # noise 0.3 N m plus the cold start's drift


def test_table_5_4_early_cycles_and_the_drifting_friction(thesis_log, tmp_path):
    """Thesis Table 5.4 / Fig. 5.10 (issue 25 item 4): with the thesis' model (polynomial friction,
    static within a cycle) the per-cycle inertial estimates of the noise-free thesis test rise over
    the first cycles and settle, so their spread shrinks without the first 5 (the thesis' sign and
    shape), because the friction falls within a cycle and the cycle's static friction cannot follow
    it. The size is small: cycle 1's mx2R is 0.1 % off the warm value (the thesis' mPx moves some
    3 %). A drift-aware identification takes the drift off each cycle: the spread vanishes."""
    run_ok("simulate", "-r", "er3a", "--trajectory", thesis_log / "p.csv", "-o", tmp_path / "s0.csv")
    fit = ["identify", "-r", "er3a", "-d", tmp_path / "s0.csv", "--friction", "polynomial", "--lowpass", 0,
           "--per", "cycle", "--rest", "off"]
    run_ok(*fit, "-o", tmp_path / "static.json")
    run_ok(*fit, "--friction-drift", "time", "-o", tmp_path / "drift.json")
    for name in ("static", "drift"):
        run_ok("cycles", "stats", "-p", tmp_path / f"{name}.json", "--json", tmp_path / f"{name}_stats.json")
    static, drift = (json.loads((tmp_path / f"{m}_stats.json").read_text()) for m in ("static", "drift"))
    values = np.array(json.loads((tmp_path / "static.json").read_text())["per_cycle"]["values"])
    names = static["names"]
    for p in ("mx2R", "Ixx2R", "Izz2R"):
        k = names.index(p)
        rising = np.sign(values[-1, k] - values[0, k]) * np.diff(values[:5, k])
        assert np.all(rising > 0), (p, values[:6, k])  # monotonic towards the warm value over cycles 1-5
        assert static["without_first"]["sdv"][k] < static["all"]["sdv"][k] / 3, p
        assert abs(values[0, k] / values[-1, k] - 1) < 0.01, p  # but cycle 1 is off by well under 1 %
        assert drift["all"]["sdv"][k] < 1e-6 * abs(drift["all"]["mean"][k]), p
    k = names.index("Fc1")
    assert static["all"]["sdv"][k] > 0.1 * static["all"]["mean"][k] and drift["all"]["sdv"][k] < 1e-6
    documented = {r[0]: r[1:4] for r in doc_rows(DOC, "| Sdv over the cycles")}
    for p in ("mx2R", "Ixx2R", "Fc1"):  # docs/thesis-chapter5.md section 4, Table 5.4
        k = names.index(p)
        assert_same_figures(documented[f"{p}, thesis' model"], [f"{static['all']['sdv'][k]}",
                            f"{static['without_first']['sdv'][k]}", f"{static['sdv_difference'][k]}"], p)
    quoted = re.search(r"Per cycle mx2R goes ([\d.]+), ([\d.]+), ([\d.]+), ([\d.]+), ([\d.]+), \.\.\. ([\d.]+)",
                       doc_text(DOC, flat=True)).groups()
    k = names.index("mx2R")
    assert_same_figures(list(quoted), [f"{v}" for v in list(values[:5, k]) + [values[-1, k]]], "mx2R per cycle")
    # the torques read through a torque constant that warms up (3 % high cold, 20 min): the thesis' size
    cols = read_columns(tmp_path / "s0.csv")
    scale = 1 + 0.03 * np.exp(-(cols["t"] - cols["t"][0]) / 1200.0)
    cols.update({f"tau{j}": cols[f"tau{j}"] * scale for j in range(1, 7)})
    write_columns(tmp_path / "s0_scaled.csv", cols)
    run_ok("identify", "-r", "er3a", "-d", tmp_path / "s0_scaled.csv", "--friction", "polynomial", "--lowpass", 0,
           "--per", "cycle", "--rest", "off", "-o", tmp_path / "scaled.json")
    run_ok("cycles", "stats", "-p", tmp_path / "scaled.json", "--json", tmp_path / "scaled_stats.json")
    scaled = json.loads((tmp_path / "scaled_stats.json").read_text())
    documented = {r[0]: r[1:3] for r in doc_rows(DOC, "| Sdv over the cycles, torque scale")}
    for p in ("mx2R", "Ixx2R"):
        k = names.index(p)
        assert scaled["without_first"]["sdv"][k] < scaled["all"]["sdv"][k] / 3
        assert scaled["all"]["sdv"][k] > 5 * static["all"]["sdv"][k]
        assert_same_figures(documented[p], [f"{scaled['all']['sdv'][k]}", f"{scaled['without_first']['sdv'][k]}"], p)
