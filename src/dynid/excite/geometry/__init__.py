"""Collision-free excitation: capsules around the links, the floor, boxes, a workspace box.

Data flow (``setup.build_geometry``, from the command line's options):

    robot (+ its URDF)  --robot_capsules-->  CapsuleSet (capsules in link frames)
    obstacles file, --box, --floor         -->  Scene;  --workspace, --flange --> Workspace
    capsules + scene + clearance + start posture  --build_constraints-->  GeometricConstraints

``GeometricConstraints`` turns configurations into margins g >= 0 (distance - clearance per
capsule pair, workspace faces), with gradients from the witness points and a speed bound
that makes the minimum between samples a guaranteed figure. The optimizer uses it three ways:
``shrink`` (candidates shrunk towards the start posture until they meet the margins),
``polish_constraint`` (window minima of dense margins as SLSQP constraints) and the final
guaranteed check; ``evaluate.geometry_report`` reports it.

Modules: capsules (shapes -> capsules), mesh (STL/OBJ/DAE vertices, package:// paths),
urdf_shapes (URDF collision elements in the robot's link frames), robot_capsules (the set for
one robot), scene (floor, boxes, workspace, obstacles file), distance (segment distances,
NumPy, with witnesses), kernels (the same distances compiled, and capsule placement),
constraints (margins, gradients, guaranteed bound), shrink, polish_constraint, setup.
"""
