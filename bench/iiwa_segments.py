"""Is ``iiwashort``'s 2.02 x (``bench/real_defaults.py --cases iiwashort``: the real iiwa's training
log cut to its first segment, one 2 s move then rest) the defaults' fault or the best hand
setting's luck? The real log joint_2_to_7_dynamic_motion (shared/real/kuka_iiwa14) holds ten such
segments (its time restarts at each); each is a training log of its own here, with the layout
options of real_defaults.py's iiwa cases, predicting joint_3_to_7_dynamic_motion, scored row for
row against its measured torque (relative error over all rows, all joints pooled).

Printed per segment: the defaults' error (cutoff chosen), each fixed ``--lowpass`` of
``--cutoffs``, the best of them and defaults / best (segment 0 is the case of real_defaults.py);
then over the segments: the RMS error of the defaults, of each fixed cutoff, and of the cutoff
picked per segment after seeing its error.

    .venv/bin/python bench/iiwa_segments.py
    .venv/bin/python bench/iiwa_segments.py --segments 0,1,2 --cutoffs 5,20
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--segments", default="", help="segment indices (default: all)")
    parser.add_argument("--cutoffs", default="2,5,10,15,20,28,50")
    args = parser.parse_args()
    import pyarrow.parquet as pq

    import dynid
    from real_defaults import IIWA_LAYOUT, iiwa_logs, predicted, run
    from shared_data import shared_path

    iiwa_dir = shared_path("real", "kuka_iiwa14")
    if iiwa_dir is None:
        sys.exit("error: shared/real/kuka_iiwa14 not found (tests/shared_data.py)")
    urdf = str(iiwa_dir / "urdf" / "iiwa14.urdf")
    cutoffs = [float(c) for c in args.cutoffs.split(",")]
    settings = ["defaults"] + [f"--lowpass {c:g}" for c in cutoffs]
    print(f"dynid {dynid.__version__}; real iiwa 14, 200 Hz: trained on one segment of joint_2_to_7_dynamic_motion, "
          "predicting joint_3_to_7_dynamic_motion against its measured torque")
    print("| segment | rows | defaults (cutoff) | " + " | ".join(settings[1:]) + " | best | defaults / best | s |")
    print("|---" * (len(settings) + 5) + "|")
    table = {s: [] for s in settings}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        train, test, truth = iiwa_logs(work, iiwa_dir, "iiwa")
        whole = pq.read_table(train)
        t = whole.column("t").to_numpy()
        starts = [0, *(np.flatnonzero(np.diff(t) <= 0) + 1).tolist(), len(t)]
        chosen = [int(k) for k in args.segments.split(",")] if args.segments else range(len(starts) - 1)
        for k in chosen:
            wall = time.perf_counter()
            piece = work / "segment.parquet"
            pq.write_table(whole.slice(starts[k], starts[k + 1] - starts[k]), piece)
            row = {}
            for setting in settings:
                options = [] if setting == "defaults" else setting.split()
                try:
                    run("identify", "-r", urdf, "-d", piece, "-o", work / "r.json", *IIWA_LAYOUT, *options)
                except RuntimeError as exc:  # a setting the fit refuses: not a candidate
                    print(f"  segment {k}: {setting}: {str(exc).splitlines()[-1][:160]}")
                    continue
                if setting == "defaults":
                    cutoff = json.loads((work / "r.json").read_text())["preprocessing"]["lowpass_hz"]
                run("predict", "-r", urdf, "-p", work / "r.json", "-d", test, "-o", work / "pred.csv")
                tp, tau_hat = predicted(work / "pred.csv", 7)
                true = truth(tp)
                row[setting] = float(np.linalg.norm(tau_hat - true) / np.linalg.norm(true))
                table[setting].append(row[setting])
            best = min((s for s in settings[1:] if s in row), key=row.get)
            print(f"| {k} | {starts[k + 1] - starts[k]} | {100 * row['defaults']:.1f} % ({cutoff:.3g} Hz) | "
                  + " | ".join(f"{100 * row[s]:.1f}" if s in row else "-" for s in settings[1:])
                  + f" | {best.split()[1]} Hz | {row['defaults'] / row[best]:.2f} | {time.perf_counter() - wall:.0f} |",
                  flush=True)
    rms = lambda values: 100 * float(np.sqrt(np.mean(np.square(values))))  # noqa: E731
    print(f"\nOver {len(table['defaults'])} segments: RMS of the relative error over all rows")
    for setting in settings:
        print(f"- {setting}: {rms(table[setting]):.1f} % ({len(table[setting])} segments)")
    full = [min(v) for v in zip(*[table[s] for s in settings[1:]])] if all(
        len(table[s]) == len(table["defaults"]) for s in settings[1:]) else []
    if full:
        print(f"- the best fixed cutoff picked per segment after seeing its error: {rms(full):.1f} %")


if __name__ == "__main__":
    main()
