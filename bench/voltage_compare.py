"""Acceleration-free (voltage, current) vs acceleration-based identification on planar2 and
scara5: parameter errors and validation RMSD, noise-free and with noisy velocities.

    .venv/bin/python bench/voltage_compare.py [--seed 0] [--prefilter 10]

Uses dynid.drives.compare.compare_estimators (its docstring defines every figure): 20 s at
500 Hz per log, default drives (L = 0), velocity noise 0.02 rad/s (revolute) and 0.002 m/s
(prismatic). Voltage scale: gain1 known (planar2); gain1, the tool mass m5 and gain2 known (scara5).
The last scenario gives both sides the same 4 Hz filtering of the measured speeds.
"""

from __future__ import annotations

import argparse

import numpy as np

import dynid
from dynid.drives import default_drives
from dynid.drives.compare import compare_estimators

NOISE = {"planar2": 0.02, "scara5": [0.002, 0.02, 0.02, 0.02, 0.002]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--prefilter", type=float, default=10.0, help="zero-phase pre-filter of noisy q, dq [Hz]")
    args = ap.parse_args()
    for name in ("planar2", "scara5"):
        robot = dynid.load_robot(name)
        a = default_drives(robot, inductance=0.0).gains()[0]
        known = {"gain1": float(a[0]), "m5": 1.0, "gain2": float(a[1])} if name == "scara5" else None
        for noise, pre, lp in ((0.0, 0.0, None), (NOISE[name], 0.0, None), (NOISE[name], args.prefilter, None),
                               (NOISE[name], 4.0, 4.0)):
            out = compare_estimators(robot, seed=args.seed, dq_noise=noise, known_voltage=known, prefilter_hz=pre,
                                     accel_lowpass_hz=lp)
            label = "noise-free" if np.all(np.asarray(noise) == 0) else (
                f"dq noise {noise}, pre-filter {pre:g} Hz, acceleration low-pass "
                f"{'default (min(20, fs/10) Hz)' if lp is None else f'{lp:g} Hz'}")
            print(f"\n{name}, {label}; scale groups {out['groups']}, known {sorted(out['known_voltage'])}")
            print(f"  {'':14s}{'param err med':>14s}{'max':>10s}{'viscous med':>12s}{'gain max':>10s}"
                  f"  RMSD/floor: F[tau]  tau(accel pred)  F[u]")
            for m in ("voltage", "current", "acceleration"):
                gain = np.max(out["gain_error"][m]) if m in out["gain_error"] else float("nan")
                ratio = lambda key: " ".join(f"{v:.3f}" for v in out[key][m] / out[key]["truth"])  # noqa: E731
                print(f"  {m:14s}{np.median(out['parameter_error'][m]):14.3g}{np.max(out['parameter_error'][m]):10.3g}"
                      f"{np.median(out['viscous_error'][m]):12.3g}{gain:10.3g}  [{ratio('tau_filtered')}]"
                      f"  [{ratio('tau_accel')}]  [{ratio('voltage_filtered')}]")
            fl = lambda key: " ".join(f"{v:.3g}" for v in out[key]["truth"])  # noqa: E731
            print(f"  floors (true parameters): F[tau] [{fl('tau_filtered')}] N m, tau [{fl('tau_accel')}] N m, "
                  f"F[u] [{fl('voltage_filtered')}] V")


if __name__ == "__main__":
    main()
