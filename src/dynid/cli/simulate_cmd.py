"""dynid simulate: synthetic joint data (or the seed KR500 body data) for tests and studies."""

from __future__ import annotations

import math
from pathlib import Path

import typer

from dynid.cli import data_options as O
from dynid.cli.common import JOINTS, LOCK, console, friendly_errors, load_selected, robot_option
from dynid.errors import DataError

MAX_SAMPLES = 1e8  # 0.8 GB per float column: beyond that a typo (--duration 1e9), not a study


def _per_joint(text: str | None, n: int, what: str) -> np.ndarray | None:
    import numpy as np

    if text is None:
        return None
    from dynid.cli.option_checks import number_list

    values = np.array(number_list(text, what, (1, n), "numbers (one, or one per joint)"))
    return np.repeat(values, n) if values.size == 1 else values


def _trajectory(robot, trajectory: str, duration: float, rate: float, seed: int):
    """(timeline, sample) with sample(t) -> (q, dq, ddq): 'multisine' (exact), an excitation
    trajectory (JSON from 'dynid excite optimize' or a builtin such as thesis-table-4.1,
    exact) or a joint data file with t, q (dq, ddq optional; missing ones from a cubic spline)."""
    import numpy as np
    import scipy.interpolate

    from dynid.data.columns import ColumnMapping
    from dynid.data.io import load_joint_data
    from dynid.simulate import random_multisine
    from dynid.simulate.stream import Timeline

    if trajectory == "multisine":
        return Timeline.uniform(duration, rate), random_multisine(robot, seed=seed).sample
    if not trajectory.lower().endswith((".csv", ".parquet", ".pq")):  # an excitation trajectory
        from dynid.excite.fileio import load_trajectory

        periodic = load_trajectory(trajectory, robot.n, robot.name)
        return Timeline.uniform(duration, rate), periodic.evaluate
    data = load_joint_data(trajectory, robot, ColumnMapping())
    q_spline = scipy.interpolate.CubicSpline(data.t, data.q, axis=0)
    dq_spline = scipy.interpolate.CubicSpline(data.t, data.dq, axis=0) if data.dq is not None else None

    def sample(t):
        dq = dq_spline(t) if dq_spline is not None else q_spline(t, 1)
        ddq = dq_spline(t, 1) if dq_spline is not None else q_spline(t, 2)
        i0 = int(np.searchsorted(data.t, t[0]))
        if data.ddq is not None and np.array_equal(t, data.t[i0:i0 + t.size]):  # the file's own samples
            ddq = data.ddq[i0:i0 + t.size]
        return q_spline(t), dq, ddq

    return Timeline.of(data.t, data.cycle, data.stage), sample  # cycle/stage of the file go to the output


