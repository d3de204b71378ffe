"""Nonsense that the readers accept, made from valid inputs by a seeded mutation (issue 18 section 3).

The fuzzing harness of ``fuzz_inputs`` checks that malformed files end in dynid's own error; this
one checks the inputs that are well-formed but cannot be right or are almost surely wrong. Each
kind names what it feeds (a joint data log, a validation, a result, a robot file, an option, body
data) and the outcome it must have:

- ``refused``: a ``DynidError`` (one error line in the CLI);
- ``warned``: the work is done and a ``DynidWarning`` names the likely cause;
- ``right``: the input is read correctly anyway (result parameters listed in another order).

``run(kind, seed, ctx)`` returns the outcome observed: one of those, ``silent`` (a confident number
from nonsense: the defect this harness looks for) or ``other: ...`` (an unexpected exception).
Everything is seeded. ``Context`` holds the valid inputs (an er3a log, a validation log, the
result identified on the first, a body data file): tests/test_plausibility_fuzz.py and
bench/fuzz.py --plausibility build it once.
"""

from __future__ import annotations

import json
import math
import random
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dynid.errors import DynidError, DynidWarning

ROBOT = "er3a"


@dataclass
class Context:
    directory: Path
    log: Path  # a valid er3a log (simulated, 10 s at 100 Hz, torque noise)
    validation: Path  # another one (other seed)
    result: dict  # identify's result.json of ``log`` (OLS)
    body: Path | None = None  # KR500 seed body data (for the body kinds)


def make_context(directory: Path, body: bool = True) -> Context:
    """Simulate the logs, identify the result, write the body data (a few seconds)."""
    from typer.testing import CliRunner

    from dynid.cli.main import app

    runner = CliRunner()
    d = Path(directory)
    for name, seed in (("log.csv", 0), ("val.csv", 7)):
        res = runner.invoke(app, ["simulate", "-r", ROBOT, "--out", str(d / name), "--duration", "10", "--rate", "100",
                                  "--tau-noise", "0.05", "--seed", str(seed)])
        assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["identify", "-r", ROBOT, "--data", str(d / "log.csv"), "--out", str(d / "r.json")])
    assert res.exit_code == 0, res.output
    body_path = None
    if body:
        from dynid.multibody.experiment import write_experiment_body_data
        from dynid.robot import load_robot

        body_path = d / "kr500_body.csv"
        write_experiment_body_data(load_robot("kr500"), "seed-kr500", body_path)
    return Context(d, d / "log.csv", d / "val.csv", json.loads((d / "r.json").read_text()), body_path)


# -- reading and writing logs ------------------------------------------------------------------

def read_columns(path: Path) -> dict[str, np.ndarray]:
    import pyarrow.csv as pacsv

    table = pacsv.read_csv(path)
    return {k: table.column(k).to_numpy().astype(float) for k in table.column_names}


def write_columns(path: Path, cols: dict[str, np.ndarray]) -> Path:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    pacsv.write_csv(pa.table({k: np.asarray(v, dtype=float) for k, v in cols.items()}), path)
    return path


def _joints(cols) -> int:
    return sum(1 for k in cols if k.startswith("q") and k[1:].isdigit())


# -- log kinds: read by the joint data reader (load_joint_data and the streaming reader) ---------

def absurd_sample(rng, cols):
    """One sample of q, dq, ddq or tau of absurd size (1e9 .. 1e308): a corrupt sample."""
    n = _joints(cols)
    key = rng.choice(["q", "dq", "ddq", "tau"]) + str(rng.randint(1, n))
    cols[key] = cols[key].copy()
    cols[key][rng.randrange(cols["t"].size)] = rng.choice([-1, 1]) * 10.0 ** rng.uniform(9.5, 308)
    return cols, "refused"


def degrees(rng, cols):
    """Revolute positions (and logged velocities, accelerations) in degrees, read as radians."""
    for k in list(cols):
        if k.rstrip("0123456789") in ("q", "dq", "ddq"):
            cols[k] = np.degrees(cols[k])
    return cols, "warned"


