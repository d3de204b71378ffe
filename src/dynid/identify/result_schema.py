"""Checking a result.json before anything uses it: its shape, and the robot it belongs to.

``check_result`` refuses, with the file and the field named, a document that is not an object,
lacks a field, holds a field of the wrong type, arrays of the wrong length (base parameters vs
the base definition K vs the robot's parameter count), non-finite parameter values or values
beyond ``PARAMETER_ABSURD`` (1e308 overflowed every torque to inf). ``result.result_model`` matches
values to base parameters by name.
``check_result_robot`` compares the robot identity stored in the result (``robot/identity.py``)
with the robot given on the command line: a mismatch is an error unless ``force`` (then a
warning). Results written before identities existed load with a warning.
"""

from __future__ import annotations

import math
import warnings

from dynid.errors import DataError, DynidWarning

PARAMETER_ABSURD = 1e12  # |base parameter| [SI] beyond any robot's (a 500 t body 50 m away: ~1e9 kg m^2)


def _fail(source: str, text: str):
    raise DataError(f"{source}: {text}; expected a result.json written by 'dynid identify'")


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _list_of_lists(value, rows: int, cols: int) -> bool:
    return (isinstance(value, list) and len(value) == rows
            and all(isinstance(r, list) and len(r) == cols and all(_number(x) for x in r) for r in value))


def check_result(result, source: str) -> dict:
    """``result`` when its fields have the types and sizes ``predict`` relies on (DataError otherwise)."""
    from dynid.identify.model import FRICTION_MODELS

    if not isinstance(result, dict):
        _fail(source, f"the document is {type(result).__name__}, not an object")
    for key, kind in (("n", int), ("model", dict), ("preprocessing", dict), ("base", dict),
                      ("base_parameters", list)):
        if key not in result:
            _fail(source, f"field '{key}' missing")
        if not isinstance(result[key], kind) or isinstance(result[key], bool):
            _fail(source, f"field '{key}' is {type(result[key]).__name__}, expected {kind.__name__}")
    n = result["n"]
    if n < 1:
        _fail(source, f"field 'n' is {n}, expected a positive number of joints")
    model, base, params = result["model"], result["base"], result["base_parameters"]
    if "drive" in result:  # acceleration-free results keep their own layout (drives/)
        return result
    friction = model.get("friction", "coulomb-viscous")
    if friction not in FRICTION_MODELS:
        _fail(source, f"model.friction '{friction}' unknown")
    velocity = model.get("stribeck_velocity")
    if friction == "stribeck" and not (isinstance(velocity, list) and len(velocity) == n
                                       and all(_number(v) and v > 0 for v in velocity)):
        _fail(source, f"model.stribeck_velocity is {velocity!r}, expected {n} positive velocities (friction 'stribeck')")
    bodies = result.get("n_bodies", n)  # moving bodies: more than n with mimic joints (docs/formats.md)
    if not isinstance(bodies, int) or isinstance(bodies, bool) or bodies < n:
        _fail(source, f"field 'n_bodies' is {bodies!r}, expected a number of moving bodies >= n = {n}")
    load = model.get("load_parameters")
    size = 10 * bodies + (n if model.get("rotor_inertia", True) else 0)
    if friction == "load-dependent" and not (isinstance(load, list) and len(load) == size
                                             and all(_number(v) and math.isfinite(v) for v in load)):
        _fail(source, f"model.load_parameters is {'a list of ' + str(len(load)) if isinstance(load, list) else repr(load)}"
                      f", expected {size} finite inertial parameters (friction 'load-dependent')")
    p = 10 * bodies + n * (len(FRICTION_MODELS[friction]) + int(bool(model.get("rotor_inertia", True)))
                           + int(bool(model.get("offset", False))))
    b = len(params)
    for p_entry in params:
        if not isinstance(p_entry, dict) or not isinstance(p_entry.get("name"), str):
            _fail(source, "base_parameters must be objects with a 'name' and a 'value'")
        value = p_entry.get("value")
        if not _number(value) or not math.isfinite(value) or abs(value) > PARAMETER_ABSURD:
            raise DataError(f"{source}: base parameter '{p_entry['name']}' has value {value!r}; expected a finite "
                            f"number of a robot's size (|value| <= {PARAMETER_ABSURD:.0e} in SI units; the result "
                            "is damaged or was edited)")
    if not _list_of_lists(base.get("K"), b, p):
        _fail(source, f"base.K must be {b} rows (one per base parameter) of {p} numbers (n = {n}, "
                      f"friction {friction})")
    independent = base.get("independent")
    if not (isinstance(independent, list) and len(independent) == b
            and all(isinstance(k, int) and not isinstance(k, bool) and 0 <= k < p for k in independent)):
        _fail(source, f"base.independent must be {b} column indices below {p}")
    for key, size in (("names", b), ("combinations", b), ("standard_names", p)):
        if not (isinstance(base.get(key), list) and len(base[key]) == size):
            _fail(source, f"base.{key} must be a list of {size} entries")
    if base.get("rank") != b:
        _fail(source, f"base.rank is {base.get('rank')!r}, expected {b} (the number of base parameters)")
    if "standard_parameters" in result:
        std = result["standard_parameters"]
        if not (isinstance(std, list) and len(std) == p and all(
                isinstance(e, dict) and _number(e.get("value")) and math.isfinite(e["value"])
                and abs(e["value"]) <= PARAMETER_ABSURD for e in std)):
            _fail(source, f"standard_parameters must be {p} objects with finite values")
    return result


def check_result_robot(result: dict, robot, source: str, force: bool = False) -> list[str]:
    """Refuse a result identified on another robot (DataError), or with ``force`` warn and return
    the differences; a result without an identity (older dynid) warns."""
    from dynid.robot.identity import identity_differences

    stored = result.get("robot_identity")
    if not isinstance(stored, dict):
        named = result.get("robot_name")
        if isinstance(named, str) and named != robot.name and not force:
            raise DataError(f"{source} was identified on robot '{named}', not '{robot.name}'; "
                            "give the robot it was identified on (or --force to use it anyway)")
        warnings.warn(DynidWarning(f"{source} carries no robot identity (written by an older dynid): "
                                   f"cannot check that it belongs to '{robot.name}'"), stacklevel=2)
        return [] if not isinstance(named, str) or named == robot.name else [f"robot name '{named}'"]
    differences = identity_differences(stored, robot)
    if differences and not force:
        raise DataError(f"{source} was identified on another robot than '{robot.name}' "
                        f"({'; '.join(differences)}); give the robot it was identified on "
                        "(or --force to use it anyway)")
    if differences:
        warnings.warn(DynidWarning(f"--force: using {source} on '{robot.name}' although it was identified on "
                                   f"another robot ({'; '.join(differences)})"), stacklevel=2)
    return differences
