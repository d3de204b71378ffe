"""The thesis' Appendix D from the er3a description (thesis MDH Table 2.2): the zeros of Table D.1
(the QR diagonal of each joint's rows) and Table D.2's finding on link 2 (Izz2 and the rotor
inertia act alike in joint 2's torque), printed by dynid base-params --table."""

from __future__ import annotations

import json

import numpy as np

import dynid
from cli_helpers import run_ok
from dynid.identify.decomposition import link_svd, qr_diagonal
from dynid.identify.model import ModelOptions

# Table D.1 as printed, |r_ii| >= 1e-4 marked x (the thesis: smaller values are zero), one string
# per link parameter (m, mPx, mPy, mPz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz), one character per joint 1..6
TABLE_D1 = {
    1: ["......"] * 9 + ["x....."],
    2: ["......", "xx....", "xx....", "......", "xx....", "xx....", "xx....", "......", "xx....", ".x...."],
    3: ["......", "xxx...", "xxx...", "......", "xxx...", "xxx...", "xxx...", "......", "xxx...", ".xx..."],
    4: ["......", "xxxx..", "xxxx..", "......", "xxxx..", "xxxx..", "xxxx..", "......", "xxxx..", "xxxx.."],
    5: ["......", "xxxxx.", "xxxxx.", "......", "xxxxx.", "xxxxx.", "xxxxx.", "......", "xxxxx.", "xxxxx."],
    6: ["......", "xxxxxx", "xxxxxx", "......", "xxxxxx", "xxxxxx", "xxxxxx", "......", "xxxxxx", "xxxxxx"],
}


def test_table_d1_zeros_are_the_thesis():
    robot = dynid.load_robot("er3a")
    table = qr_diagonal(robot, ModelOptions("polynomial"))
    printed = np.array([[c == "x" for c in row] for link in range(1, 7) for row in TABLE_D1[link]])
    np.testing.assert_array_equal(~table["zero"], printed)
    # the nonzero r_ii are far from the threshold: the zeros are structural, not a matter of the states
    assert np.min(np.abs(table["r"][printed])) > 0.3 and np.max(np.abs(table["r"][~printed])) < 1e-8


def test_table_d2_link_2_izz_and_rotor_inertia_are_parallel():
    """The thesis' columns (mPx, mPy, Ixx, Ixy, Ixz, Iyz, Izz, f1..f4, I_m), cond(S) ~ 1e16 (printed
    1.5742e16), the last column of V -+0.7071 on Izz and I_m and ~0 elsewhere."""
    svd = link_svd(dynid.load_robot("er3a"), 2, ModelOptions("polynomial"))
    assert svd["names"] == ["mx2", "my2", "Ixx2", "Ixy2", "Ixz2", "Iyz2", "Izz2", "Fc2", "Fv2", "Fv22", "Fv32", "Ia2"]
    assert svd["condition_number"] > 1e14
    last = svd["V"][:, -1]
    np.testing.assert_allclose(np.abs(last[[6, 11]]), np.sqrt(0.5), atol=1e-9)
    assert last[6] * last[11] < 0 and np.max(np.abs(np.delete(last, [6, 11]))) < 1e-9
    np.testing.assert_allclose(np.sum(svd["s"] ** 2), len(svd["names"]))  # unit columns: sum s^2 = columns


def test_base_params_table_prints_and_writes_them(tmp_path):
    out = run_ok("base-params", "er3a", "--friction", "polynomial", "--table", "--json", tmp_path / "b.json")
    assert "thesis Table D.1" in out and "thesis Table D.2" in out and "Izz2" in out
    d = json.loads((tmp_path / "b.json").read_text())
    assert np.array(d["table_d1"]["r"]).shape == (60, 6) and d["table_d2"]["link"] == 2
