"""Figures of docs/identification.md "Drive gains from a known load": the gains of the er3a
from simulated current logs (tests/test_drive_gains.py: unknown gains, torque noise and ripple
as shares of the RMS torque, 2^14-count encoders, 1 % dropped rows), per method and noise level.
Prints, per method, the largest gain error over the joints of each draw and the RMS of
error / reported std over joints and draws.

Usage: .venv/bin/python bench/drive_gains.py [--draws 4] [--rate 100] [--seconds 60]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=4)
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()

    import dynid
    from dynid.data.preprocess import Preprocessing
    from dynid.drives.calibrate import calibrate_drives
    from dynid.drives.gains import KnownLoad
    from test_drive_gains import COM, MASS, _true_gains, write_current_logs

    robot = dynid.load_robot("er3a")
    true = _true_gains(robot)
    start, cpu = time.time(), time.process_time()
    print(f"er3a, {MASS} kg load with known centre of mass, {args.draws} draws of {args.seconds:g} s logs at "
          f"{args.rate:g} Hz without and with it (ripple 0.5 %, 2^14-count encoders, 1 % dropped), low-pass 4 Hz")
    for noise in (0.005, 0.05):
        rows: dict[str, list] = {"ols": [], "tls": [], "pc": []}
        svd = []
        for draw in range(args.draws):
            with tempfile.TemporaryDirectory() as tmp:
                write_current_logs(Path(tmp), robot, true, noise, args.rate, args.seconds, seed=600 + 10 * draw)
                for method in rows:
                    fit = calibrate_drives(robot, [Path(tmp) / "unloaded.csv"], [Path(tmp) / "loaded.csv"],
                                           KnownLoad(MASS, COM), prep=Preprocessing(lowpass_hz=4.0), method=method)
                    k, std = fit.gains()
                    rows[method].append((k / true - 1.0, (k - true) / std))
                    if method == "tls":
                        svd.append(fit.fit.svd_gains / true - 1.0)
        print(f"current noise {100 * noise:g} % of the RMS torque:")
        for method, values in rows.items():
            worst = [100 * np.max(np.abs(e)) for e, _ in values]
            ratio = np.sqrt(np.mean(np.concatenate([r for _, r in values]) ** 2))
            print(f"  {method:3s}: largest gain error per draw {', '.join(f'{w:.3f}' for w in worst)} %; "
                  f"RMS error / std {ratio:.2f}")
        print(f"  plain TLS (Gautier & Briot's SVD, the start of tls): largest error per draw "
              f"{', '.join(f'{100 * np.max(np.abs(e)):.3f}' for e in svd)} %")
    print(f"{time.time() - start:.1f} s wall, {time.process_time() - cpu:.1f} s CPU; load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