def time_unit(rng, cols):
    """Time in ms or us, read as s (velocities 1e3 or 1e6 times too small)."""
    cols["t"] = cols["t"] * rng.choice([1e3, 1e6])
    return cols, "warned"


def extra_joints(rng, cols):
    """Columns of one or more joints the robot does not have (a log of a larger robot)."""
    n = _joints(cols)
    for j in range(n + 1, n + 1 + rng.randint(1, 3)):
        for prefix in rng.sample(["q", "dq", "tau", "i"], rng.randint(1, 3)):
            cols[f"{prefix}{j}"] = cols[f"{prefix if prefix != 'i' else 'tau'}1"]
    return cols, "warned"


def spike(rng, cols):
    """One position sample far off (but finite): a corrupt sample that the filter would smear."""
    n = _joints(cols)
    key = f"q{rng.randint(1, n)}"
    cols[key] = cols[key].copy()
    k = rng.randrange(5, cols["t"].size - 5)
    cols[key][k] += rng.choice([-1, 1]) * rng.uniform(0.5, 1e6)
    return cols, "warned"


def wrapped(rng, cols):
    """A revolute joint's angle wrapped to (-pi, pi] while the joint moves across +-pi: the readers
    make it continuous again (data/angles.py), so it is read right."""
    n = _joints(cols)
    j = rng.randint(1, n)
    q = cols[f"q{j}"]
    shift = math.pi - float(np.median(q))  # the motion now crosses +pi about half of the time
    cols[f"q{j}"] = np.angle(np.exp(1j * (q + shift)))
    return cols, "right"


def _continuous(q: np.ndarray, cols) -> str:
    """"right" when every angle read is numpy's unwrapping of the logged one (numpy.unwrap, an
    implementation of its own) up to whole turns, else "wrong"."""
    for j in range(q.shape[1]):
        off = q[:, j] - np.unwrap(np.asarray(cols[f"q{j + 1}"], dtype=float))
        if not np.allclose(off, 2.0 * np.pi * np.round(off[0] / (2.0 * np.pi)), rtol=0.0, atol=1e-9):
            return "wrong"
    return "right"


