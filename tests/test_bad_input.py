"""Bad robot descriptions and arrays give clear errors naming the file, entry and field."""

import numpy as np
import pytest

import dynid
from dynid.errors import DataError, DynidWarning, ModelError

GOOD_YAML = """
name: two
convention: mdh
joints:
  - {type: revolute, a: 0.0, alpha: 0.0, d: 0.3, theta: 0.0}
  - {type: prismatic, a: 0.1, alpha: -1.5707963267948966, d: 0.0, theta: 0.0}
links:
  - {mass: 2.0, com: [0.0, 0.0, -0.1], inertia: [0.02, 0.0, 0.0, 0.02, 0.0, 0.01]}
  - {mass: 1.0, com: [0.0, 0.0, 0.05], inertia: [0.01, 0.0, 0.0, 0.01, 0.0, 0.005]}
limits:
  - {q_min: -2.9, q_max: 2.9, dq_max: 2.2}
  - {q_min: 0.0, q_max: 0.5}
"""


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_good_yaml_loads(tmp_path):
    robot = dynid.load_robot(write(tmp_path, "two.yaml", GOOD_YAML))
    assert robot.n == 2 and robot.joints[1].type == "prismatic"
    assert robot.limit_array("q_max")[1] == 0.5 and np.isinf(robot.limit_array("dq_max")[1])


@pytest.mark.parametrize(
    "change, expected",
    [
        (("type: prismatic", "type: spherical"), r"joints\[1\]: unknown joint type 'spherical'"),
        (("mass: 1.0", "mass: -1.0"), r"links\[1\]: field 'mass' must be >= 0"),
        (("inertia: [0.01, 0.0, 0.0, 0.01, 0.0, 0.005]", "inertia: [0.01, 0.0, 0.0, -0.01, 0.0, 0.005]"),
         r"links\[1\].*not positive semidefinite"),
        (("inertia: [0.01, 0.0, 0.0, 0.01, 0.0, 0.005]", "inertia: [0.01, 0.0, 0.0, 0.01, 0.0, 0.05]"),
         r"links\[1\].*triangle inequality"),
        (("d: 0.3", "d: abc"), r"joints\[0\]: field 'd' must be a finite number"),
        (("convention: mdh", "convention: xyz"), r"convention 'xyz' unknown"),
        (("com: [0.0, 0.0, 0.05]", "com: [0.0, 0.05]"), r"links\[1\]: field 'com' must be a list of 3"),
        (("dq_max: 2.2", "dq_max: 2.2, speed: 3"), r"limits\[0\]: unknown field\(s\) \['speed'\]"),
        (("q_min: -2.9, q_max: 2.9", "q_min: 2.9, q_max: -2.9"), r"limits\[0\]: q_min 2.9 > q_max -2.9"),
    ],
)
def test_yaml_errors_name_entry_and_field(tmp_path, change, expected):
    path = write(tmp_path, "bad.yaml", GOOD_YAML.replace(*change))
    with pytest.raises(ModelError, match=expected) as info:
        dynid.load_robot(path)
    assert str(path) in str(info.value)


# docs/formats.md section 2, verbatim: two joints, one link and one limit
FORMATS_EXAMPLE = """
name: my-robot
convention: mdh            # "mdh" (Craig: T = RotX(alpha) TransX(a) RotZ(theta+q) TransZ(d)) or "dh"
gravity: [0.0, 0.0, -9.81] # optional
joints:                    # one entry per actuated joint, base to tip
  - {type: revolute, a: 0.0, alpha: 0.0, d: 0.333, theta: 0.0}
  - {type: prismatic, a: 0.0, alpha: -1.5707963267948966, d: 0.0, theta: 0.0}  # q adds to d
links:                     # optional, one per joint (the link the joint moves)
  - {mass: 4.97, com: [0.003, -0.003, -0.07], inertia: [0.7, -0.0001, 0.007, 0.7, 0.02, 0.009]}
limits:                    # optional, one per joint; any key may be omitted
  - {q_min: -2.9, q_max: 2.9, dq_max: 2.2, ddq_max: 15.0, tau_max: 87.0}
"""


def test_the_documented_example_loads_its_short_lists_given_to_the_first_joints(tmp_path):
    path = write(tmp_path, "my-robot.yaml", FORMATS_EXAMPLE)
    with pytest.warns(DynidWarning) as caught:
        robot = dynid.load_robot(path)
    said = [str(w.message) for w in caught]
    assert any("'links' has 1 entry for 2 joints: joint 2 gets no mass" in m and str(path) in m for m in said)
    assert any("'limits' has 1 entry for 2 joints: joint 2 gets no limits" in m for m in said)
    theta = robot.parameters().reshape(2, 10)
    assert theta[0, 0] == 4.97 and np.all(theta[1] == 0.0)
    assert robot.limit_array("tau_max")[0] == 87.0 and np.isinf(robot.limit_array("q_max")[1])
    # a prismatic joint standing vertically holds the links beyond it: joint 1's torque is its own link's only
    tau = dynid.inverse_dynamics(robot, np.zeros((1, 2)), np.zeros((1, 2)), np.zeros((1, 2)))
    assert tau[0, 1] == 0.0