@friendly_errors(outputs=("out", "body_data", "truth"))
def simulate(robot: str = robot_option(),
             out: Path = typer.Option(None, "--out", "-o", help="joint data file to write (CSV or Parquet)"),
             experiment: str = typer.Option(None, "--experiment", help="a seed experiment, e.g. seed-kr500"),
             body_data: Path = typer.Option(None, "--body-data", help="body data CSV of --experiment to write"),
             trajectory: str = typer.Option("multisine", "--trajectory",
                                            help="'multisine' (random, within limits), an excitation trajectory "
                                                 "(JSON or builtin name) or a joint data file with t, q"),
             duration: float = typer.Option(20.0, "--duration", help="seconds (multisine or excitation trajectory)"),
             rate: float = typer.Option(100.0, "--rate", help="sample rate [Hz] (multisine or excitation trajectory)"),
             seed: int = typer.Option(0, "--seed", help="seed of the trajectory, noise and jitter"),
             friction: str = O.FRICTION, rotor_inertia: bool = O.ROTOR,
             coulomb: str = typer.Option(None, "--coulomb", help="Coulomb coefficients per joint [N m | N], comma-separated (default 5% of RMS torque)"),
             viscous: str = typer.Option(None, "--viscous", help="viscous coefficients per joint [N m s/rad | N s/m], comma-separated"),
             offsets: str = typer.Option(None, "--offsets", help="torque offsets per joint [N m | N] (adds the offset term)"),
             tau_noise: str = typer.Option("0", "--tau-noise", help="torque noise std per joint [N m]"),
             encoder_counts: float = typer.Option(0.0, "--encoder-counts",
                                                  help="motor encoder counts per revolution (quantizes q; dq, ddq not written)"),
             derivatives: bool = typer.Option(True, "--derivatives/--no-derivatives", help="write dq, ddq columns"),
             jitter: float = typer.Option(0.0, "--jitter", help="random time-stamp jitter, fraction of the step"),
             currents: bool = typer.Option(False, "--currents", help="write motor currents i = tau_m / k_t instead of tau "
                                           "(tau_m = T^-T tau: tau / N without coupling)"),
             motor_side: bool = typer.Option(False, "--motor-side", help="write motor angles q_m = T q (dq, ddq likewise) "
                                             "and motor torques tau_m = T^-T tau, as a drive logs them"),
             joints: str = JOINTS, lock: str = LOCK,
             cycles: int = typer.Option(0, "--cycles", help="number the samples by cycle of this many equal parts"),
             friction_drift: str = typer.Option(None, "--friction-drift",
                                                help="R1,T1,R2,T2: friction coefficients decay from (1+R1+R2) x warm "
                                                     "to warm with time constants T1, T2 [s] (thesis eq. 5.4)"),
             since_cold: float = typer.Option(0.0, "--since-cold", help="the log's first sample is this long after "
                                              "the robot's cold start [s]: friction drift and --temperature start "
                                              "there (a warm log: the end of a test, e.g. 7200)"),
             temperature: str = typer.Option(None, "--temperature",
                                             help="AMBIENT,RISE,TAU: write temp1..tempn = AMBIENT + RISE (1 - e^(-t/TAU)) "
                                                  "[deg C, s]"),
             drive: str = typer.Option(None, "--drive", help="dc-motor | servo-current | servo-velocity: write motor "
                                       "currents i1..in and voltages (or servo commands) u1..un of the drive model "
                                       "(docs/voltage_identification.md); tau1..taun is the joint torque"),
             inductance: float = typer.Option(2e-3, "--inductance", help="--drive dc-motor: armature inductance L [H]"),
             dq_noise: str = typer.Option("0", "--dq-noise", help="--drive: velocity noise std per joint [rad/s | m/s]"),
             u_noise: str = typer.Option("0", "--u-noise", help="--drive: voltage noise std per joint [V]"),
             truth: Path = typer.Option(None, "--truth", help="--drive: write the drive constants and true base "
                                        "parameters to this JSON file"),
             thesis_friction: bool = typer.Option(None, "--thesis-friction/--no-thesis-friction",
                                                  help="the thesis' friction f1..f4 (Table H) drifting as Table 5.6; "
                                                       "default on for an er3a protocol file without friction "
                                                       "options (docs/thesis-chapter5.md)"),
             digits: int = typer.Option(None, "--digits", help="--experiment: round every value to this many "
                                        "significant digits (the seeds' ADAMS export: 7)"),
             joint_acceleration: float = typer.Option(None, "--joint-acceleration",
                                                      help="--experiment: joint acceleration [rad/s^2] (default "
                                                           "9.5493 as printed; 0.5236 = the '30 deg/s^2' reading)"),
             tables: bool = typer.Option(False, "--tables", help="--experiment: identify the bodies at the seeds' "
                                         "five instants and print the seeds' Tables 2-4 and multipliers beside ours")
             ) -> None:
    """Simulate a joint data log of ROBOT (or, with --experiment, write seed body data)."""
    import numpy as np

    from dynid.data.convert import write_stream
    from dynid.identify.model import FRICTION_MODELS, ModelOptions
    from dynid.simulate import Measurement

    r = load_selected(robot, joints, lock)
    if not (0 < rate < math.inf and 0 < duration < math.inf):
        raise DataError(f"--rate and --duration must be positive and finite, got {rate:g} Hz and {duration:g} s")
    if not 0 <= since_cold < math.inf:
        raise DataError(f"--since-cold {since_cold:g}: expected the seconds since the cold start, >= 0 and finite")
    if duration * rate > MAX_SAMPLES:
        raise DataError(f"--duration {duration:g} s at --rate {rate:g} Hz is {duration * rate:.3g} samples; at most "
                        f"{MAX_SAMPLES:.0e} are simulated in one run")
    if experiment is not None or body_data is not None:
        if experiment is None or body_data is None:
            raise DataError("--experiment and --body-data go together, e.g. --experiment seed-kr500 --body-data out.csv")
        from dynid.cli.seed_tables_cmd import run_experiment
        run_experiment(r, experiment, body_data, digits, joint_acceleration, tables)
        return
    if out is None:
        raise DataError("--out is required for a joint-space simulation")
    options = ModelOptions(friction=friction, rotor_inertia=rotor_inertia, offset=offsets is not None)
    if friction == "load-dependent":  # the load torque of the description's own inertials (model.py L1)
        from dynid.identify.model import full_parameters, load_parameters

        options = ModelOptions(friction=friction, rotor_inertia=rotor_inertia, offset=offsets is not None,
                               load_parameters=load_parameters(r, options, full_parameters(r, options)))
    timeline, sample = _trajectory(r, trajectory, duration, rate, seed)
    coefficients = None
    if thesis_friction is None:  # default: on for an er3a protocol log without friction options
        stages = timeline.stage
        thesis_friction = (stages is not None and "friction" in set(np.asarray(stages).astype(str))
                           and friction == "coulomb-viscous" and coulomb is None and viscous is None
                           and friction_drift is None and drive is None)
        from dynid.simulate.thesis_friction import applies_to
        thesis_friction = thesis_friction and applies_to(r)
    thesis_drift = None
    if thesis_friction:
        from dynid.simulate.thesis_friction import applies_to, thesis_drift as table_5_6_drift, thesis_friction as table_h
        if not applies_to(r):
            raise DataError(f"--thesis-friction: the thesis' values are for the er3a, not '{r.name}'")
        options = ModelOptions(friction="polynomial", rotor_inertia=rotor_inertia, offset=offsets is not None)
        coefficients = table_h()
        thesis_drift = table_5_6_drift() if friction_drift is None else None
    if coulomb is not None or viscous is not None:
        if options.friction != "coulomb-viscous":
            raise DataError("--coulomb/--viscous set the coulomb-viscous model; use --friction coulomb-viscous")
        coefficients = np.column_stack([_per_joint(coulomb or "0", r.n, "--coulomb"),
                                        _per_joint(viscous or "0", r.n, "--viscous")])
    if drive is not None:  # the drive model integrates its state over the whole log (in memory)
        t = timeline.times(0, timeline.count)
        if jitter > 0:
            t = t + np.random.default_rng(seed + 1).uniform(-0.5, 0.5, t.shape) * jitter * timeline.step
        _simulate_drive(r, drive, sample, t, coefficients, inductance, dq_noise, u_noise, seed, out, truth)
        return
    measurement = Measurement(tuple(_per_joint(tau_noise, r.n, "--tau-noise")), encoder_counts, derivatives)
    from dynid.simulate.drift import drift_options
    from dynid.simulate.stream import simulated_chunks
    drift, warmup = drift_options(friction_drift, temperature)
    chunks = simulated_chunks(r, timeline, sample, options, coefficients, _per_joint(offsets, r.n, "--offsets"),
                              measurement, seed, drift=thesis_drift or drift, jitter=jitter, cycles=cycles,
                              warmup=warmup, motor_side=motor_side, currents=currents, since_cold=since_cold)
    # one chunk in memory at a time (simulate/stream.py); a Parquet file records its robot
    # (docs/formats.md 'dynid' metadata: data.sources.check_sources refuses files of two robots in one fit)
    rows = write_stream(out, chunks, _file_metadata(r))
    console.print(f"wrote [bold]{out}[/] ({rows} samples, {options.friction} friction "
                  f"{FRICTION_MODELS[options.friction]}, rotor inertia {'on' if rotor_inertia else 'off'})")
    if thesis_friction:
        console.print("friction: the thesis' f1..f4 (Table H, Robot 2, Test 1, cycles 6-24)"
                      + (", drifting as Table 5.6 (cold = 1.8..9.6 x warm)" if thesis_drift is not None else ""))


def _file_metadata(r) -> dict:
    """The 'dynid' metadata of a simulated Parquet log (CSV has no place for it)."""
    return {"robot": r.name, "joints": r.joint_names, "source": "dynid simulate"}


def _simulate_drive(r, kind, sample, t, coefficients, inductance, dq_noise, u_noise, seed, out, truth_path) -> None:
    """--drive: the drive log (dynid.drives.experiment) of coulomb-viscous joint friction."""
    import json

    from dynid.data.io import atomic_write_text, write_columns
    from dynid.drives import DRIVE_KINDS
    from dynid.drives.experiment import drive_log

    if kind not in DRIVE_KINDS:
        raise DataError(f"--drive {kind}: expected one of {DRIVE_KINDS}")
    cols, truth = drive_log(r, kind, sample, t, coefficients, inductance, _per_joint(dq_noise, r.n, "--dq-noise"),
                            _per_joint(u_noise, r.n, "--u-noise"), seed=seed)
    write_columns(out, cols, _file_metadata(r))
    if truth_path is not None:
        atomic_write_text(truth_path, json.dumps(truth, indent=2) + "\n")
    console.print(f"wrote [bold]{out}[/] ({t.size} samples, {kind} drives, coulomb-viscous joint friction)")
