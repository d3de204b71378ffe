"""--lowpass auto against a fine grid of fixed cutoffs, on simulated er3a logs with the defects
of real ones (torque-sensor noise, drive torque ripple, encoder quantization, dropped samples)
at 100 Hz, 1 kHz and 5 kHz.

For each rate: a training log and a separate validation log (another random multi-sine,
bandwidth f0 x harmonics) are written as CSV; ``identify.crossval.choose_lowpass`` picks the
cutoff on the training log (what ``dynid identify`` does by default); then the streaming
pipeline (``accumulate_file`` + OLS) is fitted with every cutoff of a fine grid, with the
chosen one and with the old default min(20 Hz, fs/10), and each model predicts the validation
log (``predict_file``, preprocessed as in training). Printed: the held-out relative torque
error against the measured torque (what ``dynid validate`` prints) and against the noise-free
torque, over the same interior samples for every cutoff.

Usage: .venv/bin/python bench/lowpass_auto.py [--train 60] [--rates 100 1000 5000] [--grid 20]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # tests/realistic_logs.py


def write_log(robot, path, rate, seconds, seed, args):
    """Write the realistic log (tests/realistic_logs.py) of these settings; (t, true torques)."""
    from dynid.data.io import write_joint_data
    from realistic_logs import realistic_log

    data, t, tau_true = realistic_log(robot, rate, seconds, seed, noise=args.noise, ripple=args.ripple,
                                      encoder_counts=args.encoder, drop=args.drop, f0=args.f0,
                                      harmonics=args.harmonics)
    write_joint_data(path, data)
    return t, tau_true


def held_out(robot, base, options, train, val, t_val, tau_val, cutoff, trim):
    from dynid.data.columns import ColumnMapping
    from dynid.data.preprocess import Preprocessing
    from dynid.identify.pipeline import accumulate_file, make_estimator
    from dynid.identify.prediction import predict_file
    from dynid.identify.result import build_result

    from dynid.errors import DynidWarning

    prep = Preprocessing(lowpass_hz=cutoff)
    acc = accumulate_file(robot, train, options, base, prep=prep)
    est = make_estimator("ols", robot, options, base).fit_normal_equations(acc.ne)
    with warnings.catch_warnings():  # the grid's extreme cutoffs fit badly on purpose: no plausibility lines
        warnings.simplefilter("ignore", DynidWarning)
        result = build_result("er3a", robot, options, base, est, acc.ne, prep, ColumnMapping(), acc.samples, [], train)
        pred = predict_file(robot, result, val)
    k = slice(trim, len(pred["t"]) - trim)  # the same samples for every cutoff
    true = np.column_stack([np.interp(pred["t"], t_val, tau_val[:, j]) for j in range(robot.n)])
    err = lambda ref: float(np.linalg.norm(ref[k] - pred["tau_hat"][k]) / np.linalg.norm(ref[k]))  # noqa: E731
    return err(pred["tau"]), err(true)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rates", type=float, nargs="*", default=[100.0, 1000.0, 5000.0])
    parser.add_argument("--train", type=float, default=60.0, help="training log [s]")
    parser.add_argument("--validation", type=float, default=20.0, help="validation log [s]")
    parser.add_argument("--grid", type=int, default=20, help="fixed cutoffs of the fine grid")
    parser.add_argument("--noise", type=float, default=0.002, help="torque-sensor noise, share of RMS torque")
    parser.add_argument("--ripple", type=float, default=0.005, help="drive ripple amplitude, share of RMS torque")
    parser.add_argument("--encoder", type=float, default=500.0, help="motor encoder counts per revolution")
    parser.add_argument("--drop", type=float, default=0.01, help="share of samples lost")
    parser.add_argument("--f0", type=float, default=0.2)
    parser.add_argument("--harmonics", type=int, default=5)
    args = parser.parse_args()

    import dynid
    from dynid.identify import ModelOptions, base_parameters
    from dynid.identify.crossval import choose_lowpass

    robot = dynid.load_robot("er3a")
    options = ModelOptions()
    base = base_parameters(robot, options)
    print(f"er3a, multi-sine f0 {args.f0} Hz x {args.harmonics} harmonics; torque noise {args.noise:.1%} and ripple "
          f"{args.ripple:.1%} of RMS torque, {args.encoder:g}-count motor encoders, {args.drop:.0%} samples dropped; "
          f"training {args.train:g} s, validation {args.validation:g} s")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for rate in args.rates:
            train, val = Path(tmp) / f"train_{rate:g}.csv", Path(tmp) / f"val_{rate:g}.csv"
            write_log(robot, train, rate, args.train, 1, args)
            args_val = argparse.Namespace(**{**vars(args), "drop": 0.0})  # true torque on the same grid
            t_val, tau_val = write_log(robot, val, rate, args.validation, 2, args_val)
            cpu, wall = time.process_time(), time.perf_counter()
            _, selection = choose_lowpass(robot, train, options, base)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            trim = int(2.0 * rate)
            grid = np.geomspace(max(0.5, 30.0 / args.train), min(50.0, 0.4 * rate), args.grid)
            fixed = np.array([held_out(robot, base, options, train, val, t_val, tau_val, fc, trim) for fc in grid])
            auto = held_out(robot, base, options, train, val, t_val, tau_val, selection.chosen_hz, trim)
            default = held_out(robot, base, options, train, val, t_val, tau_val, min(20.0, rate / 10.0), trim)
            best = int(np.argmin(fixed[:, 0]))
            best_true = int(np.argmin(fixed[:, 1]))
            rows.append((rate, selection, cpu, wall, auto, default, grid[best], fixed[best], grid[best_true],
                         fixed[best_true]))
            print(f"\n{rate:g} Hz: fine grid {grid[0]:.3g}..{grid[-1]:.3g} Hz ({args.grid} cutoffs)")
            for fc, (em, et) in zip(grid, fixed):
                print(f"  {fc:8.3f} Hz  measured {100 * em:.4f} %  true {100 * et:.4f} %")
    print("\n| rate | chosen [Hz] | CV CPU s (wall) | held-out error vs measured: auto / best fixed (cutoff) / "
          "default | vs noise-free: auto / best fixed (cutoff) / default |")
    print("|---|---|---|---|---|")
    for rate, sel, cpu, wall, auto, default, fb, eb, fbt, ebt in rows:
        print(f"| {rate:g} Hz | {sel.chosen_hz:.3g} | {cpu:.1f} ({wall:.1f}) | {100 * auto[0]:.3f} % / "
              f"{100 * eb[0]:.3f} % ({fb:.3g} Hz) / {100 * default[0]:.3f} % | {100 * auto[1]:.3f} % / "
              f"{100 * ebt[1]:.3f} % ({fbt:.3g} Hz) / {100 * default[1]:.3f} % |")
        print(f"|   | auto / best: measured {auto[0] / eb[0]:.3f}, noise-free {auto[1] / ebt[1]:.3f} | | | |")
    print(f"cores: {os.cpu_count()}, load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
