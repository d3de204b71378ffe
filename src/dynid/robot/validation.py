"""Checks of a robot description shared by every loader (URDF, DH/MDH YAML, builtins to come):
what cannot be right is refused (ModelError), what is almost surely wrong warns (DynidWarning).

- ``check_limits``: q_min <= q_max, no NaN, positive speed/acceleration/torque limits; a zero
  position range (q_min == q_max) warns: the joint cannot move (``excite optimize`` refuses it,
  ``simulate`` and ``base-params`` would take it as given; a fixed joint is ``type="fixed"``,
  a URDF's lower = upper = 0 means no limit and never gets here); position limits almost
  surely in degrees (a revolute range beyond two turns) or millimetres (a prismatic range
  beyond 100 m) warn. Speed limits are not judged: URDFs write "none" as 100 or 1000 rad/s;
- ``angle_warning``: a DH/MDH angle beyond 2 pi is almost surely in degrees (dynid reads radians);
- ``check_unique``: two elements of one name (URDF ``<link>``, ``<joint>``): the later would
  silently replace the earlier one;
- ``check_convention``: a DH/MDH table must say which convention it uses (they differ);
- ``check_inertials``: a link whose inertia misses the triangle inequality by at most 20 %
  (``Link.tolerated``; beyond, the link is refused) warns with the size of the violation and of
  the projection onto the nearest physical link that serves as the prior (``Robot.physical``);
- ``check_scale``: a joint placed more than ``MAX_REACH`` (20 m) from its parent's frame, or a
  gravity beyond 20 m/s^2 or below 2 m/s^2, is almost surely in mm or mm/s^2 (or g);
  ``check_gravity`` (also for a gravity set over a URDF by a robot YAML): none at all warns too;
- ``text_field``: a name or description of a YAML file must be a text, not a list or mapping.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from dynid.errors import DynidWarning, ModelError
from dynid.robot.inertia import to_mass_com_inertia

UNBOUNDED = 1e6  # a limit this large is a way of writing "none" (URDFs use 1e16): never a unit mistake
TURNS = 2  # revolute ranges beyond this many turns each side are almost surely degrees


def check_limits(limits, where: str, kind: str | None = None) -> None:
    """Refuse joint limits that cannot be right; warn about a zero position range and limits almost
    surely in other units (``kind``: 'revolute' | 'prismatic', None skips the unit checks). ``where``
    names the file and joint; call it for moving (revolute, prismatic) joints only."""
    values = {k: getattr(limits, k) for k in ("q_min", "q_max", "dq_max", "ddq_max", "tau_max")}
    for key, value in values.items():
        if math.isnan(value):
            raise ModelError(f"{where}: {key} is NaN")
    if values["q_min"] > values["q_max"]:
        raise ModelError(f"{where}: q_min {values['q_min']:g} > q_max {values['q_max']:g}; expected the lower "
                         "limit below the upper one")
    if values["q_min"] == values["q_max"]:
        unit = {"revolute": " rad", "prismatic": " m"}.get(kind, "")
        _warn(f"{where}: position limits [{values['q_min']:g}, {values['q_max']:g}]{unit}: a zero range, the "
              "joint cannot move (excitation cannot be planned for it; simulated motion would leave its "
              "limits): expected q_min below q_max; a joint that does not move is type 'fixed' (or --lock it)")
    for key in ("dq_max", "ddq_max", "tau_max"):
        if not values[key] > 0:
            raise ModelError(f"{where}: {key} {values[key]:g} must be positive (omit it for no limit)")
    if kind is not None:
        _unit_warnings(values, where, kind)


def _unit_warnings(values: dict, where: str, kind: str) -> None:
    bound = max((abs(values[k]) for k in ("q_min", "q_max") if abs(values[k]) < UNBOUNDED), default=0.0)
    if kind == "revolute" and bound > TURNS * 2 * math.pi:
        _warn(f"{where}: position limits [{values['q_min']:g}, {values['q_max']:g}] rad reach beyond {TURNS} turns: "
              f"dynid reads radians; if they are degrees write [{math.radians(values['q_min']):.6g}, "
              f"{math.radians(values['q_max']):.6g}] (for no limit: a continuous joint, or omit the limit)")
    if kind == "prismatic" and bound > 100.0:
        _warn(f"{where}: position limits [{values['q_min']:g}, {values['q_max']:g}] m reach beyond 100 m: dynid "
              "reads metres; millimetres?")


def _warn(text: str) -> None:
    warnings.warn(DynidWarning(text), stacklevel=4)


MAX_REACH = 20.0  # m between consecutive joint frames: the largest robots' links are a few metres


def check_scale(robot, where: str) -> None:
    """Warn about lengths and gravity almost surely in other units (module docstring)."""
    far = [(j.name, float(np.linalg.norm(j.placement_translation))) for j in robot.joints
           if np.linalg.norm(j.placement_translation) > MAX_REACH]
    if far:
        _warn(f"{where}: joint(s) {[n for n, _ in far][:4]} sit {[round(d, 4) for _, d in far][:4]} m from their "
              f"parent's frame (beyond {MAX_REACH:g} m): dynid reads metres; millimetres?")
    check_gravity(robot, where, stacklevel=5)


def check_gravity(robot, where: str, stacklevel: int = 4) -> None:
    """Warn about a gravity vector almost surely in other units (mm/s^2, g), or none at all."""
    g = float(np.linalg.norm(robot.gravity))
    vector = np.round(robot.gravity, 6).tolist()
    if g == 0.0:
        text = (f"{where}: gravity {vector} is zero: no gravity torques, and the parameters only gravity excites "
                "(first moments of mass) cannot be identified; expected [0, 0, -9.81] m/s^2 unless the robot "
                "really works without gravity")
    elif g > 20.0 or g < 2.0:
        text = (f"{where}: gravity {vector} has magnitude {g:.6g} m/s^2: dynid reads m/s^2 (Earth 9.81); "
                "mm/s^2, or in units of g?")
    else:
        return
    warnings.warn(DynidWarning(text), stacklevel=stacklevel)


def text_field(doc: dict, key: str, where: str, default):
    """A text field of a YAML mapping (a name, a description): a string, or ``default`` when absent.
    A list or mapping is refused (``name: [a, b]`` would become the name "['a', 'b']"); a number is
    taken as its text (``name: 600``)."""
    if key not in doc or doc[key] is None:
        return default
    value = doc[key]
    if isinstance(value, (list, dict, bool)):
        raise ModelError(f"{where}: '{key}' must be a text, got {type(value).__name__} {value!r}")
    text = str(value)
    if not text.strip():
        raise ModelError(f"{where}: '{key}' is empty; expected a text")
    return text


def check_unique(names, what: str, where: str) -> None:
    """Refuse two elements of one name (``what``: '<link>'...): the later one would replace the earlier."""
    seen = set()
    for name in names:
        if name in seen:
            raise ModelError(f"{where}: two {what} elements are named '{name}'; expected unique names (the "
                             "later one would silently replace the earlier)")
        seen.add(name)


def check_convention(doc: dict, where: str, conventions) -> str:
    """The DH/MDH convention a table names; refused when unknown, a warning when missing (taken as MDH,
    the contract's default, but DH and MDH tables of one robot differ)."""
    if "convention" not in doc:
        _warn(f"{where}: no 'convention' field: the table is read as MDH (Craig); write 'convention: mdh' or "
              "'convention: dh' (the same numbers describe another robot in the other convention)")
        return "mdh"
    convention = doc["convention"]
    if convention not in conventions:
        raise ModelError(f"{where}: convention '{convention}' unknown, expected 'mdh' or 'dh'")
    return convention


def angle_warning(value: float, field: str, where: str) -> None:
    """Warn when an angle [rad] is beyond 2 pi: almost surely degrees."""
    if abs(value) > 2 * math.pi + 1e-9:
        warnings.warn(DynidWarning(f"{where}: {field} {value:g} is beyond 2 pi: dynid reads radians; if it is in "
                                   f"degrees write {math.radians(value):.10g}"), stacklevel=3)


def projected_links(robot) -> list[dict]:
    """Per tolerated link (``Link.tolerated``): {"link", "violation" (of J3), "principal_moments" (as
    written), "used" (those of ``Robot.physical``), "inertia_change" (Frobenius, relative)} [kg m^2]."""
    out = []
    for given, used in zip(robot.links, robot.physical.links):
        if given.tolerated:
            ic, ic_used = to_mass_com_inertia(given.inertial)[2], to_mass_com_inertia(used.inertial)[2]
            out.append({"link": given.name, "violation": given.violation,
                        "principal_moments": np.linalg.eigvalsh(ic).tolist(),
                        "used": np.linalg.eigvalsh(ic_used).tolist(),
                        "inertia_change": float(np.linalg.norm(ic_used - ic) / np.linalg.norm(ic))})
    return out


def check_inertials(robot, where: str) -> None:
    """One warning per tolerated link (module docstring): the violation and the physical link used instead."""
    for p in projected_links(robot):
        _warn(f"{where}: link '{p['link']}': principal moments {_g(p['principal_moments'])} kg m^2 violate the "
              f"triangle inequality J1 + J2 >= J3 by {100 * p['violation']:.2g} % of J3 (no rigid body has them: a "
              "rounded or CAD-exported inertia?); loaded as written (least squares does not use it); as a prior and "
              "to simulate (pc, --prior-bound, simulate, excitation, export) dynid uses the nearest physical link, "
              f"same mass and centre of mass, principal moments {_g(p['used'])} (the inertia moves by "
              f"{100 * p['inertia_change']:.2g} %)")


def _g(values) -> str:
    return "[" + ", ".join(f"{v:.6g}" for v in values) + "]"
