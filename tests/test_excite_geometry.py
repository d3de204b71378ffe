"""Collision geometry of excitation design (issue 16 §2, §3): capsules, distances, margins.

Oracles: Pinocchio's collision library (coal) for distances between capsules, boxes and
half-spaces, and Pinocchio's own placement of a URDF's collision objects; finite differences
for the margin gradients; dense sampling for the guaranteed bound between samples.
"""

from __future__ import annotations

import numpy as np
import pytest
from robot_files import example_robot_dir, example_robot_urdf

import dynid
from dynid.errors import ModelError
from dynid.excite.geometry import capsules as cap
from dynid.excite.geometry.constraints import build_constraints
from dynid.excite.geometry.distance import GOLDEN_STEPS, segment_box, segment_halfspace, segment_segment
from dynid.excite.geometry.kernels import BOX, FLOOR, SELF, pair_margins
from dynid.excite.geometry.mesh import read_vertices, resolve_package_path
from dynid.excite.geometry.robot_capsules import robot_capsules
from dynid.excite.geometry.scene import Box, Scene, Workspace
from dynid.excite.limit_sources import resolve_limits, robot_with_limits

coal = pytest.importorskip("coal")

XARM = example_robot_urdf("xarm_description/urdf/xarm7.urdf")
Z1 = example_robot_urdf("z1_description/urdf/z1.urdf")


def coal_capsule(p0, p1, radius):
    """coal Capsule (along its z, centred) and its placement for the segment [p0, p1]."""
    d = p1 - p0
    length = float(np.linalg.norm(d))
    z = d / length if length > 0 else np.array([0.0, 0.0, 1.0])
    x = np.cross(z, [1.0, 0.0, 0.0] if abs(z[0]) < 0.9 else [0.0, 1.0, 0.0])
    x /= np.linalg.norm(x)
    rotation = np.column_stack([x, np.cross(z, x), z])
    return coal.Capsule(radius, length), coal.Transform3s(rotation, 0.5 * (p0 + p1))


def coal_distance(shape_a, tf_a, shape_b, tf_b):
    return coal.distance(shape_a, tf_a, shape_b, tf_b, coal.DistanceRequest(), coal.DistanceResult())


def test_distances_agree_with_coal():
    rng = np.random.default_rng(0)
    count = 400
    p0, p1, q0, q1 = (rng.normal(scale=0.5, size=(count, 3)) for _ in range(4))
    ra, rb = rng.uniform(0.01, 0.2, count), rng.uniform(0.01, 0.2, count)
    rotation = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    rotation *= np.linalg.det(rotation)
    center, half = np.array([0.2, -0.1, 0.3]), np.array([0.3, 0.2, 0.15])
    box = coal.Box(*(2 * half))
    box_tf = coal.Transform3s(rotation, center)
    floor = coal.Halfspace(np.array([0.0, 0.0, 1.0]), -0.4)  # {z <= -0.4}
    mine_ss = segment_segment(p0, p1, q0, q1)[0] - ra - rb
    mine_box = segment_box(p0, p1, rotation, center, half)[0] - ra
    mine_floor = segment_halfspace(p0, p1, np.array([0.0, 0.0, 1.0]), -0.4)[0] - ra
    # the compiled loop of the optimizer gives the same numbers
    kernel_p0 = np.concatenate([p0, q0])[None]
    kernel_p1 = np.concatenate([p1, q1])[None]
    radius = np.concatenate([ra, rb])
    idx = np.arange(count)
    table = (np.r_[np.full(count, SELF), np.full(count, FLOOR), np.full(count, BOX)],
             np.r_[idx, idx, idx], np.r_[idx + count, np.zeros(count, int), np.zeros(count, int)])
    kernel = pair_margins(kernel_p0, kernel_p1, radius, table, np.zeros(3 * count), -0.4,
                          (Box("b", center, 2 * half, rotation),), 30)[0]
    np.testing.assert_allclose(kernel, np.r_[mine_ss, mine_floor, mine_box], atol=1e-12)
    checked = {"capsules": 0, "box": 0, "floor": 0}
    for k in range(count):
        a, ta = coal_capsule(p0[k], p1[k], ra[k])
        b, tb = coal_capsule(q0[k], q1[k], rb[k])
        reference = coal_distance(a, ta, b, tb)
        if reference > 1e-6:
            assert abs(mine_ss[k] - reference) < 1e-9
            checked["capsules"] += 1
        else:
            assert mine_ss[k] <= 1e-9
        reference = coal_distance(a, ta, box, box_tf)
        if reference > 1e-6:  # never above the distance, below by at most the golden bracket
            bracket = (0.5 * (np.sqrt(5) - 1)) ** GOLDEN_STEPS * np.linalg.norm(p1[k] - p0[k])
            assert -1e-8 <= reference - mine_box[k] <= bracket + 1e-8
            checked["box"] += 1
        else:
            assert mine_box[k] < 1e-6
        reference = coal_distance(a, ta, floor, coal.Transform3s())
        assert abs(mine_floor[k] - reference) < 1e-9
        checked["floor"] += 1
    assert min(checked.values()) > count // 4, checked


