"""Robots of the ``example-robot-data`` package (Gepetto), loaded by name: ``example:panda``.

example-robot-data 6.0.0 installs only data (no Python module): its URDFs live under
``<prefix>/share/example-robot-data/robots/``, where ``<prefix>`` is the ``cmeel.prefix``
directory of the Python environment (or a system prefix). ``robots_directory`` finds it from
the installed distribution's file list, then from ``sys.prefix`` and the ``DYNID_EXAMPLE_ROBOT_DATA``
environment variable. Meshes (``package://`` paths) are never read.

The catalogue names follow the package's own former Python loader where it had one (e.g.
``ur5`` is ``ur5_robot.urdf``) and the file name otherwise. Robots that walk, fly or
balance are floating-base: dynid refuses them by name (it identifies fixed-base robots)
and says how to load the URDF as if bolted down.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from dynid.errors import ModelError

PREFIX = "example:"
_SHARE = Path("share") / "example-robot-data" / "robots"

# name -> URDF path below the robots directory (fixed-base robots: arms, hands, pendulums,
# mobile manipulators whose wheels are joints of the tree)
FIXED_BASE = {
    "panda": "panda_description/urdf/panda.urdf",
    "panda_collision": "panda_description/urdf/panda_collision.urdf",
    "ur3": "ur_description/urdf/ur3_robot.urdf",
    "ur3_gripper": "ur_description/urdf/ur3_gripper.urdf",
    "ur3_limited": "ur_description/urdf/ur3_joint_limited_robot.urdf",
    "ur5": "ur_description/urdf/ur5_robot.urdf",
    "ur5_gripper": "ur_description/urdf/ur5_gripper.urdf",
    "ur5_limited": "ur_description/urdf/ur5_joint_limited_robot.urdf",
    "ur10": "ur_description/urdf/ur10_robot.urdf",
    "ur10_limited": "ur_description/urdf/ur10_joint_limited_robot.urdf",
    "kinova": "kinova_description/robots/kinova.urdf",
    "xarm7": "xarm_description/urdf/xarm7.urdf",
    "z1": "z1_description/urdf/z1.urdf",
    "so100": "so_arm_description/urdf/so100.urdf",
    "so101": "so_arm_description/urdf/so101.urdf",
    "baxter": "baxter_description/urdf/baxter.urdf",
    "talos_arm": "talos_data/robots/talos_left_arm.urdf",
    "finger_edu": "finger_edu_description/robots/finger_edu.urdf",
    "allegro_right_hand": "allegro_hand_description/urdf/allegro_right_hand.urdf",
    "allegro_left_hand": "allegro_hand_description/urdf/allegro_left_hand.urdf",
    "asr_twodof": "asr_twodof_description/urdf/TwoDofs.urdf",
    "double_pendulum": "double_pendulum_description/urdf/double_pendulum.urdf",
    "double_pendulum_continuous": "double_pendulum_description/urdf/double_pendulum_continuous.urdf",
    "double_pendulum_simple": "double_pendulum_description/urdf/double_pendulum_simple.urdf",
    "tiago": "tiago_description/robots/tiago.urdf",
    "tiago_dual": "tiago_description/robots/tiago_dual.urdf",
    "tiago_no_hand": "tiago_description/robots/tiago_no_hand.urdf",
    "tiago_pro": "tiago_pro_description/robots/tiago_pro.urdf",
    "pr2": "pr2_description/urdf/pr2.urdf",
}

# name -> (URDF path, kind): robots with a floating base in their package
FLOATING_BASE = {
    "a1": ("a1_description/urdf/a1.urdf", "quadruped"),
    "b1": ("b1_description/urdf/b1.urdf", "quadruped"),
    "b1_z1": ("b1_description/urdf/b1-z1.urdf", "quadruped with an arm"),
    "go1": ("go1_description/urdf/go1.urdf", "quadruped"),
    "go2": ("go2_description/urdf/go2.urdf", "quadruped"),
    "anymal": ("anymal_b_simple_description/robots/anymal.urdf", "quadruped"),
    "anymal_kinova": ("anymal_b_simple_description/robots/anymal-kinova.urdf", "quadruped with an arm"),
    "anymal_c": ("anymal_c_simple_description/urdf/anymal.urdf", "quadruped"),
    "laikago": ("laikago_description/urdf/laikago.urdf", "quadruped"),
    "hyq": ("hyq_description/robots/hyq_no_sensors.urdf", "quadruped"),
    "solo": ("solo_description/robots/solo.urdf", "quadruped"),
    "solo12": ("solo_description/robots/solo12.urdf", "quadruped"),
    "quadruped": ("quadruped_description/urdf/quadruped.urdf", "quadruped"),
    "bolt": ("bolt_description/robots/bolt.urdf", "biped"),
    "talos": ("talos_data/robots/talos_reduced.urdf", "humanoid"),
    "talos_box": ("talos_data/robots/talos_reduced_box.urdf", "humanoid"),
    "talos_corrected": ("talos_data/robots/talos_reduced_corrected.urdf", "humanoid"),
    "talos_full": ("talos_data/robots/talos_full_v2.urdf", "humanoid"),
    "talos_full_box": ("talos_data/robots/talos_full_v2_box.urdf", "humanoid"),
    "icub": ("icub_description/robots/icub.urdf", "humanoid"),
    "icub_reduced": ("icub_description/robots/icub_reduced.urdf", "humanoid"),
    "romeo": ("romeo_description/urdf/romeo.urdf", "humanoid"),
    "romeo_small": ("romeo_description/urdf/romeo_small.urdf", "humanoid"),
    "romeo_laas_small": ("romeo_description/urdf/romeo_laas_small.urdf", "humanoid"),
    "simple_humanoid": ("simple_humanoid_description/urdf/simple_humanoid.urdf", "humanoid"),
    "simple_humanoid_classical": ("simple_humanoid_description/urdf/simple_humanoid_classical.urdf",
                                  "humanoid"),
    "g1": ("g1_description/urdf/g1_29dof_rev_1_0.urdf", "humanoid"),
    "g1_with_hand": ("g1_description/urdf/g1_29dof_with_hand_rev_1_0.urdf", "humanoid"),
    "alex_nub_hands": ("alex_description/urdf/alex_nub_hands.urdf", "humanoid"),
    "alex_psyonic_hands": ("alex_description/urdf/alex_psyonic_hands.urdf", "humanoid"),
    "alex_sake_hands": ("alex_description/urdf/alex_sake_hands.urdf", "humanoid"),
    "alexander": ("alexander_description/urdf/alexander_v1.lowerBodyOnly.urdf", "humanoid"),
    "centauro": ("centauro_description/urdf/centauro.urdf", "legged robot"),
    "human": ("human_description/robots/human.urdf", "human model"),
    "hector": ("hector_description/robots/quadrotor_base.urdf", "quadrotor"),
    "iris": ("iris_description/robots/iris.urdf", "quadrotor"),
    "iris_simple": ("iris_description/robots/iris_simple.urdf", "quadrotor"),
    "borinot": ("borinot_description/urdf/borinot_flying_arm_2.urdf", "flying arm"),
    "hextilt": ("hextilt_description/urdf/hextilt_flying_arm_5.urdf", "flying arm"),
}


def _candidates() -> list[Path]:
    paths = []
    env = os.environ.get("DYNID_EXAMPLE_ROBOT_DATA")
    if env:
        paths.append(Path(env))
    try:
        from importlib.metadata import PackageNotFoundError, distribution

        dist = distribution("example-robot-data")
        for file in dist.files or ():
            text = str(file).replace("\\", "/")
            if "/share/example-robot-data/robots/" in text:
                head = text.split("/share/example-robot-data/robots/")[0]
                paths.append(Path(dist.locate_file(head)) / _SHARE)
                break
    except (ImportError, PackageNotFoundError):
        pass
    for prefix in (sys.prefix, sys.base_prefix):
        lib = Path(prefix) / "lib"
        paths.extend(sorted(lib.glob("python3*/site-packages/cmeel.prefix/" + _SHARE.as_posix())))
        paths.append(Path(prefix) / _SHARE)
    return paths


def robots_directory() -> Path:
    """The installed example-robot-data ``robots`` directory, or a ModelError saying how to get it.
    ``DYNID_EXAMPLE_ROBOT_DATA``, when set, must name that directory (a user who sets it means it:
    a missing path or a file is an error, never silently replaced by the installed package)."""
    env = os.environ.get("DYNID_EXAMPLE_ROBOT_DATA")
    if env:
        state = "is a file" if Path(env).is_file() else None if Path(env).is_dir() else "does not exist"
        if state is not None:
            raise ModelError(f"DYNID_EXAMPLE_ROBOT_DATA={env} {state}; expected the share/example-robot-data/robots "
                             "directory of example-robot-data (or unset it to use the installed package)")
    for path in _candidates():
        if path.is_dir():
            return path
    raise ModelError("example robots: the example-robot-data package is not installed "
                     "(pip install example-robot-data), or set DYNID_EXAMPLE_ROBOT_DATA to its "
                     "share/example-robot-data/robots directory")


def catalogue() -> dict[str, str]:
    """Name -> one-line description, fixed-base robots first (what ``dynid robots`` lists)."""
    out = {name: f"example-robot-data {path.split('/')[-1]}" for name, path in FIXED_BASE.items()}
    out.update({name: f"example-robot-data {path.split('/')[-1]} ({kind}, floating base: not loadable)"
                for name, (path, kind) in FLOATING_BASE.items()})
    return out


def example_urdf(spec: str) -> Path:
    """The URDF path of ``example:NAME`` (a fixed-base robot of the catalogue)."""
    name = spec[len(PREFIX):] if spec.startswith(PREFIX) else spec
    if name in FLOATING_BASE:
        path, kind = FLOATING_BASE[name]
        raise ModelError(f"{PREFIX}{name}: a {kind} with a floating base; dynid identifies fixed-base "
                         "robots. To treat its base as bolted to the ground, load the URDF file itself: "
                         f"{robots_directory() / path}")
    if name not in FIXED_BASE:
        raise ModelError(f"{PREFIX}{name}: not an example-robot-data robot; fixed-base ones: "
                         f"{', '.join(FIXED_BASE)}")
    path = robots_directory() / FIXED_BASE[name]
    if not path.is_file():
        raise ModelError(f"{PREFIX}{name}: {path} is missing from the installed example-robot-data")
    return path
