"""Checks of a robot description shared by every loader (URDF, DH/MDH YAML, builtins to come):
what cannot be right is refused (ModelError), what is almost surely wrong warns (DynidWarning).

- ``check_limits``: q_min <= q_max, no NaN, positive speed/acceleration/torque limits;
- ``angle_warning``: a DH/MDH angle beyond 2 pi is almost surely in degrees (dynid reads radians).
"""

from __future__ import annotations

import math
import warnings

from dynid.errors import DynidWarning, ModelError


def check_limits(limits, where: str) -> None:
    """Refuse joint limits that cannot be right; ``where`` names the file and joint."""
    values = {k: getattr(limits, k) for k in ("q_min", "q_max", "dq_max", "ddq_max", "tau_max")}
    for key, value in values.items():
        if math.isnan(value):
            raise ModelError(f"{where}: {key} is NaN")
    if values["q_min"] > values["q_max"]:
        raise ModelError(f"{where}: q_min {values['q_min']:g} > q_max {values['q_max']:g}; expected the lower "
                         "limit below the upper one")
    for key in ("dq_max", "ddq_max", "tau_max"):
        if not values[key] > 0:
            raise ModelError(f"{where}: {key} {values[key]:g} must be positive (omit it for no limit)")


def angle_warning(value: float, field: str, where: str) -> None:
    """Warn when an angle [rad] is beyond 2 pi: almost surely degrees."""
    if abs(value) > 2 * math.pi + 1e-9:
        warnings.warn(DynidWarning(f"{where}: {field} {value:g} is beyond 2 pi: dynid reads radians; if it is in "
                                   f"degrees write {math.radians(value):.10g}"), stacklevel=3)