def test_capsules_contain_their_primitives_and_meshes():
    rng = np.random.default_rng(1)
    rotation = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    size = np.array([0.4, 0.1, 0.25])
    box = cap.box_capsule(0, rotation, np.zeros(3), size, "box")
    corners = (np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T * size / 2) @ rotation.T
    assert box.contains(corners).all()
    cylinder = cap.cylinder_capsule(0, rotation, np.ones(3), 0.05, 0.3, "cylinder")
    angle = np.linspace(0, 2 * np.pi, 64)
    rim = np.column_stack([0.05 * np.cos(angle), 0.05 * np.sin(angle), np.full(64, 0.15)])
    assert cylinder.contains(np.vstack([rim, rim * [1, 1, -1]]) @ rotation.T + 1.0).all()
    mesh = resolve_package_path("package://example-robot-data/robots/ur_description/meshes/ur5/collision/"
                                "forearm.stl", example_robot_dir() / "ur_description/urdf/ur5_robot.urdf")
    vertices = read_vertices(mesh)
    fitted = cap.enclosing_capsule(0, vertices, "forearm")
    assert fitted.contains(vertices).all()
    # not a loose fit: some vertices touch the surface
    d = cap.Capsule(0, fitted.a, fitted.b, fitted.radius - 1e-3, "", "")
    assert not d.contains(vertices).all()


def test_urdf_capsules_sit_where_pinocchio_places_the_collision_objects():
    import pinocchio as pin

    robot = dynid.load_robot(Z1)
    capsules = robot_capsules(robot)
    model = pin.buildModelFromUrdf(str(Z1))
    collision = pin.buildGeomFromUrdf(model, str(Z1), pin.GeometryType.COLLISION,
                                      package_dirs=[str(example_robot_dir().parent.parent)])
    data, cdata = model.createData(), collision.createData()
    rng = np.random.default_rng(2)
    lim = resolve_limits(robot).limits
    from dynid.dynamics import forward_kinematics

    cylinders = [g for g in collision.geometryObjects if isinstance(g.geometry, coal.Cylinder)]
    assert len(cylinders) == 8
    for q in rng.uniform(lim.q_min, lim.q_max, (5, robot.n)):
        pin.updateGeometryPlacements(model, data, collision, cdata, q)
        rot, org = forward_kinematics(robot, q[None])
        p0, p1 = capsules.world_segments(rot, org)
        centers, axes = 0.5 * (p0[0] + p1[0]), p1[0] - p0[0]
        for g in cylinders:
            placement = cdata.oMg[collision.getGeometryId(g.name)]
            k = np.argmin(np.linalg.norm(centers - placement.translation, axis=1))
            assert np.linalg.norm(centers[k] - placement.translation) < 1e-9
            assert abs(np.linalg.norm(axes[k]) - 2 * g.geometry.halfLength) < 1e-9
            assert np.linalg.norm(np.cross(axes[k], placement.rotation[:, 2])) < 1e-9
            assert abs(capsules.radius[k] - g.geometry.radius) < 1e-12


