"""The seeds' printed KR500 tables and multipliers, their internal consistency, and ours beside them.

Seed 000 (Cheng 2021): Table 2 (bodies), Table 3 (identified), Table 4 (absolute errors, rows
B6..B1), eqs. 113-118 (Lagrange multipliers at 1.5 s). Seed 001 (Cheng 2022): Table 1
(= seed 000 Table 2), Table 2 (identified), Table 3 (errors). ``None`` is a printed dash.
Numbers are copied from the seed texts (published values, sources named per table).

What they say about the experiment (``consistency``, docs/thesis-chapter5.md):
- Table 2 is six steel cylinders (rho = 7801 kg/m^3): every mass and moment follows from the
  printed lengths and radii to the printed 4 decimals;
- Table 4 = Table 3 - Table 2 element by element, except where a printed entry disagrees
  (seed 000: B4 J33 5.4619 in Table 3, an error of -0.1794 where Table 4 prints 0.0006);
- the errors' size fixes the acceleration reading: 7-digit rounding of the 9.5493 rad/s^2
  motion gives errors of the printed size, 0.5236 rad/s^2 ten times smaller (``error_summary``);
- the multipliers' lambda_i3 are the static outboard weights -g sum_{j>=i} m_j to 7 digits
  (lambda_33 with the opposite sign) and lambda_i1,2 ~ 1e-4: the multipliers of a robot at
  rest, not of either reading at 1.5 s (joints 1 and 2 then turn at 14.3 or 0.79 rad/s).
"""

from __future__ import annotations

import numpy as np

NAN = np.nan
PARAMS = ("m(e1)", "m(e2)", "m(e3)", "J11", "J22", "J33")

# seed 000 Table 2 = seed 001 Table 1: length, radius [m]; m [kg]; J11, J22, J33 [kg m^2]; B1..B6
LENGTH = np.array([1.045, 1.245, 1.21, 0.315, 0.29, 0.3])
RADIUS = np.array([0.5, 0.3, 0.2, 0.2, 0.2, 0.3])
TABLE_2 = np.array([  # rows B1..B6: m, J11, J22, J33
    [6402.6012, 800.3251, 982.8126, 982.8126],
    [2746.0726, 123.5733, 416.4934, 416.4934],
    [1186.1661, 23.7233, 156.5838, 156.5838],
    [308.7953, 6.1759, 5.6413, 5.6413],
    [284.2877, 5.6858, 4.8353, 4.8353],
    [661.7042, 29.7767, 19.8511, 19.8511],
])
# seed 000 Table 3 (identified, rail experiment): rows B1..B6, columns PARAMS
SEED_000_TABLE_3 = np.array([
    [6402.6000, NAN, 6402.5942, 800.3252, 982.8120, 982.8120],
    [2746.0720, 2746.0723, 2746.0723, 123.6157, 416.4683, 416.5109],
    [1186.1658, 1186.1661, 1186.1660, 23.7206, 156.5821, 156.5722],
    [308.7958, 308.7955, 308.7955, 6.1761, 5.6412, 5.4619],
    [284.2875, 284.2875, 284.2877, 5.6856, 4.8348, 4.8353],
    [661.7041, 661.7043, 661.7042, 29.7769, 19.8511, 19.8514],
])
# seed 000 Table 4 (absolute errors), printed B6..B1, stored B1..B6
SEED_000_TABLE_4 = np.array([
    [-0.0012, NAN, -0.0070, 0.0001, -0.0006, -0.0006],
    [-0.0006, -0.0003, -0.0003, 0.0424, -0.0251, 0.0175],
    [-0.0002, 0.0, -0.0001, -0.0027, -0.0017, -0.0116],
    [0.0005, 0.0002, 0.0002, 0.0002, -0.0001, 0.0006],
    [-0.0002, -0.0002, 0.0, -0.0002, -0.0005, 0.0],
    [-0.0001, 0.0001, 0.0, 0.0002, 0.0, 0.0003],
])
# seed 001 Table 2 (identified, no rail) and Table 3 (errors, printed B6..B1), B1..B6
SEED_001_TABLE_2 = np.array([
    [NAN, NAN, 6402.6044, 800.3250, 982.8128, 982.8128],
    [2746.0722, 2746.0723, 2746.0723, 123.5954, 416.4670, 416.4991],
    [1186.1661, 1186.1661, 1186.1660, 23.7230, 156.5862, 156.5844],
    [308.7955, 308.7955, 308.7955, 6.1756, 5.6405, 5.6404],
    [284.2877, 284.2875, 284.2877, 5.6862, 4.8355, 4.8368],
    [661.7043, 661.7043, 661.7042, 29.7768, 19.8512, 19.8514],
])
SEED_001_TABLE_3 = np.array([
    [NAN, NAN, 0.0032, -0.0001, 0.0002, 0.0002],
    [-0.0004, -0.0003, -0.0003, 0.0224, -0.0264, 0.0057],
    [0.0, 0.0, -0.0001, -0.0003, 0.0024, 0.0006],
    [0.0002, 0.0002, 0.0002, -0.0003, -0.0008, -0.0009],
    [0.0, -0.0002, 0.0, 0.0004, 0.0002, 0.0015],
    [0.0001, 0.0001, 0.0, 0.0001, 0.0001, 0.0003],
])
# seed 000 eqs. 113-118: lambda_i1..i5 at 1.5 s, rows B1..B6 (eq. 115 prints "30.072190 x 10^-4")
MULTIPLIERS_1_5S = np.array([
    [4.197760e-3, 1.664961e-4, -1.136554e5, -5.868432e3, -1.877410e-4],
    [1.797760e-3, 1.664961e-4, -5.086735e4, -1.233380e11, -1.845883e11],
    [2.941508e-4, 3.263078e-4, 2.393758e4, -1.431100e11, -2.141792e11],
    [-3.836233e-4, 30.072190e-4, -1.230526e4, 8.285916e3, 5.536472e3],
    [5.154353e-4, -2.726663e-4, -9.277012e3, -1.631801e10, -2.442163e10],
    [1.356146e-4, 3.870958e-4, -6.489101e3, 1.211238e3, 8.093237e2],
])
GRAVITY = 9.80665
DENSITY = 7801.0  # kg/m^3: reproduces Table 2 (``robot.builtin.kr500``)


