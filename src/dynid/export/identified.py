"""The identified model stored in a result.json of ``dynid identify``.

Only the physically consistent estimator (``--estimator pc``) stores the full standard
parameters (``standard_parameters``: rigid body, friction, rotor inertia, offsets, in the
order of ``identify.model.parameter_names``). A least-squares result holds base parameters
only: linear combinations of inertial parameters that no URDF inertial element can carry,
and that may not even correspond to a physical body. Such a result is refused here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.errors import DataError, ModelError
from dynid.identify.model import FRICTION_MODELS, ModelOptions, parameter_names, parameter_slices
from dynid.robot.inertia import consistency_problems


@dataclass(frozen=True, eq=False)
class IdentifiedModel:
    """robot: the description with the identified rigid-body parameters (a Robot);
    options: the identification model terms; theta: (p,) full parameters;
    friction: (n, k) coefficients of ``options.friction``; rotor_inertia: (n,) joint side
    [kg m^2] or None; offsets: (n,) [N m] or None; estimator, source: provenance."""

    robot: object
    options: ModelOptions
    theta: np.ndarray
    friction: np.ndarray
    rotor_inertia: np.ndarray | None
    offsets: np.ndarray | None
    estimator: str
    source: str


def identified_model(robot, result: dict, source: str = "result.json") -> IdentifiedModel:
    """Read the physically consistent estimate of ``result`` onto ``robot`` (its kinematics)."""
    if "standard_parameters" not in result:
        raise DataError(
            f"{source}: a '{result.get('estimator', '?')}' estimate holds base parameters only (combinations "
            "of inertial parameters), which cannot be exported as link inertials; identify with "
            "'--estimator pc' (physically consistent) and export that result")
    if int(result.get("n", -1)) != robot.n:
        raise DataError(f"{source}: result has n = {result.get('n')} joints but robot '{robot.name}' has {robot.n}")
    options = ModelOptions.from_dict(result["model"])
    names = parameter_names(robot, options)
    stored = [p["name"] for p in result["standard_parameters"]]
    if stored != names:
        raise DataError(f"{source}: standard parameter names do not match robot '{robot.name}' "
                        f"with model {options.to_dict()} (first: {stored[:3]} vs {names[:3]})")
    theta = np.array([p["value"] for p in result["standard_parameters"]], dtype=float)
    sl = parameter_slices(robot, options)
    try:
        identified = robot.with_parameters(theta[sl["rigid"]])
    except ModelError as exc:
        raise DataError(f"{source}: the identified inertial parameters are not physical ({exc})") from None
    for link in identified.links:  # a description may be a little off (Link.tolerated), an export never is
        problems = consistency_problems(link.inertial)
        if problems:
            raise DataError(f"{source}: the identified inertial parameters are not physical (link '{link.name}': "
                            f"{problems[0]}); an export writes physical links only: identify again with "
                            "'--estimator pc'")
    k = len(FRICTION_MODELS[options.friction])
    return IdentifiedModel(
        robot=identified, options=options, theta=theta,
        friction=theta[sl["friction"]].reshape(robot.n, k),
        rotor_inertia=theta[sl["rotor_inertia"]].copy() if options.rotor_inertia else None,
        offsets=theta[sl["offset"]].copy() if options.offset else None,
        estimator=str(result.get("estimator", "pc")), source=source)