def test_a_list_longer_than_the_joints_is_refused(tmp_path):
    text = GOOD_YAML.replace("  - {q_min: 0.0, q_max: 0.5}\n", "  - {q_min: 0.0, q_max: 0.5}\n  - {q_max: 1.0}\n")
    path = write(tmp_path, "three-limits.yaml", text)
    with pytest.raises(ModelError, match=r"'limits' must be a list with one entry per joint \(2\)") as info:
        dynid.load_robot(path)
    assert str(path) in str(info.value)


def test_malformed_yaml(tmp_path):
    path = write(tmp_path, "broken.yaml", "joints: [ {type: revolute, a: 0\n")
    with pytest.raises(ModelError, match=r"broken.yaml: malformed YAML"):
        dynid.load_robot(path)


URDF = """<robot name="r">
  <link name="base"/>
  <link name="l1"><inertial><mass value="{mass}"/><inertia ixx="{ixx}" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
  <joint name="j1" type="{jtype}"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
</robot>"""


@pytest.mark.parametrize(
    "fields, expected",
    [
        ({"jtype": "floating"}, r"joint 'j1': unsupported type 'floating'"),
        ({"mass": "-2"}, r"link 'l1' <mass>: negative mass"),
        ({"ixx": "-0.1"}, r"link 'l1'.*not positive semidefinite"),
        ({"ixx": "0.5"}, r"link 'l1'.*triangle inequality"),
        ({"mass": "heavy"}, r"link 'l1' <mass>: value='heavy' is not a number"),
    ],
)
def test_urdf_errors_name_element(tmp_path, fields, expected):
    values = {"mass": "1", "ixx": "0.1", "jtype": "revolute"} | fields
    path = write(tmp_path, "r.urdf", URDF.format(**values))
    with pytest.raises(ModelError, match=expected) as info:
        dynid.load_robot(path)
    assert "r.urdf" in str(info.value)


def test_malformed_urdf_and_missing_links(tmp_path):
    with pytest.raises(ModelError, match=r"x.urdf: malformed XML"):
        dynid.load_robot(write(tmp_path, "x.urdf", "<robot><link name='a'></robot>"))
    text = URDF.format(mass=1, ixx=0.1, jtype="revolute").replace('<child link="l1"/>', '<child link="nope"/>')
    with pytest.raises(ModelError, match=r"joint 'j1': child link 'nope' is not defined"):
        dynid.load_robot(write(tmp_path, "y.urdf", text))
    with pytest.raises(ModelError, match=r"no such file"):
        dynid.load_robot(tmp_path / "absent.urdf")


def test_unknown_robot_spec_lists_builtins():
    with pytest.raises(ModelError, match=r"not a builtin \(kr500, kr500-rail, er3a"):
        dynid.load_robot("ur5")


@pytest.mark.parametrize(
    "shapes, expected",
    [
        (((10, 5), (10, 6), (10, 6)), r"q: expected 6 columns"),
        (((10, 6), (9, 6), (10, 6)), r"dq: 9 samples, but the other arrays have 10"),
        (((10, 6, 1), (10, 6), (10, 6)), r"q: expected shape \(N, 6\)"),
    ],
)
def test_array_shapes_are_checked(shapes, expected):
    robot = dynid.load_robot("er3a")
    q, dq, ddq = (np.zeros(s) for s in shapes)
    for fn in (dynid.inverse_dynamics, dynid.regressor):
        with pytest.raises(DataError, match=expected):
            fn(robot, q, dq, ddq)


def test_robot_is_immutable():
    robot = dynid.load_robot("planar2")
    with pytest.raises(AttributeError):
        robot.name = "other"
    with pytest.raises(ValueError):
        robot.joints[0].axis[0] = 2.0
    with pytest.raises(ModelError, match="link 'link1'.*mass must be >= 0"):
        robot.with_parameters(-robot.parameters())


def test_inertial_conversions_round_trip():
    from dynid.robot.inertia import from_mass_com_inertia, pseudo_inertia, to_mass_com_inertia

    rng = np.random.default_rng(0)
    rot, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    ic = rot @ np.diag([0.3, 0.4, 0.6]) @ rot.T  # principal moments obey J1 + J2 >= J3
    theta = from_mass_com_inertia(2.5, [0.1, -0.2, 0.3], ic)
    m, c, ic2 = to_mass_com_inertia(theta)
    assert m == 2.5 and np.allclose(c, [0.1, -0.2, 0.3]) and np.allclose(ic2, ic)
    assert np.linalg.eigvalsh(pseudo_inertia(theta)).min() > 0  # a rigid body's J is PD
    bad = from_mass_com_inertia(2.5, [0.1, -0.2, 0.3], rot @ np.diag([0.1, 0.2, 0.6]) @ rot.T)
    assert np.linalg.eigvalsh(pseudo_inertia(bad)).min() < 0  # triangle inequality broken
