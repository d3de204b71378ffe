"""The seed papers' absolute-coordinate multibody formulation (Cheng et al. 2021, 2022).

Modules, one job each: bodies (the robot as free rigid bodies), graph (S, C, S^e, C^e and
resultant joint forces), cardan / quaternion (angular coordinates), states (joint-space
trajectories to body motion), unconstrained (A q_ddot = B), constraints (Phi, Phi_q, zeta),
constrained (eq. 111, multipliers, reactions), integrate (forward simulation), bodydata
(the body data file), identification (per-body least squares), experiment (seed-kr500).
"""

from dynid.multibody.bodies import BodyModel, body_model
from dynid.multibody.coordinates import angular_form, body_coordinates
from dynid.multibody.graph import graph
from dynid.multibody.states import body_states, joint_reactions

__all__ = ["BodyModel", "angular_form", "body_coordinates", "body_model", "body_states", "graph",
           "joint_reactions"]