def seed_identified(seed: str) -> tuple[np.ndarray, np.ndarray]:
    """(identified (6, 6), errors (6, 6)) as printed by seed '000' or '001', rows B1..B6."""
    if seed == "000":
        return SEED_000_TABLE_3, SEED_000_TABLE_4
    if seed == "001":
        return SEED_001_TABLE_2, SEED_001_TABLE_3
    raise ValueError(f"seed '{seed}': expected '000' or '001'")


def true_table() -> np.ndarray:
    """(6, 6) Table 2 laid out as PARAMS: the mass in each of the three columns."""
    return np.column_stack([TABLE_2[:, 0]] * 3 + [TABLE_2[:, 1], TABLE_2[:, 2], TABLE_2[:, 3]])


def cylinder_table() -> np.ndarray:
    """(6, 4) m, J11 = m r^2/2, J22 = J33 = m (3 r^2 + l^2)/12 of steel cylinders of Table 2's sizes."""
    m = DENSITY * np.pi * RADIUS**2 * LENGTH
    return np.column_stack([m, m * RADIUS**2 / 2, m * (3 * RADIUS**2 + LENGTH**2) / 12,
                            m * (3 * RADIUS**2 + LENGTH**2) / 12])


def consistency(tol: float = 1.5e-4) -> list[str]:
    """Every place where the printed tables disagree with one another (module docstring)."""
    notes = []
    bad = np.abs(cylinder_table() - TABLE_2) > 0.5e-4 * np.maximum(1.0, np.abs(TABLE_2))
    for i, k in zip(*np.nonzero(bad)):
        notes.append(f"Table 2 B{i + 1} {('m', 'J11', 'J22', 'J33')[k]}: {TABLE_2[i, k]} is not the steel "
                     f"cylinder's {cylinder_table()[i, k]:.4f}")
    for seed in ("000", "001"):
        ident, err = seed_identified(seed)
        diff = ident - true_table()
        for i, k in zip(*np.nonzero(np.abs(diff - err) > tol)):
            notes.append(f"seed {seed} B{i + 1} {PARAMS[k]}: identified {ident[i, k]} - true {true_table()[i, k]} "
                         f"= {diff[i, k]:+.4f}, but the error table prints {err[i, k]:+.4f}")
        for i, k in zip(*np.nonzero(np.isnan(ident) != np.isnan(err))):
            notes.append(f"seed {seed} B{i + 1} {PARAMS[k]}: a value in one table, a dash in the other")
    outboard = GRAVITY * np.cumsum(TABLE_2[::-1, 0])[::-1]
    for i in range(6):
        lam = MULTIPLIERS_1_5S[i, 2]
        if abs(abs(lam) - outboard[i]) > 1e-6 * outboard[i] + 0.5:
            notes.append(f"lambda_{i + 1}3 = {lam:.7g} is not the outboard weight {outboard[i]:.7g} N")
        elif lam > 0:
            notes.append(f"lambda_{i + 1}3 = {lam:.7g}: the outboard weight with the sign of the others flipped")
    if MULTIPLIERS_1_5S[0, 1] == MULTIPLIERS_1_5S[1, 1]:
        notes.append("lambda_12 = lambda_22 = 1.664961e-4 (a repeated entry); eq. 115 prints lambda_42 as "
                     "'30.072190 x 10^-4'")
    notes.append("lambda_i3 equal the static outboard weights and lambda_i1,2 are ~1e-4: the multipliers of the "
                 "robot at rest, not of the described motion at 1.5 s (joints 1 and 2 turning)")
    notes.append("lambda_24,25, lambda_34,35, lambda_54,55 of 1e10..1e11 are no physical moments (the Cardan "
                 "constraint rows of eqs. 71-72 are near singular; docs/multibody.md)")
    notes.append("seed 000 Table 3 and seed 001 Table 2 give J22, J33 of B1, which turns about its own axis "
                 "e1 only: its Euler equations hold no J22, J33 column (dynid reports them as null)")
    return notes


def error_summary(errors: np.ndarray) -> dict:
    """max |e|, rms and count of the determined errors of a (6, 6) table (NaN = undetermined)."""
    e = np.asarray(errors, dtype=float)
    e = e[np.isfinite(e)]
    return {"max": float(np.max(np.abs(e))), "rms": float(np.sqrt(np.mean(e**2))), "count": int(e.size)}


def static_outboard_weights(masses=None) -> np.ndarray:
    """(6,) g sum_{j >= i} m_j [N]: the vertical force each joint carries when the robot is at rest."""
    m = TABLE_2[:, 0] if masses is None else np.asarray(masses, dtype=float)
    return GRAVITY * np.cumsum(m[::-1])[::-1]
