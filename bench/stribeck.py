"""Figures of docs/friction.md "Stribeck friction and --friction auto".

1. Simulated er3a (tests/test_stribeck.py's logs: 90 s at 100 Hz, 1 % torque noise and 0.5 %
   ripple of the RMS torque, 2^16-count encoders, 1 % dropped rows), per draw: the friction
   model ``--friction auto`` chooses on a log with a Stribeck curve (v_s = 0.08 rad/s, Fs =
   1.5 Fc) and on one without, the held-out scores, the fitted v_s, and on a held-out log the
   low-speed (|dq| < 2 v_s) RMS error against the true torque of the Stribeck and the
   Coulomb-viscous fits, joints 1-3.
2. The real KUKA iiwa 14 (shared/real/kuka_iiwa14, training log joint_2_to_7_dynamic_motion,
   the options of bench/iiwa_options.py): the scores of the three models, the choice, and the
   validation log's relative RMSD per joint of the Coulomb-viscous and the chosen model.

Usage: .venv/bin/python bench/stribeck.py [--draws 3] [--skip-real]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
DYNID = [sys.executable, "-c", "from dynid.cli.main import main; main()"]


def dynid(*args) -> None:
    subprocess.run(DYNID + [str(a) for a in args], check=True, capture_output=True, text=True)


def predicted_and_true(robot, root: Path, fit: str, test: str, seed: int, theta, options, f0: float,
                       harmonics: int):
    """`dynid predict` of root/<fit>.json on root/<test>.csv, beside the truth's torque and velocity
    at the predicted rows (the test log's multisine of `seed`, the truth's parameters and model)."""
    from dynid.data.io import read_table
    from dynid.identify.model import model_torques
    from dynid.simulate import random_multisine

    dynid("predict", "-r", robot.name, "--params", root / f"{fit}.json", "--data", root / f"{test}.csv",
          "--out", root / f"{fit}.csv")
    table, _ = read_table(root / f"{fit}.csv")
    q, dq, ddq = random_multisine(robot, seed=seed, f0=f0, harmonics=harmonics).sample(table["t"].to_numpy())
    tau = model_torques(robot, q, dq, ddq, theta, options)
    pred = np.column_stack([table[f"tau{j + 1}"].to_numpy() for j in range(robot.n)])
    return pred, tau, dq


def simulated(draws: int) -> None:
    import dynid as lib
    from dynid.data.io import write_columns
    from dynid.identify.model import ModelOptions
    from realistic_logs import realistic_log
    from test_stribeck import F0, HARMONICS, RATE, SECONDS, STRIBECK, VS, _truth

    robot = lib.load_robot("er3a")
    print(f"er3a, {SECONDS:g} s at {RATE:g} Hz, 1 % noise, v_s = {VS} rad/s, Fs = 1.5 Fc; --friction auto, default "
          "cutoff")
    for draw in range(draws):
        with tempfile.TemporaryDirectory() as tmp:
            root, line = Path(tmp), []
            for name, options in (("stribeck", STRIBECK), ("plain", ModelOptions())):
                for part, seed in (("train", 30 + 2 * draw), ("test", 31 + 2 * draw)):
                    data, _, _ = realistic_log(robot, RATE, SECONDS, seed=seed, noise=0.01, encoder_counts=2**16,
                                               options=options, theta=_truth(robot, options), f0=F0,
                                               harmonics=HARMONICS)
                    write_columns(root / f"{name}_{part}.csv", {"t": data.t, **{f"q{j + 1}": data.q[:, j] for j in
                                                                                range(6)},
                                                                **{f"tau{j + 1}": data.tau[:, j] for j in range(6)}})
                dynid("identify", "-r", "er3a", "--data", root / f"{name}_train.csv", "--friction", "auto", "--out",
                      root / f"{name}_auto.json")
                fit = json.loads((root / f"{name}_auto.json").read_text())
                s = fit["friction_selection"]["scores"]
                line.append(f"{name} log -> {fit['friction']} (scores cv {s['coulomb-viscous']:.4f}, poly "
                            f"{s['polynomial']:.4f}, stribeck {s['stribeck']:.4f})")
            dynid("identify", "-r", "er3a", "--data", root / "stribeck_train.csv", "--out", root / "cv.json")
            errors = {}
            for name in ("stribeck_auto", "cv"):
                pred, tau, dq = predicted_and_true(robot, root, name, "stribeck_test", 31 + 2 * draw,
                                                   _truth(robot, STRIBECK), STRIBECK, F0, HARMONICS)
                errors[name] = [np.sqrt(np.nanmean((pred[np.abs(dq[:, j]) < 2 * VS, j]
                                                    - tau[np.abs(dq[:, j]) < 2 * VS, j]) ** 2)) for j in range(3)]
            velocity = json.loads((root / "stribeck_auto.json").read_text())["model"].get("stribeck_velocity", [])
            print(f"draw {draw}: " + "; ".join(line))
            print(f"  v_s joints 1-3 {', '.join(f'{v:.4f}' for v in velocity[:3])} rad/s; low-speed RMS error "
                  f"joints 1-3: stribeck {', '.join(f'{e:.4f}' for e in errors['stribeck_auto'])}, coulomb-viscous "
                  f"{', '.join(f'{e:.4f}' for e in errors['cv'])} N m")


def real() -> None:
    import dynid as lib
    from dynid.data.columns import ColumnMapping
    from dynid.data.convert import parse_signals, text_signal_chunks, write_stream
    from dynid.data.preprocess import Preprocessing
    from dynid.identify import ModelOptions
    from dynid.identify.stribeck import MODELS, select_friction
    from iiwa_options import SIGNALS, shared_iiwa  # noqa: E402  (bench/ is on the path when run from it)

    iiwa = shared_iiwa()
    robot = lib.load_robot(str(iiwa / "urdf" / "iiwa14.urdf"))
    mapping = ColumnMapping(negate=("tau",), ignore=("dq", "ddq"))
    options, prep = ModelOptions(offset=True, smooth_sign=0.02), Preprocessing(lowpass_hz=10.0, tau_delay=0.02)
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name in ("joint_2_to_7_dynamic_motion", "joint_3_to_7_dynamic_motion"):
            paths[name] = Path(tmp) / f"{name}.parquet"
            write_stream(paths[name], text_signal_chunks(iiwa / name, parse_signals(SIGNALS)))
        chosen, selection, notes, _ = select_friction(robot, [paths["joint_2_to_7_dynamic_motion"]], options, prep,
                                                      mapping, allowed=MODELS)
        print("real KUKA iiwa 14, training log joint_2_to_7 (--offset --smooth-sign 0.02 --lowpass 10 "
              f"--tau-delay 0.02): --friction auto -> {chosen.friction}; held-out scores "
              + ", ".join(f"{m} {v:.4f}" for m, v in selection["scores"].items()))
        for m in MODELS:
            print(f"  held-out relative error per joint, {m:15s} "
                  + " ".join(f"{100 * e:5.1f}" for e in selection["relative_error"][m]) + " %")
        print("  Stribeck velocity per joint " + ", ".join(f"{v:.3g}" for v in selection["stribeck_velocity"])
              + " rad/s" + ("; " + "; ".join(notes) if notes else ""))
        rows = selection["reversal_rows"]
        print("  rows at velocity reversals: smear test z per joint "
              + ", ".join("-" if z is None else f"{z:.1f}" for z in rows["z"]) + f" (left out below {rows['threshold']:g}: "
              + ", ".join(str(j + 1) for j, out in enumerate(rows["left_out"]) if out) + f"); span "
              f"{max(rows['span_samples']):.3g} samples; Stribeck Fs - Fc "
              + ", ".join("-" if v is None else f"{v:.3g}" for v in selection["static_excess"])
              + (f"; refused: {selection['refused']['stribeck']}" if "refused" in selection else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=3)
    parser.add_argument("--skip-real", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    start, cpu = time.time(), time.process_time()
    simulated(args.draws)
    if not args.skip_real:
        real()
    print(f"{time.time() - start:.1f} s wall, {time.process_time() - cpu:.1f} s CPU (this process; the identify runs "
          f"are subprocesses); load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
