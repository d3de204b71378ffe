"""How a tie of cross-validation scores is broken (identify/crossval.py step 6), per rule.

Logs of the kind of ``bench/real_defaults.py``'s ``motor5k`` (tx40 written motor side, 9 s at
5 kHz, 4096-count motor encoders, a 30-40 Hz mode in q, 1 % current ripple; trained on 6 s,
predicted on the last 3 s as a file of their own, scored over every written row against the
rigid-body-and-friction torque) for several seeds (47 is the bench's), and the issue's slow
er3a log (500 Hz, 20 s, harmonics up to 0.5 Hz, predicted on a 10 s log). For each: the
measured motion bandwidth B, then the cutoff ``identify`` chooses and its held-out error with
the tie broken toward the highest tied cutoff (the old rule) and toward the lowest tied cutoff
at or above k B for k = 3, 5 (the default), 10; and the best of a grid of fixed cutoffs.

    .venv/bin/python bench/cutoff_tie.py                  # seeds 47,61,71,81,91 and the er3a log
    .venv/bin/python bench/cutoff_tie.py --seeds 47 --no-er3a
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

RULES = {"highest tied (old)": float("inf"), "k = 3": 3.0, "k = 5 (default)": 5.0, "k = 10": 10.0}
FIXED = (3.0, 4.0, 5.0, 7.0, 10.0, 14.0, 20.0, 28.0)


def motor_case(work: Path, seed: int):
    import dynid
    from dynid.data.io import joint_data_columns, write_columns
    from dynid.simulate.motor_side import motor_side_columns
    from real_defaults import Case, _truth_at
    from realistic_logs import short_fast_log, split_log

    robot = dynid.load_robot("tx40")
    data, t, tau, _ = short_fast_log(robot, seed)
    for part, (a, b) in (("train", (0.0, 6.0)), ("test", (6.0, 9.1))):
        write_columns(work / f"m{seed}_{part}.csv",
                      motor_side_columns(robot, joint_data_columns(split_log(data, a, b)), True, False))
    return Case(f"motor5k seed {seed}", "tx40", robot.n, [work / f"m{seed}_train.csv"], work / f"m{seed}_test.csv",
                _truth_at(t, tau), layout=["--motor-side"])


def er3a_case(work: Path):
    import dynid
    from dynid.data.io import write_joint_data
    from real_defaults import Case, _truth_at
    from realistic_logs import realistic_log

    robot = dynid.load_robot("er3a")
    train, _, _ = realistic_log(robot, 500.0, 20.0, seed=21, f0=0.1)
    test, t, tau = realistic_log(robot, 500.0, 10.0, seed=22, f0=0.1, drop=0.0)
    write_joint_data(work / "er3a_train.csv", train)
    write_joint_data(work / "er3a_test.csv", test)
    return Case("er3a slow", "er3a", robot.n, [work / "er3a_train.csv"], work / "er3a_test.csv", _truth_at(t, tau))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="47,61,71,81,91")
    parser.add_argument("--no-er3a", action="store_true")
    args = parser.parse_args()
    import dynid.identify.crossval as crossval

    print("| log | B [Hz] | " + " | ".join(RULES) + " | best fixed cutoff |")
    print("|---|---|" + "---|" * (len(RULES) + 1))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        cases = [motor_case(work, int(s)) for s in args.seeds.split(",") if s]
        cases += [] if args.no_er3a else [er3a_case(work)]
        for case in cases:
            cells = []
            for k in RULES.values():
                crossval.MOTION_MARGIN = k
                error = case.scores(work, [])[case.name]
                cells.append((case.preprocessing["lowpass_hz"], error))
            crossval.MOTION_MARGIN = RULES["k = 5 (default)"]
            bandwidth = json.loads((work / "r.json").read_text())["lowpass_selection"]["grid"]["motion_bandwidth_hz"]
            fixed = {fc: case.scores(work, ["--lowpass", f"{fc:g}"])[case.name] for fc in FIXED}
            best = min(fixed, key=fixed.get)
            print(f"| {case.name} | {bandwidth:.3g} | "
                  + " | ".join(f"{fc:.3g} Hz: {100 * e:.4f} % ({e / fixed[best]:.2f})" for fc, e in cells)
                  + f" | {best:g} Hz: {100 * fixed[best]:.4f} % |", flush=True)


if __name__ == "__main__":
    main()
