"""Each motor's identified terms as the joint attributes a model file can carry, and what it cannot.

Identified model terms (identify.model), joint side, per motor k:

    tau += I_a,k ddq_k + Fv_k dq_k + Fc_k sign(dq_k) (+ offset_k, + the friction model's other terms)

MJCF carries I_a, Fv and Fc as ``armature``, ``damping`` and ``frictionloss`` (``export.mjcf``);
URDF carries Fv and Fc as ``<dynamics damping friction>`` and has no rotor inertia
(``export.urdf``). Both are symmetric, linear in dq plus one Coulomb term, without a constant
joint force. What a format cannot express is left out or averaged, each kind with one note
(``motor_terms`` for both, ``urdf_terms`` adds URDF's own), so the user is told what the exported
file is missing, never silently.
"""

from __future__ import annotations

import numpy as np

from dynid.identify.model import FRICTION_MODELS

# the format's words for viscous and Coulomb friction
ATTRIBUTES = {"MuJoCo": ("damping", "frictionloss"), "URDF": ("<dynamics damping>", "<dynamics friction>")}


def motor_terms(model, target: str = "MuJoCo") -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """(armature, damping, frictionloss) (n,) per motor, joint side, of an
    ``export.identified.IdentifiedModel``, and the notes on what it has that ``target`` (MuJoCo |
    URDF) cannot express: torque offsets, asymmetric friction (written as the mean of the two
    directions), polynomial friction's Fv2 dq^2 sign(dq) + Fv3 dq^3, Stribeck's static excess,
    the load-dependent model's Fl |tau_load| sign(dq), the tanh of ``--smooth-sign``."""
    n, options = model.robot.n, model.options
    damping_word, friction_word = ATTRIBUTES[target]
    names = FRICTION_MODELS[options.friction]
    f = dict(zip(names, np.asarray(model.friction, dtype=float).reshape(n, len(names)).T))
    notes = []
    zero = np.zeros(n)
    if options.friction == "asymmetric":
        coulomb, viscous = 0.5 * (f["Fcp"] + f["Fcn"]), 0.5 * (f["Fvp"] + f["Fvn"])
        notes.append(f"asymmetric friction written as the mean of both directions ({target}'s {damping_word} and "
                     f"{friction_word} are symmetric): Fc = (Fcp + Fcn) / 2, Fv = (Fvp + Fvn) / 2")
    else:
        coulomb, viscous = f.get("Fc", zero), f.get("Fv", zero)
    if options.friction == "polynomial" and (np.any(f["Fv2"]) or np.any(f["Fv3"])):
        notes.append(f"polynomial friction: Fv2 dq^2 sign(dq) + Fv3 dq^3 left out ({target}'s {damping_word} is "
                     f"linear); Fv2 = {np.round(f['Fv2'], 6).tolist()}, Fv3 = {np.round(f['Fv3'], 6).tolist()}")
    if options.friction == "stribeck":
        notes.append(f"Stribeck friction: the static excess (Fs - Fc) exp(-(dq / vs)^2) left out ({target}'s "
                     f"{friction_word} is Coulomb's); Fs = {np.round(f['Fs'], 6).tolist()}, "
                     f"vs = {np.round(options.stribeck_velocity, 6).tolist()}")
    if options.friction == "load-dependent":
        notes.append(f"load-dependent friction: Fl |tau_load| sign(dq) left out ({target}'s {friction_word} is a "
                     "constant per joint; it cannot grow with the transmitted torque): add it to the applied torques; "
                     f"Fl = {np.round(f['Fl'], 6).tolist()}")
    if options.smooth_sign > 0:
        notes.append(f"the identified Coulomb term uses tanh(dq / {options.smooth_sign:g}); " + (
            "MuJoCo's frictionloss is a friction constraint (full Fc while moving, static friction at rest)"
            if target == "MuJoCo" else f"URDF's {friction_word} is the plain Coulomb coefficient Fc"))
    if model.offsets is not None and np.any(model.offsets):
        notes.append(f"torque offsets left out ({target} has no constant joint force): add them to the applied "
                     f"torques: {np.round(model.offsets, 6).tolist()} N m")
    armature = zero if model.rotor_inertia is None else np.asarray(model.rotor_inertia, dtype=float)
    return armature, viscous, coulomb, notes


def urdf_terms(model) -> tuple[tuple[np.ndarray, np.ndarray] | None, list[str]]:
    """(``<dynamics>`` (damping, friction) per joint, or None for a coupled robot, whose motor
    friction acts on several joints), and one note per kind of identified term the URDF leaves
    out: ``motor_terms``' for URDF, the rotor inertia (URDF has none), and for a coupled robot
    all motor friction."""
    armature, damping, coulomb, notes = motor_terms(model, "URDF")
    if model.robot.is_coupled:
        notes = [note for note in notes if note.startswith("torque offsets")]
        notes.append("coupled transmission: each motor's friction acts on several joints, which URDF's per-joint "
                     "<dynamics> cannot say: no friction written (the MJCF export carries it on tendons)")
    if np.any(armature):
        notes.append("rotor inertia left out (URDF has no armature): the MJCF (armature) and JSON/YAML exports "
                     f"carry it: {np.round(armature, 9).tolist()} kg m^2, joint side")
    return (None if model.robot.is_coupled else (damping, coulomb)), notes
