"""Accelerations at the ends of a log on coarse encoders: the edge polynomial chosen by least
expected error where quantization noise dominates the trial error (``data/edges.py``, step 1)
against the least trial error everywhere (``NOISE_SHARE = inf``, the rule before).

kr500 multi-sines to 1 Hz (f0 0.2 Hz, 5 harmonics; ``dynid.simulate.random_multisine``), 10 s at
1 kHz, positions rounded to encoders of 500, 4096 and 16384 counts per revolution, filtered by
``lowpass_edges`` at each cutoff; second differences x fs^2 against the true accelerations within
0.6 s of each end, RMS over all joints and logs, relative to the true accelerations' RMS there.

    .venv/bin/python bench/coarse_edges.py --seeds 100-111 --cutoffs 1.5,2,3
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="100-111", help="first-last")
    parser.add_argument("--cutoffs", default="1.5,2,3")
    args = parser.parse_args()
    import dynid
    from dynid.data import edges
    from dynid.simulate import random_multisine

    first, last = (int(s) for s in args.seeds.split("-"))
    robot = dynid.load_robot("kr500")
    fs, end = 1000.0, 600
    t = np.arange(0.0, 10.0, 1.0 / fs)
    motions = [random_multisine(robot, seed=s, f0=0.2, harmonics=5).sample(t) for s in range(first, last + 1)]
    print(f"dynid {dynid.__version__}; kr500, 1 kHz, 10 s, seeds {first}-{last}; acceleration error within "
          f"{end / fs:g} s of the ends (RMS, % of the true accelerations' RMS there)")
    print("| cutoff | encoder counts | least expected error (default) | least trial error | s |")
    print("|---|---|---|---|---|")
    rule = edges.NOISE_SHARE
    for cutoff in (float(c) for c in args.cutoffs.split(",")):
        for counts in (500, 4096, 16384):
            count = 2 * np.pi / counts
            row = []
            wall = time.perf_counter()
            for share in (rule, np.inf):
                edges.NOISE_SHARE = share
                num = den = 0.0
                for q, _, ddq in motions:
                    ddq_hat = np.diff(edges.lowpass_edges(np.round(q / count) * count, fs, cutoff), 2, axis=0) * fs ** 2
                    ends = np.r_[0:end, len(ddq_hat) - end:len(ddq_hat)]
                    num += np.sum((ddq_hat - ddq[1:-1])[ends] ** 2)
                    den += np.sum(ddq[1:-1][ends] ** 2)
                row.append(100 * np.sqrt(num / den))
            edges.NOISE_SHARE = rule
            print(f"| {cutoff:g} Hz | {counts} | {row[0]:.2f} % | {row[1]:.2f} % | {time.perf_counter() - wall:.1f} |",
                  flush=True)


if __name__ == "__main__":
    main()
