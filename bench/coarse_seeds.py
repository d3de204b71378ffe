"""Is ``coarse1k``'s 1.88 x (``bench/real_defaults.py --cases coarse1k``) the defaults' fault or
the best hand setting's luck? The same log shape (kr500, 1 kHz, 500-count encoders, a 20 s
training log, 10 s held-out files; ``bench/log_kinds.py``) over several seeds and held-out files.

For each seed s the training log has seed s and the held-out file seed s + 1 (s = 98 is the
case of real_defaults.py); ``--tests K`` adds K further held-out files (seeds 1000 s + 1 ..
1000 s + K), predicted with the same fits. ``dynid identify`` runs with its defaults and with each
``--lowpass`` of ``--cutoffs``; ``dynid predict`` on every held-out file, scored against the
noise-free torque over all the rows it writes (as real_defaults.py), and over the interior
(without 0.6 s at each end) to show where the error is.

Printed per seed: the defaults' error (cutoff chosen), each fixed cutoff's, the best of them
on that file and the ratio defaults / best (what real_defaults.py reports); then over all
seeds and files: the RMS error of the defaults, of each fixed cutoff, and of the best cutoff
picked per file after seeing its error (what a hand search against the test file does).

    .venv/bin/python bench/coarse_seeds.py --seeds 98,110,120,130,140 --tests 4
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

EDGE = 0.6  # s at each end of a held-out file left out of the interior error


def errors(work: Path, result: Path,
           tests: list[tuple[Path, np.ndarray, np.ndarray]]) -> list[tuple[float, float, float]]:
    """(all rows, interior) relative errors of the fit ``result`` on each held-out file, and the
    share of its squared error outside the interior."""
    from real_defaults import predicted, run

    out = []
    for path, t_true, tau_true in tests:
        run("predict", "-r", "kr500", "-p", result, "-d", path, "-o", work / "pred.csv")
        t, tau_hat = predicted(work / "pred.csv", tau_true.shape[1])
        true = tau_true[np.clip(np.searchsorted(t_true, t - 1e-9), 0, len(t_true) - 1)]
        inner = (t > t[0] + EDGE) & (t < t[-1] - EDGE)
        error = tau_hat - true
        out.append((float(np.linalg.norm(error) / np.linalg.norm(true)),
                    float(np.linalg.norm(error[inner]) / np.linalg.norm(true[inner])),
                    float(np.sum(error[~inner] ** 2) / np.sum(error ** 2))))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="98,110,120,130,140")
    parser.add_argument("--cutoffs", default="1.5,1.7,1.9,2,2.2,2.5,3,4,5")
    parser.add_argument("--tests", type=int, default=0, help="further held-out files per seed")
    args = parser.parse_args()
    import json

    import dynid
    from dynid.data.io import write_joint_data
    from real_defaults import run
    from realistic_logs import realistic_log

    robot = dynid.load_robot("kr500")
    cutoffs = [float(c) for c in args.cutoffs.split(",")]
    settings = ["defaults"] + [f"--lowpass {c:g}" for c in cutoffs]
    table = {s: [] for s in settings}  # (all rows, interior) per held-out file
    print(f"dynid {dynid.__version__}; kr500, 1 kHz, 500-count encoders, 20 s training log, 10 s held-out files; "
          f"relative error over all rows (interior: without {EDGE:g} s at each end)")
    print("| seed | defaults (cutoff) | " + " | ".join(settings[1:]) + " | best on the file | defaults / best | s |")
    print("|---" * (len(settings) + 4) + "|")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for seed in [int(s) for s in args.seeds.split(",")]:
            wall = time.perf_counter()
            train, _, _ = realistic_log(robot, 1000.0, 20.0, seed=seed, f0=0.2, drop=0.0)
            write_joint_data(work / "train.csv", train)
            tests = []
            for k, test_seed in enumerate([seed + 1] + [1000 * seed + j for j in range(1, args.tests + 1)]):
                data, t, tau = realistic_log(robot, 1000.0, 10.0, seed=test_seed, f0=0.2, drop=0.0)
                write_joint_data(work / f"test{k}.csv", data)
                tests.append((work / f"test{k}.csv", t, tau))
            row = {}
            for setting in settings:
                options = [] if setting == "defaults" else setting.split()
                run("identify", "-r", "kr500", "-d", work / "train.csv", "-o", work / "r.json", *options)
                if setting == "defaults":
                    chosen = json.loads((work / "r.json").read_text())["preprocessing"]["lowpass_hz"]
                row[setting] = errors(work, work / "r.json", tests)
                table[setting] += row[setting]
            first = {s: row[s][0][0] for s in settings}
            best = min(settings[1:], key=first.get)
            print(f"| {seed} | {100 * first['defaults']:.2f} % ({chosen:.3g} Hz) | "
                  + " | ".join(f"{100 * first[s]:.2f}" for s in settings[1:])
                  + f" | {best.split()[1]} Hz | {first['defaults'] / first[best]:.2f} | "
                  f"{time.perf_counter() - wall:.0f} |", flush=True)
    rms = lambda values: 100 * float(np.sqrt(np.mean(np.square(values))))  # noqa: E731
    files = len(table["defaults"])
    every = np.array([[e[0] for e in table[s]] for s in settings[1:]])  # (cutoffs, files)
    print(f"\nOver {files} held-out files: RMS of the relative error over all rows (interior)")
    for setting in settings:
        print(f"- {setting}: {rms([e[0] for e in table[setting]]):.2f} % ({rms([e[1] for e in table[setting]]):.2f} %)")
    print(f"- the best fixed cutoff picked per file after seeing its error: {rms(every.min(axis=0)):.2f} %")
    share = np.mean([e[2] for e in table["defaults"]])
    print(f"- defaults: share of the squared error within {EDGE:g} s of a file's ends (12 % of its rows), "
          f"mean over files: {100 * share:.0f} %")


if __name__ == "__main__":
    main()