@pytest.fixture(scope="module")
def xarm_constraints():
    robot = dynid.load_robot(XARM)
    limits = resolve_limits(robot).limits
    robot = robot_with_limits(robot, limits)
    scene = Scene(0.0, (Box("table", [0.5, 0.0, 0.2], [0.3, 0.5, 0.4]),))
    workspace = Workspace([-0.9, -0.9, 0.05], [0.9, 0.9, 1.4], robot.n - 1, np.zeros(3), "link7")
    return robot, limits, build_constraints(robot, robot_capsules(robot), scene, 0.05, limits.center, workspace)


def test_margin_gradients_match_finite_differences(xarm_constraints):
    robot, limits, constraints = xarm_constraints
    rng = np.random.default_rng(3)
    q = limits.center + 0.3 * rng.uniform(-1, 1, (40, robot.n))
    g, grad = constraints.jacobian(q)
    np.testing.assert_allclose(g, constraints.margins(q), atol=1e-12)
    h = 1e-6
    numeric = np.stack([(constraints.margins(q + h * e) - constraints.margins(q - h * e)) / (2 * h)
                        for e in np.eye(robot.n)], axis=-1)
    smooth = np.abs(g) > 1e-3  # away from contact, where distances are differentiable
    np.testing.assert_allclose(grad[smooth], numeric[smooth], atol=2e-5)


def test_guaranteed_margin_bounds_dense_samples(xarm_constraints):
    robot, limits, constraints = xarm_constraints
    from dynid.excite.periodic import periodic_from_family

    template = periodic_from_family("fourier", 2 * np.pi * 0.1, 3, robot.n)
    rng = np.random.default_rng(4)
    traj = template.with_coefficients(limits.center, 0.05 * rng.normal(size=template.coefficients.shape))
    report = constraints.guaranteed_margins(traj, limits, 500)
    t = np.linspace(0, traj.period, 100_001)
    dense = constraints.margins(traj.derivative(t, 0)).min(axis=0)
    assert np.all(dense >= report["guaranteed"] - 1e-12)
    assert np.all(report["sampled"] >= dense - 1e-12)  # the sampled minimum is an upper bound


def test_obstacle_through_the_start_posture_is_one_clear_error():
    robot = dynid.load_robot(XARM)
    limits = resolve_limits(robot).limits
    scene = Scene(0.0, (Box("pillar", [0.0, 0.0, 0.5], [0.1, 0.1, 0.2]),))
    with pytest.raises(ModelError) as exc:
        build_constraints(robot, robot_capsules(robot), scene, 0.05, limits.center)
    message = str(exc.value)
    assert "obstacle 'pillar'" in message and "link" in message and "start posture" in message
    assert "\n" not in message
    with pytest.raises(ModelError, match="floor"):  # a floor above the base
        build_constraints(robot, robot_capsules(robot), Scene(0.5), 0.05, limits.center)
    with pytest.raises(ModelError, match="workspace"):
        build_constraints(robot, robot_capsules(robot), Scene(None), 0.05, limits.center,
                          Workspace([-1, -1, 0], [1, 1, 0.3], robot.n - 1, np.zeros(3), "link7"))


def test_polish_constraint_gradient_in_the_coefficients(xarm_constraints):
    """d(window minimum margin)/d(C, q0) of the local polish against central differences."""
    robot, limits, constraints = xarm_constraints
    from dynid.excite.criteria import ExcitationModel
    from dynid.excite.geometry.polish_constraint import TrajectoryGeometry
    from dynid.excite.optimize import OptimizeSettings, Problem

    problem = Problem(ExcitationModel.of(robot), OptimizeSettings(n_harmonics=2), constraints)
    rng = np.random.default_rng(5)
    x = problem.pack(limits.center, 0.02 * rng.normal(size=(problem.p, robot.n)))
    geo = TrajectoryGeometry(problem, constraints, x, dense=256, windows=16, band=1.0)
    jac = geo.jacobian(x)
    h = 1e-6
    numeric = np.column_stack([(geo.values(x + h * e) - geo.values(x - h * e)) / (2 * h) for e in np.eye(x.size)])
    np.testing.assert_allclose(jac, numeric, atol=1e-5)
