"""Identification of a two-hour 1 kHz log (7.2 million samples, 6-DoF er3a) from a file on disk.

1. Writes the log (Parquet, columns t, q1..q6, tau1..tau6 as a controller records them: a
   2^16-count motor encoder quantizes q, torque noise 0.1 N m; rigid body + Coulomb/viscous
   friction + rotor inertia) into a temporary directory, in row groups (not timed).
2. In a child process (so its peak memory is its own; the parent stays small because Linux
   keeps ru_maxrss across fork + exec): ``accumulate_file`` streams the file
   in chunks (read, 20 Hz zero-phase low-pass, central differences for dq and ddq, the
   compiled rigid-body regressor, per-joint Gram matrices) and ordinary least squares solves
   for the 52 base parameters. Reports seconds, us/sample and peak RSS (getrusage maxrss).
   Worker threads (one per core) compute regressors and Gram matrices without the GIL while
   the main thread reads and filters the next chunk.
3. For comparison, Pinocchio's per-sample ``computeJointTorqueRegressor`` plus a NumPy
   normal-equation update (A += Y^T Y, b += Y^T tau) on a subset of the samples, extrapolated
   linearly to the full log (stated as such; it excludes reading and filtering).

Usage: .venv/bin/python bench/identify_stream.py [--samples 7200000] [--pin-samples 20000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def write_log(path: Path, samples: int, rate: float, seed: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    import dynid
    from dynid.identify import ModelOptions
    from dynid.simulate import Measurement, random_multisine, simulate_joint_data

    robot = dynid.load_robot("er3a")
    traj = random_multisine(robot, seed=seed, f0=0.05, harmonics=6)
    sensors = Measurement(tau_noise=0.1, encoder_counts=2**16)
    writer, chunk = None, 100_000  # row groups of 100k samples
    for start in range(0, samples, chunk):
        t = np.arange(start, min(start + chunk, samples)) / rate
        q, dq, ddq = traj.sample(t)
        data, _, _ = simulate_joint_data(robot, t, q, dq, ddq, ModelOptions(), measurement=sensors, seed=start)
        cols = {"t": data.t}
        cols.update({f"q{j + 1}": data.q[:, j] for j in range(robot.n)})
        cols.update({f"tau{j + 1}": data.tau[:, j] for j in range(robot.n)})
        table = pa.table(cols)
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table)
    writer.close()


def identify_child(path: str, chunk_rows: int, decimate: int = 1, auto: bool = False) -> dict:
    """Runs in the child process: the whole identification, timed, with peak memory."""
    t_import = time.perf_counter()
    import dynid
    from dynid.identify import ModelOptions, base_parameters
    from dynid.identify.estimators import OrdinaryLeastSquares
    from dynid.data.preprocess import Preprocessing
    from dynid.identify.pipeline import accumulate_file

    robot = dynid.load_robot("er3a")
    dynid.regressor(robot, np.zeros((2, 6)), np.zeros((2, 6)), np.zeros((2, 6)))  # load compiled kernel
    t0, cpu0 = time.perf_counter(), time.process_time()  # process CPU time: all threads
    main0 = time.thread_time()  # the main thread: reads, checks, filters (the workers' critical path)
    options = ModelOptions()
    base = base_parameters(robot, options)
    prep, cv = Preprocessing(decimate=decimate), {}
    if auto:  # what 'dynid identify' does by default: --lowpass auto (identify/crossval.py) first
        from dynid.identify.crossval import choose_lowpass

        prep, selection = choose_lowpass(robot, path, options, base, prep, chunk_rows=chunk_rows)
        cv = {"cv_seconds": time.perf_counter() - t0, "cv_cpu_seconds": time.process_time() - cpu0,
              "cutoff_hz": selection.chosen_hz, "cv_samples": selection.samples,
              "cv_candidates": len(selection.candidates_hz)}
    acc = accumulate_file(robot, path, options, base, prep=prep, chunk_rows=chunk_rows)
    est = OrdinaryLeastSquares(names=base.names).fit_normal_equations(acc.ne)
    t1, cpu1, main1 = time.perf_counter(), time.process_time(), time.thread_time()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    hwm = next((float(line.split()[1]) / 1024.0 for line in open("/proc/self/status") if line.startswith("VmHWM")),
               float("nan"))
    return {"samples": acc.samples, "seconds": t1 - t0, "startup_seconds": t0 - t_import,
            "peak_rss_mb": usage.ru_maxrss / 1024.0, "vm_hwm_mb": hwm,
            "cpu_seconds": cpu1 - cpu0, "main_cpu_seconds": main1 - main0,
            "base_parameters": base.rank, "condition_number": est.cond_,
            "rmsd": np.sqrt(est.rss_ / est.rows_).tolist(), "sigma": np.sqrt(est.sigma2_[0]), **cv}


def pinocchio_model(robot):
    """The same robot as a Pinocchio model (joint frames = link frames for MDH/URDF robots)."""
    import pinocchio as pin

    model = pin.Model()
    model.gravity.linear = np.asarray(robot.gravity)
    ids = []
    order = [0, 1, 2, 3, 4, 5, 7, 6, 8, 9]  # dynid -> Pinocchio dynamic parameter order
    for i, joint in enumerate(robot.joints):
        parent = ids[joint.parent] if joint.parent >= 0 else 0
        placement = pin.SE3(np.asarray(joint.placement_rotation), np.asarray(joint.placement_translation))
        jm = (pin.JointModelRevoluteUnaligned(np.asarray(joint.axis)) if joint.type == "revolute"
              else pin.JointModelPrismaticUnaligned(np.asarray(joint.axis)))
        jid = model.addJoint(parent, jm, placement, joint.name)
        inertia = pin.Inertia.FromDynamicParameters(np.asarray(robot.links[i].inertial)[order])
        model.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
        ids.append(jid)
    return model


def pinocchio_baseline(samples: int, total: int) -> dict:
    import pinocchio as pin

    import dynid
    from dynid.simulate import random_multisine

    robot = dynid.load_robot("er3a")
    assert not any(j.is_offset for j in robot.joints)
    model = pinocchio_model(robot)
    data = model.createData()
    t = np.arange(samples) / 1000.0
    q, dq, ddq = random_multisine(robot, seed=0, f0=0.05, harmonics=6).sample(t)
    tau = dynid.inverse_dynamics(robot, q, dq, ddq)
    check = pin.rnea(model, data, q[0], dq[0], ddq[0])
    agreement = float(np.max(np.abs(check - tau[0])))
    p = 10 * robot.n
    a, b = np.zeros((p, p)), np.zeros(p)
    t0 = time.perf_counter()
    for k in range(samples):  # the per-sample loop a Pinocchio user writes
        y = pin.computeJointTorqueRegressor(model, data, q[k], dq[k], ddq[k])
        a += y.T @ y
        b += y.T @ tau[k]
    seconds = time.perf_counter() - t0
    return {"samples": samples, "seconds": seconds, "us_per_sample": seconds / samples * 1e6,
            "extrapolated_seconds": seconds / samples * total, "rnea_agreement": agreement}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=7_200_000)
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--chunk-rows", type=int, default=50_000)
    parser.add_argument("--pin-samples", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--decimate", type=int, nargs="*", default=[1, 5],
                        help="decimation factors to run (1 = full rate); Gautier's parallel filtering")
    parser.add_argument("--log", help="keep the generated log at this path and reuse it when it exists "
                        "(written for --samples/--rate/--seed; delete it after changing them)")
    parser.add_argument("--lowpass-auto", action="store_true",
                        help="choose the cutoff by blocked cross-validation first, as 'dynid identify' does by default")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--write", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(identify_child(args.child, args.chunk_rows, args.decimate[0], args.lowpass_auto)))
        return
    if args.write:
        write_log(Path(args.write), args.samples, args.rate, args.seed)
        return
    # every heavy step runs in a child process: Linux keeps ru_maxrss across fork + exec, so a
    # child forked from a large parent would report the parent's size as its own peak
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.log) if args.log else Path(tmp) / "log.parquet"
        t0 = time.perf_counter()
        if not path.exists():  # written beside, then renamed: an interrupted run leaves no partial log
            part = path.with_name(path.name + ".part")
            subprocess.run([sys.executable, __file__, "--write", str(part), "--samples", str(args.samples),
                            "--rate", str(args.rate), "--seed", str(args.seed)], check=True)
            part.replace(path)
        size = path.stat().st_size / 1e6
        print(f"{'wrote' if time.perf_counter() - t0 > 1 else 'reused'} {args.samples} samples "
              f"({args.samples / args.rate / 3600:.2f} h at {args.rate:g} Hz) of er3a in {path.name}: "
              f"{size:.0f} MB Parquet in {time.perf_counter() - t0:.1f} s")
        child_env = dict(os.environ)
        runs = []
        for k in args.decimate:
            t1 = time.perf_counter()
            out = subprocess.run([sys.executable, __file__, "--child", str(path), "--chunk-rows", str(args.chunk_rows),
                                  "--decimate", str(k)] + (["--lowpass-auto"] if args.lowpass_auto else []),
                                 capture_output=True, text=True, check=True, env=child_env)
            runs.append((k, time.perf_counter() - t1, json.loads(out.stdout.strip().splitlines()[-1])))
    pin_r = pinocchio_baseline(args.pin_samples, args.samples)
    for k, wall, r in runs:
        what = "full rate" if k == 1 else f"parallel filtering + decimation by {k} ({r['samples']} fitted samples)"
        print(f"dynid identify, {what}: stream read, low-pass, differentiate, regressor, Gram, OLS of "
              f"{r['base_parameters']} base parameters")
        print(f"  samples read       {args.samples} (fitted {r['samples']}: filter edges left out)")
        print(f"  time               {r['seconds']:.1f} s  = {r['seconds'] / args.samples * 1e6:.2f} us per sample read "
              f"(CPU {r['cpu_seconds']:.1f} s; process wall {wall:.1f} s incl. {r['startup_seconds']:.1f} s start-up)")
        print(f"  CPU by thread      main (read, check, filter, differentiate) {r['main_cpu_seconds'] / args.samples * 1e6:.2f}"
              f" us/sample, the others (regressor + Gram workers, Parquet decoding) "
              f"{(r['cpu_seconds'] - r['main_cpu_seconds']) / args.samples * 1e6:.2f} us/sample")
        if "cv_seconds" in r:
            print(f"  --lowpass auto     {r['cutoff_hz']:.3g} Hz chosen from {r['cv_candidates']} candidates on "
                  f"{r['cv_samples']} samples in {r['cv_seconds']:.1f} s (CPU {r['cv_cpu_seconds']:.1f} s), "
                  "included in the time above")
        print(f"  peak memory        {r['peak_rss_mb']:.0f} MB (getrusage maxrss of the identifying process; "
              f"VmHWM {r['vm_hwm_mb']:.0f} MB)")
        print(f"  fit                RMSD per joint {np.round(r['rmsd'], 4).tolist()} N m (noise 0.1 N m), "
              f"cond {r['condition_number']:.1f}")
    print(f"Pinocchio computeJointTorqueRegressor + NumPy normal-equation update, per sample in Python")
    print(f"  measured           {pin_r['samples']} samples in {pin_r['seconds']:.2f} s = {pin_r['us_per_sample']:.2f} us/sample "
          f"(RNEA agreement with dynid {pin_r['rnea_agreement']:.1e} N m)")
    print(f"  extrapolated       {pin_r['extrapolated_seconds']:.0f} s for {args.samples} samples "
          f"(linear extrapolation; no file reading or filtering included)")
    print(f"cores: {os.cpu_count()}, load average at end: {os.getloadavg()[0]:.2f} "
          "(other jobs share the cores: compare the CPU seconds too)")


if __name__ == "__main__":
    main()
