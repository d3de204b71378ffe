"""The two angular-coordinate forms of the seed papers, selected by name."""

from __future__ import annotations

from dynid.errors import DynidError
from dynid.multibody.cardan import Cardan
from dynid.multibody.quaternion import Quaternion

FORMS = {"cardan": Cardan, "quaternion": Quaternion}


def angular_form(name: str):
    """'cardan' (seed 000) or 'quaternion' (seed 001) -> the coordinate class."""
    try:
        return FORMS[name]
    except KeyError:
        raise DynidError(f"--coordinates: unknown form '{name}', expected one of {sorted(FORMS)}") from None


def body_coordinates(form, states, what: str = "body"):
    """Generalized coordinates q_i = (r_i, theta_i) of seed 000 eq. 2 / seed 001 eq. 14 and
    their first and second derivatives from BodyStates: three (N, n, 3 + form.size) arrays."""
    import numpy as np

    theta = form.from_rotation(states.rotation)
    form.check(theta, what)
    dtheta = form.rates(theta, states.w_body)
    ddtheta = form.second_rates(theta, dtheta, states.dw_body)
    return (np.concatenate([states.r, theta], -1), np.concatenate([states.v, dtheta], -1),
            np.concatenate([states.a, ddtheta], -1))