def filled_gap(rng, cols):
    """A gap of 20-100 s filled with samples interpolated linearly at the log's rate."""
    t = cols["t"]
    dt = float(np.median(np.diff(t)))
    k = rng.randrange(t.size // 4, 3 * t.size // 4)
    count = int(rng.uniform(20.0, 100.0) / dt)
    out = {}
    for key, v in cols.items():
        if key == "t":
            out[key] = np.concatenate([v[:k], v[k - 1] + dt * np.arange(1, count + 1), v[k:] + dt * count])
        else:
            fill = v[k - 1] + (v[k] - v[k - 1]) * np.arange(1, count + 1) / (count + 1)
            out[key] = np.concatenate([v[:k], fill, v[k:]])
    return out, "warned"


def constant_torque(rng, cols):
    """A torque column that holds one number in every sample (a placeholder: 0, or a constant)."""
    j = rng.randint(1, _joints(cols))
    cols[f"tau{j}"] = np.full(cols["t"].size, rng.choice([0.0, rng.uniform(-50, 50)]))
    return cols, "warned"


def velocity_column(rng, cols):
    """A logged velocity column in deg/s (positions in rad), motor side (x gear), or of the other sign."""
    j = rng.randint(1, _joints(cols))
    cols[f"dq{j}"] = cols[f"dq{j}"] * rng.choice([180 / math.pi, -1.0, 100.0, 0.01])
    return cols, "warned"


LOG_KINDS = {"absurd-sample": absurd_sample, "degrees": degrees, "time-unit": time_unit,
             "extra-joints": extra_joints, "spike": spike, "wrapped-angle": wrapped, "filled-gap": filled_gap,
             "constant-torque": constant_torque, "velocity-column": velocity_column}


# -- validation kinds: a result's model on a log whose torques cannot be its robot's --------------

def swapped_torques(rng, cols):
    """Two torque columns swapped, of joints whose torques differ in size (RMS ratio >= 3: a swap of
    two joints of the same torque size cannot be told from the log alone)."""
    n = _joints(cols)
    rms = {j: float(np.sqrt(np.mean(cols[f"tau{j}"] ** 2))) for j in range(1, n + 1)}
    pairs = [(a, b) for a in rms for b in rms if a < b and max(rms[a], rms[b]) >= 3 * min(rms[a], rms[b])]
    a, b = rng.choice(pairs)
    cols[f"tau{a}"], cols[f"tau{b}"] = cols[f"tau{b}"], cols[f"tau{a}"]
    return cols, "warned"


def foreign_torques(rng, cols):
    """The torques of a robot 10 to 1000 times larger or smaller (another robot's log)."""
    scale = rng.uniform(10, 1000) ** rng.choice([-1, 1])
    for j in range(1, _joints(cols) + 1):
        cols[f"tau{j}"] = cols[f"tau{j}"] * scale
    return cols, "warned"


def negated_torques(rng, cols):
    """Every torque of opposite sign (a driver that logs the reaction torque, without --negate)."""
    for j in range(1, _joints(cols) + 1):
        cols[f"tau{j}"] = -cols[f"tau{j}"]
    return cols, "warned"


def torque_scale(rng, cols):
    """Torques of opposite sign, or in mN m, or in kN m (identified as they are)."""
    factor = rng.choice([-1.0, 1e3, 1e-3, -1e3])
    for j in range(1, _joints(cols) + 1):
        cols[f"tau{j}"] = cols[f"tau{j}"] * factor
    return cols, "warned"


def one_negated_torque(rng, cols):
    """One joint's torque logged with the other sign (joints 1-5 of the er3a: the description
    predicts most of their torque; joint 6's is mostly friction and noise)."""
    j = rng.randint(1, 5)
    cols[f"tau{j}"] = -cols[f"tau{j}"]
    return cols, "warned"


VALIDATE_KINDS = {"swapped-torques": swapped_torques, "foreign-torques": foreign_torques,
                  "negated-torques": negated_torques}


# -- result kinds: an edited or damaged result.json given to predict -----------------------------

def swapped_entries(rng, result):
    """Two base parameter entries exchanged (name and value move together): read by name, right."""
    params = result["base_parameters"]
    a, b = rng.sample(range(len(params)), 2)
    params[a], params[b] = params[b], params[a]
    return result, "right"


def bad_value(rng, result):
    """A parameter value NaN, null, +-inf, a string, or of absurd size (1e13 .. 1e308)."""
    p = rng.choice(result["base_parameters"])
    p["value"] = rng.choice([float("nan"), None, float("inf"), -float("inf"), "1.0",
                             rng.choice([-1, 1]) * 10.0 ** rng.uniform(13, 308)])
    return result, "refused"


def renamed_entry(rng, result):
    """A parameter renamed, duplicated or removed: the values no longer match the base definition."""
    params = result["base_parameters"]
    k = rng.randrange(len(params))
    action = rng.choice(["rename", "duplicate", "remove-and-add"])
    if action == "rename":
        params[k]["name"] = params[k]["name"] + "x"
    elif action == "duplicate":
        params[(k + 1) % len(params)]["name"] = params[k]["name"]
    else:
        params[k] = dict(params[k], name="m99")
    return result, "refused"


def other_robot(rng, result):
    """A result identified on another robot with the same joint count (identity mismatch)."""
    result["robot_identity"] = dict(result["robot_identity"], name="planar6",
                                    kinematics=rng.choice(["0" * 64, "f" * 64]))
    return result, "refused"


RESULT_KINDS = {"swapped-entries": swapped_entries, "bad-value": bad_value, "renamed-entry": renamed_entry,
                "other-robot": other_robot}


# -- robot file kinds ------------------------------------------------------------------------------

def _urdf() -> str:
    from fuzz_inputs import URDF
    return URDF


def _yaml() -> str:
    from fuzz_inputs import YAML
    return YAML


def duplicate_element(rng):
    """A URDF <link> or <joint> element repeated under one name (the later one would win)."""
    text = _urdf()
    if rng.random() < 0.5:
        text = text.replace('<joint name="j1"', '<link name="l%d"/>\n  <joint name="j1"' % rng.randint(1, 2), 1)
    else:
        text = text.replace('<joint name="j2"', '<joint name="j1"', 1)
    return ".urdf", text, "refused"


def missing_convention(rng):
    """A DH/MDH table without its 'convention' (read as MDH)."""
    return ".yaml", _yaml().replace("convention: mdh\n", ""), "warned"


def limits_in_degrees(rng):
    """Revolute position limits in degrees (beyond two turns), in a URDF or a YAML table."""
    lo, hi = -rng.uniform(30, 360), rng.uniform(30, 360)
    if rng.random() < 0.5:
        return ".urdf", _urdf().replace('lower="-2.9" upper="2.9"', f'lower="{lo:.4g}" upper="{hi:.4g}"'), "warned"
    return ".yaml", _yaml().replace("q_min: -2.9, q_max: 2.9", f"q_min: {lo:.4g}, q_max: {hi:.4g}"), "warned"


def negative_limit(rng):
    """A negative speed, acceleration or torque limit (a frozen joint that 'respects limits')."""
    key, old = rng.choice([("dq_max", "2.2"), ("ddq_max", "15.0"), ("tau_max", "87.0")])
    return ".yaml", _yaml().replace(f"{key}: {old}", f"{key}: {-rng.uniform(0.1, 100):.4g}"), "refused"


def millimetres(rng):
    """A link length (DH a or d, URDF joint origin) in mm, or gravity in mm/s^2."""
    what = rng.choice(["yaml-length", "urdf-length", "gravity"])
    if what == "yaml-length":
        return ".yaml", _yaml().replace("a: 0.4,", f"a: {rng.choice([400, 250, 1200])},"), "warned"
    if what == "urdf-length":
        return ".urdf", _urdf().replace('<origin xyz="0.4 0 0"', f'<origin xyz="{rng.choice([400, 250, 1200])} 0 0"'), \
            "warned"
    return ".yaml", _yaml().replace("gravity: [0.0, 0.0, -9.81]", "gravity: [0.0, 0.0, -9810.0]"), "warned"


ROBOT_KINDS = {"duplicate-element": duplicate_element, "missing-convention": missing_convention,
               "limits-in-degrees": limits_in_degrees, "negative-limit": negative_limit,
               "millimetres": millimetres}


# -- option kinds ------------------------------------------------------------------------------------

def bad_option(rng):
    """An option of ``cli.option_checks.RULES`` given a value outside its range (negative, zero,
    NaN, inf, beyond the top), alone or in a per-joint list."""
    from dynid.cli.option_checks import RULES

    option = rng.choice(sorted(RULES))
    rule = RULES[option]
    if rule.choices:  # a word option: any other word
        return option, rng.choice(["keep", "", "DROP", "0", "none", "auto"]), "refused"
    candidates = [float("nan")]
    if rule.finite:
        candidates.append(rng.choice([float("inf"), -float("inf")]))
    if rule.low is not None:
        candidates.append(rule.low - rng.uniform(1e-3, 10.0) if not rule.open_low else rule.low)
    if rule.high is not None:
        candidates.append(rule.high + rng.uniform(0.0, 10.0) if not rule.open_high else rule.high)
    if rule.nonzero:
        candidates.append(0.0)
    value = rng.choice(candidates)
    if rule.per_joint:
        value = ",".join([repr(value)] + [repr(abs(rng.uniform(0.1, 2)))] * rng.randint(0, 5))
    return option, value, "refused"


def _identify(robot, path):
    """identify's streaming path (OLS) on ``path``, through build_result (where the fit is judged)."""
    from dynid.identify.base import base_parameters
    from dynid.identify.model import ModelOptions
    from dynid.identify.pipeline import accumulate_sources, make_estimator
    from dynid.identify.result import build_result

    options = ModelOptions()
    base = base_parameters(robot, options)
    acc = accumulate_sources(robot, [path], options, base, workers=1)
    est = make_estimator("ols", robot, options, base).fit_normal_equations(acc.ne)
    return build_result(ROBOT, robot, options, base, est, acc.ne, _prep(), _mapping(), acc.samples, [], str(path))


def _prep():
    from dynid.data.preprocess import Preprocessing
    return Preprocessing()


def _mapping():
    from dynid.data.columns import ColumnMapping
    return ColumnMapping()


# -- running a case ----------------------------------------------------------------------------------

def _outcome(call) -> str:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            value = call()
        except DynidError:
            return "refused"
        except Exception as exc:  # noqa: BLE001 - what the harness looks for
            return f"other: {type(exc).__name__}: {str(exc)[:160]}"
    if value == "right":
        return "right"
    return "warned" if any(issubclass(w.category, DynidWarning) for w in seen) else "silent"


KIND_GROUPS = {"log": LOG_KINDS, "validate": VALIDATE_KINDS, "identify": {"torque-scale": torque_scale, "one-negated-torque": one_negated_torque}, "result": RESULT_KINDS, "robot": ROBOT_KINDS,
               "option": {"bad-option": bad_option}, "body": {"other-robot-body": None}}
KINDS = {name: group for group, kinds in KIND_GROUPS.items() for name in kinds}


def run(kind: str, seed: int, ctx: Context) -> tuple[str, str]:
    """(expected, observed) outcome of case ``seed`` of ``kind`` (module docstring)."""
    import dynid

    rng = random.Random(f"{kind}-{seed}")
    group = KINDS[kind]
    robot = dynid.load_robot(ROBOT)
    case_path = ctx.directory / f"case-{kind}-{seed}"
    if group in ("log", "validate", "identify"):
        source = ctx.log if group != "validate" else ctx.validation
        cols, expected = KIND_GROUPS[group][kind](rng, read_columns(source))
        path = write_columns(case_path.with_suffix(".csv"), cols)
        if group == "log":
            from dynid.data.io import load_joint_data
            from dynid.data.stream import raw_chunks

            reader = rng.choice(["whole", "stream"])
            rows = rng.choice([97, 400, 5000])

            def read():
                if reader == "whole":
                    return load_joint_data(path, robot)
                return [c for c in raw_chunks(path, robot, chunk_rows=rows)]

            def read_q():  # the angles read, every chunk's rows in order
                data = read()
                return data.q if reader == "whole" else np.vstack([c.q for c in data if len(c)])
            observed = _outcome(read if expected != "right" else lambda: _continuous(read_q(), cols))
        elif group == "validate":
            from dynid.identify.prediction import validate_sources
            observed = _outcome(lambda: validate_sources(robot, ctx.result, [path]))
        else:
            observed = _outcome(lambda: _identify(robot, path))
        path.unlink()
        return expected, observed
    if group == "result":
        from dynid.identify.prediction import predict_file
        from dynid.identify.result import load_result
        from dynid.identify.result_schema import check_result

        result, expected = RESULT_KINDS[kind](rng, json.loads(json.dumps(ctx.result)))
        path = case_path.with_suffix(".json")
        path.write_text(json.dumps(result))

        def predict():
            edited = load_result(path, robot)
            ours = predict_file(robot, edited, ctx.validation)["tau_hat"]
            truth = predict_file(robot, check_result(ctx.result, "r"), ctx.validation)["tau_hat"]
            return "right" if np.allclose(ours, truth, rtol=1e-12, atol=1e-12) else "wrong"

        observed = _outcome(predict)
        path.unlink()
        return expected, observed
    if group == "robot":
        suffix, text, expected = ROBOT_KINDS[kind](rng)
        path = case_path.with_suffix(suffix)
        path.write_text(text)
        observed = _outcome(lambda: dynid.load_robot(str(path)))
        path.unlink()
        return expected, observed
    if group == "option":
        from dynid.cli.option_checks import check_value

        option, value, expected = bad_option(rng)
        return expected, _outcome(lambda: check_value(option, value))
    # body data of the KR500 identified with another robot of six bodies
    from dynid.multibody.bodydata import read_body_data
    from dynid.multibody.coordinates import angular_form
    from dynid.multibody.identification import identify

    other = dynid.load_robot(rng.choice(["er3a", "planar6"]))
    data = read_body_data(ctx.body)
    return "refused", _outcome(lambda: identify(other, data, angular_form(rng.choice(["cardan", "quaternion"]))))
