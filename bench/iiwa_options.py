"""Model options for the real KUKA iiwa 14 log, chosen on the training log alone.

Leave-one-segment-out cross-validation on ``joint_2_to_7_dynamic_motion`` (10 segments): each
segment's torques are predicted by the model fitted to the other nine (summed per-segment
normal equations, ``accumulate_sources(per_segment=True)``), with the held-still joints 1-2
handled as ``dynid identify`` does (``identify.undetermined``). The validation log
(``joint_3_to_7_dynamic_motion``) is not read here: it is for the held-out figures only.

    .venv/bin/python bench/iiwa_options.py        # prints one line per option set

Reads shared/real/kuka_iiwa14 (found like tests/conftest.py: $DYNID_SHARED or a parent
directory's shared/); converts it to Parquet in a temporary directory.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SIGNALS = "t=cur_traj_time_s.txt,q=joint_position_measured.txt,dq=joint_velocity_measured.txt,tau=joint_torque_measured.txt"


def shared_iiwa() -> Path:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from shared_data import shared_path

    path = shared_path("real", "kuka_iiwa14")
    if path is None or not path.is_dir():
        sys.exit("shared/real/kuka_iiwa14 not found (set DYNID_SHARED)")
    return path


def loso(robot, path, options, prep, mapping, estimator="ols"):
    """(per-joint relative RMSD, overall) of leave-one-segment-out predictions."""
    from dynid.identify import base_parameters
    from dynid.identify.estimators import ESTIMATORS
    from dynid.identify.normal_equations import NormalEquations
    from dynid.identify.pipeline import accumulate_sources
    from dynid.identify.undetermined import find_undetermined

    base = base_parameters(robot, options)
    acc = accumulate_sources(robot, [path], options, base, mapping, prep, per_segment=True)
    found = find_undetermined(robot, options, base, acc.q_min, acc.q_max)
    segments = acc.sources[0].segments
    rss = np.zeros(robot.n)
    for held in segments:
        rest = NormalEquations(robot.n, base.rank)
        for other in segments:
            if other is not held:
                rest.merge(other.ne)
        est = ESTIMATORS[estimator](base.names, max_condition=1e12, **found.options()).fit_normal_equations(rest)
        rss += held.ne.residual_ss(est.coef_)
    return np.sqrt(rss / acc.ne.C), float(np.sqrt(rss.sum() / acc.ne.C.sum()))


def main() -> None:
    import dynid
    from dynid.data.columns import ColumnMapping
    from dynid.data.convert import parse_signals, text_signal_chunks, write_stream
    from dynid.data.preprocess import Preprocessing
    from dynid.identify import ModelOptions

    iiwa = shared_iiwa()
    robot = dynid.load_robot(str(iiwa / "urdf" / "iiwa14.urdf"))
    mapping = ColumnMapping(negate=("tau",), ignore=("dq", "ddq"))
    best = (ModelOptions(offset=True, smooth_sign=0.02), Preprocessing(lowpass_hz=10.0, tau_delay=0.02))
    grid = [  # (label, model options, preprocessing[, estimator]): one change at a time
        ("default model, --offset", ModelOptions(offset=True), Preprocessing()),
        ("no offset", ModelOptions(), Preprocessing()),
        ("--lowpass 10", ModelOptions(offset=True), Preprocessing(lowpass_hz=10.0)),
        ("--lowpass 10 --friction none", ModelOptions("none", offset=True), Preprocessing(lowpass_hz=10.0)),
        ("--lowpass 10 --friction asymmetric", ModelOptions("asymmetric", offset=True), Preprocessing(lowpass_hz=10.0)),
        ("--lowpass 10 --smooth-sign 0.02", ModelOptions(offset=True, smooth_sign=0.02), Preprocessing(lowpass_hz=10.0)),
    ] + [(f"--lowpass 10 --smooth-sign 0.02 --tau-delay {d:g}", ModelOptions(offset=True, smooth_sign=0.02),
          Preprocessing(lowpass_hz=10.0, tau_delay=d)) for d in (0.01, 0.02, 0.03)] + [
        ("--lowpass 10 --smooth-sign 0.02 --tau-delay 0.02 --estimator wls", *best, "wls")]
    with tempfile.TemporaryDirectory() as tmp:
        train = Path(tmp) / "train.parquet"
        write_stream(train, text_signal_chunks(iiwa / "joint_2_to_7_dynamic_motion", parse_signals(SIGNALS)))
        print("leave-one-segment-out relative RMSD per joint on joint_2_to_7_dynamic_motion (%), overall")
        for label, options, prep, *estimator in grid:
            t0 = time.perf_counter()
            per_joint, overall = loso(robot, train, options, prep, mapping, *estimator)
            print(f"{label:48s} {' '.join(f'{100 * v:5.1f}' for v in per_joint)}   {100 * overall:5.2f}"
                  f"   ({time.perf_counter() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
