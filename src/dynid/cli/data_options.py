"""Command-line options shared by identify, predict, validate: data layout, preprocessing, model."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:  # imported where used: the CLI starts without SciPy (dynid.cli.main)
    from dynid.data.columns import ColumnMapping
    from dynid.data.preprocess import Preprocessing
    from dynid.identify.model import ModelOptions

RENAME = typer.Option(None, "--rename", help="foreign=contract column names, e.g. 'time=t,pos1=q1,cur1=i1'")
COLUMNS = typer.Option(None, "--columns", help="column names of a headerless CSV, in file order, e.g. 't,q1,q2,tau1,tau2'")
TIME_UNIT = typer.Option("s", "--time-unit", help="unit of the time column: s, ms, us or ns")
DEGREES = typer.Option(False, "--degrees", help="positions/velocities/accelerations of revolute joints are in degrees")
MOTOR_SIDE = typer.Option(False, "--motor-side", help="q, dq, ddq and tau are motor side (gear ratios of the robot apply)")
CURRENT_GAIN = typer.Option(None, "--current-gain",
                            help="tau = K i from currents i1..in: K per joint (N m/A, comma-separated), 'drive' "
                            "or the JSON of 'dynid drives gains'")
FORCE_ROBOT = typer.Option(False, "--force", help="use the result even if it was identified on another robot "
                                                    "(the mismatch is printed as a warning)")
NEGATE = typer.Option(None, "--negate", help="logged signals of opposite sign: 'tau' (all joints), 'tau2,tau5', 'q3'")
IGNORE = typer.Option(None, "--ignore", help="logged signals not to use: 'dq' (and 'ddq'): estimated from q instead, "
                      "e.g. a driver's lagging velocity estimate")
TOPIC = typer.Option(None, "--topic", help="ROS bags: the sensor_msgs/JointState topic (default /joint_states)")
STAMP = typer.Option("header", "--stamp", help="ROS bags: time from the messages' 'header' stamps or the recorder's "
                     "'receive' times")
CHUNK_ROWS = typer.Option(50_000, "--chunk-rows", help="rows read at a time (bounded memory; the figures do not "
                          "depend on it)")
TIME_RANGE = typer.Option(None, "--time-range", help="read only this part of each log: FIRST:LAST seconds of its time "
                          "column (after --time-unit), e.g. '10:60', '10:' or ':60'")
ROWS = typer.Option(None, "--rows", help="read only these data rows of each log: FIRST:LAST, numbered from 1 as "
                    "error messages name them, both kept (e.g. '1001:50000')")
NAN = typer.Option("drop", "--nan", help="rows with NaN/empty fields: drop (noted) or reject")

LOWPASS = typer.Option(None, "--lowpass", help="zero-phase Butterworth cutoff [Hz] before differentiation, or "
                       "'auto': chosen by blocked cross-validation of the log (the default; a log too short for "
                       "the folds then keeps min(20, fs/10)); 0 = off")
FILTER_TORQUE = typer.Option(None, "--filter-torque/--no-filter-torque", help="low-pass the torque with the same "
                             "filter as the positions (Gautier's parallel filtering); default: chosen by --lowpass "
                             "auto's cross-validation (off with a fixed --lowpass)")
CV_FOLDS = typer.Option(5, "--cv-folds", help="--lowpass auto: contiguous time folds of the cross-validation")
EXCITATION = typer.Option(None, "--excitation", help="--lowpass auto: the excitation trajectory of the log "
                          "(dynid excite JSON or builtin name); its highest harmonic narrows the cutoff grid")
DERIVATIVE = typer.Option("central", "--derivative", help="central (time-aware differences) or savgol")
RESAMPLE = typer.Option(None, "--resample", help="resample to this rate [Hz] (irregular logs are always resampled)")
DECIMATE = typer.Option(1, "--decimate", help="parallel filtering and decimation factor (Gautier)")
MIN_VELOCITY = typer.Option(0.0, "--min-velocity", help="leave out samples of joints slower than this (rad/s)")
SEGMENTS = typer.Option("gaps", "--segments", help="gaps: split a log at gaps and 'segment' labels; auto: also where "
                        "its time restarts (each segment filtered and differentiated alone)")
MAX_GAP = typer.Option(5.0, "--max-gap", help="a time step longer than this multiple of the median step splits the "
                       "log into segments; shorter irregular steps are resampled")
BRIDGE_GAP = typer.Option("auto", "--bridge-gap", help="steps up to this long [s] never split a log (dropped "
                          "cycles of a real-time controller): they are resampled inside the segment; auto: "
                          "0.0396 s Hz / the motion's bandwidth measured on the log, within 0.02-0.1 s")
_TAU_DELAY_HELP = ("the logged torque lags the positions by this much [s] (a driver's filter): tau is moved earlier "
                   "by whole samples before fitting and scoring")
TAU_DELAY = typer.Option(0.0, "--tau-delay", "--delay", help=_TAU_DELAY_HELP)
TAU_DELAY_AUTO = typer.Option("auto", "--tau-delay", "--delay", help=_TAU_DELAY_HELP + "; auto: the shift (up to 0.25 s "
                              "either way) that held-out folds prefer over none by more than one standard error")
REST = typer.Option("auto", "--rest", help="auto: find where each joint stands still from its raw positions (within "
                    "8 x their noise, measured on the log, over 0.05 s): velocity 0 there (no Coulomb torque of a "
                    "random sign), each rest's held torque a level of its own in the fit; off: the filtered velocity "
                    "everywhere")
STILL_RANGE = typer.Option(0.05, "--still-range", help="a joint moving less than this [rad; a tenth in m] is held "
                           "still: what its motion excites keeps the robot description's values (0 = off)")
DATA = typer.Option(..., "--data", "-d", help="joint data file (CSV or Parquet) or ROS bag (.bag, .db3, .mcap, "
                    "ROS 2 bag directory); repeatable; a quoted glob ('logs/*.csv') or a directory of Parquet files")

FRICTION = typer.Option("coulomb-viscous", "--friction", help="none | coulomb-viscous | polynomial | asymmetric")
IDENTIFY_FRICTION = typer.Option("coulomb-viscous", "--friction", help="none | coulomb-viscous | polynomial | asymmetric"
                                 " | stribeck (its Stribeck velocity fitted per joint) | load-dependent (Coulomb "
                                 "growing with the transmitted torque) | auto (coulomb-viscous, load-dependent, "
                                 "polynomial or stribeck, by held-out error)")
FRICTION_DRIFT = typer.Option(None, "--friction-drift", help="time | temperature: friction coefficients that drift "
                              "from cold to warm with the time since the robot's cold start (thesis eq. 5.4: a slow "
                              "and a fast time constant per joint) or with the temperatures temp1..tempn, identified "
                              "with the rest (docs/identification.md)")
SINCE_COLD = typer.Option(None, "--since-cold", help="a model with --friction-drift time: seconds since the robot's "
                          "cold start at each log's first sample (0 = the log starts cold), or 'warm'; default: the "
                          "log's since_cold column, else what identify used for a training log (identify: 0)")
OFFSET = typer.Option(False, "--offset/--no-offset", help="per-joint torque offset")
ROTOR = typer.Option(True, "--rotor-inertia/--no-rotor-inertia", help="rotor inertia I_a ddq per joint")
SMOOTH_SIGN = typer.Option(0.0, "--smooth-sign", help="velocity scale of a tanh sign in the friction model [rad/s | m/s] (0 = sign)")


def lowpass_from(text: str | None) -> float | str | None:
    """--lowpass text: None (default: auto with fallback), 'auto' or a cutoff [Hz]."""
    if text is None or text.strip().lower() == "auto":
        return None if text is None else "auto"
    try:
        return float(text)
    except ValueError:
        from dynid.errors import DataError
        raise DataError(f"--lowpass: expected a cutoff in Hz, 0 (off) or 'auto', got '{text}'") from None


def seconds_or_auto(text: str | None, option: str, what: str) -> float | str:
    """Text of an option measured on the log by default (``--bridge-gap``: from the motion's
    bandwidth, data/segments.py S2; ``--tau-delay``: identify/delay_selection.py): 'auto' or
    ``what`` in seconds."""
    if text is None or str(text).strip().lower() == "auto":
        return "auto"
    try:
        return float(text)
    except ValueError:
        from dynid.errors import DataError
        raise DataError(f"{option}: expected {what} in seconds or 'auto', got '{text}'") from None


def rest_from(text: str) -> bool:
    """--rest text: True for auto (rest detection, data/rest.py), False for off."""
    value = (text or "").strip().lower()
    if value not in ("auto", "off"):
        from dynid.errors import DataError
        raise DataError(f"--rest: expected 'auto' or 'off', got '{text}'")
    return value == "auto"


def mapping_from(rename, columns, time_unit, degrees, motor_side, current_gain, negate=None,
                 ignore=None, topic=None, stamp="header", time_range=None, rows=None) -> ColumnMapping:
    from dynid.data.columns import ColumnMapping
    return ColumnMapping.from_options(rename, columns, time_unit, degrees, motor_side, current_gain, negate, ignore,
                                      topic, stamp, time_range, rows)


def with_part(mapping: ColumnMapping, time_range, rows) -> ColumnMapping:
    """``mapping`` (e.g. a result's) reading only --time-range / --rows of each log."""
    from dataclasses import replace

    from dynid.data.columns import parse_range
    return replace(mapping, time_range=parse_range(time_range, "--time-range", float),
                   rows=parse_range(rows, "--rows", int))


def preprocessing_from(lowpass, derivative, resample, decimate, min_velocity, segments="gaps",
                       max_gap=5.0, tau_delay=0.0, bridge_gap=0.02, filter_torque=False) -> Preprocessing:
    from dynid.data.preprocess import Preprocessing
    return Preprocessing(lowpass_hz=lowpass, derivative=derivative, resample_hz=resample, decimate=decimate,
                         min_velocity=min_velocity, segments=segments, max_gap=max_gap, tau_delay=tau_delay,
                         bridge_gap=bridge_gap, filter_torque=bool(filter_torque))


FIXED_FRICTION = ("none", "coulomb-viscous", "polynomial", "asymmetric")  # columns that need nothing fitted first
FITTED_FRICTION = {  # what identify fits to a log before the friction columns exist (identify.stribeck)
    "stribeck": "its Stribeck velocity per joint is fitted to a log by dynid identify --friction stribeck",
    "load-dependent": "its load torque comes from inertial parameters fitted to a log by dynid identify "
                      "--friction load-dependent",
    "auto": "the model is chosen by held-out error on a log by dynid identify --friction auto",
}


def model_from(friction, rotor_inertia, offset, smooth_sign, command: str | None = None) -> ModelOptions:
    """The model of the options. ``command``: the name of a command that takes the friction model
    as it is (base-params, drives gains): a model identify fits or chooses from a log
    (``FITTED_FRICTION``), or an unknown one, is one error line naming the option, why and what the
    command supports (not the columns' ModelError about missing Stribeck velocities or load
    parameters)."""
    from dynid.identify.model import ModelOptions

    if command is not None and friction not in FIXED_FRICTION:
        why = FITTED_FRICTION.get(friction, "unknown friction model")
        from dynid.errors import DataError
        raise DataError(f"--friction {friction}: {command} cannot fit that friction model ({why}); it supports "
                        f"{', '.join(FIXED_FRICTION[:-1])} or {FIXED_FRICTION[-1]}")
    return ModelOptions(friction=friction, rotor_inertia=rotor_inertia, offset=offset, smooth_sign=smooth_sign)
