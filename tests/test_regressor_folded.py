"""A regressor kernel written for a robot's structure, its constant placements folded in
(dynamics/folded.py), gives the generic kernel's Y to rounding and Pinocchio's to 1e-9; one
kernel serves every robot of that structure (the non-trivial constants are read at run time);
it lives outside the installed package."""

import importlib
from pathlib import Path

import numpy as np
import pytest
from oracles import pin_model, pin_regressor

import dynid

folded = importlib.import_module("dynid.dynamics.folded")
regressor_module = importlib.import_module("dynid.dynamics.regressor")

# a tree of two legs on a trunk (small: a kernel compiles for 5-15 s; er3a, iiwa14 and solo12 are
# checked against Pinocchio by bench/dynamics.py): rpy multiples of pi/2 (cos(pi/2) = 6e-17 in the
# constants), axes along frame axes, one prismatic joint (the general motion), translations with zeros
_LINK = ('<link name="{0}"><inertial><origin xyz="0.01 -0.02 0.03" rpy="0 0 0"/><mass value="{1}"/>'
         '<inertia ixx="0.02" ixy="0.001" ixz="0" iyy="0.03" iyz="0.002" izz="0.02"/></inertial></link>')
_JOINTS = [("trunk", "base", "revolute", "0 0 {s}", "0 0 0", "0 0 1"),
           ("hip_a", "trunk", "revolute", "{s} 0 0.1", "1.5707963267948966 0 0", "0 1 0"),
           ("slide_a", "hip_a", "prismatic", "0 0 -0.2", "0 -1.5707963267948966 0", "1 0 0"),
           ("hip_b", "trunk", "revolute", "-{s} {s} 0", "0 0 3.141592653589793", "1 0 0")]


def _write(path: Path, scale: float, count: int = len(_JOINTS)) -> Path:
    """The tree's URDF, its first ``count`` joints (3: a chain)."""
    links = [_LINK.format(name, 1.0 + k) for k, (name, *_) in enumerate(_JOINTS[:count])]
    joints = [f'<joint name="j_{name}" type="{kind}"><parent link="{parent}"/><child link="{name}"/>'
              f'<origin xyz="{xyz.format(s=scale)}" rpy="{rpy}"/><axis xyz="{axis}"/>'
              f'<limit lower="-3" upper="3" effort="100" velocity="5"/></joint>'
              for name, parent, kind, xyz, rpy, axis in _JOINTS[:count]]
    path.write_text(f'<robot name="legs"><link name="base"/>{"".join(links)}{"".join(joints)}</robot>')
    return path


def _generic_and_folded(robot, count=300, seed=4):
    q, dq, ddq = np.random.default_rng(seed).uniform(-2.0, 2.0, (3, count, robot.n))
    q[5, 1], q[70, 0] = 3e6, -2.5e5  # beyond the lane sin/cos range: the C library's in both kernels
    q[9, 0], q[40, 1] = 987.654, -4321.0  # multi-turn angles below it: the lanes' (the explicit kernel's in registers)
    arrays = regressor_module.kernel_arrays(robot)
    generic, ours = (np.zeros((count, robot.n, 10 * robot.n)) for _ in range(2))
    regressor_module.regressor_serial(q, dq, ddq, *arrays, generic, 0, False)
    kernel = folded.kernel_for(robot)
    assert kernel is not None  # folding pays for these robots
    kernel.regressor_serial(q, dq, ddq, *arrays, ours, 0, False)
    return (q, dq, ddq), generic, ours, kernel


def test_folded_kernel_gives_the_generic_kernels_y_to_rounding(tmp_path):
    robot = dynid.load_robot(str(_write(tmp_path / "legs.urdf", 0.3)))
    _, generic, ours, _ = _generic_and_folded(robot)
    assert np.abs(ours - generic).max() <= 1e-14 * np.abs(generic).max()
    assert np.array_equal(ours == 0.0, generic == 0.0) or np.abs(ours[generic == 0.0]).max() < 1e-14


def test_one_kernel_per_structure_and_pinocchio_agrees(tmp_path):
    short, long = (dynid.load_robot(str(_write(tmp_path / f"legs{k}.urdf", scale)))
                   for k, scale in enumerate((0.3, 0.7)))
    assert folded.structure(short) == folded.structure(long)
    (q, dq, ddq), generic, ours, kernel = _generic_and_folded(long, seed=9)
    assert folded.kernel_for(short) is kernel
    assert np.abs(ours - generic).max() <= 1e-14 * np.abs(generic).max()
    model = pin_model(tmp_path / "legs1.urdf", long.gravity)
    np.testing.assert_allclose(ours, pin_regressor(model, q, dq, ddq), rtol=0, atol=1e-9 * np.abs(generic).max())
    package = Path(dynid.__file__).resolve().parent
    assert package not in Path(kernel.__file__).resolve().parents  # generated outside the installed package


def test_dynid_regressor_takes_the_folded_kernel_for_a_large_batch(tmp_path, monkeypatch):
    robot = dynid.load_robot(str(_write(tmp_path / "legs.urdf", 0.3)))
    monkeypatch.setattr(regressor_module, "FOLDED_MIN_SAMPLES", 64)
    (q, dq, ddq), _, ours, kernel = _generic_and_folded(robot, count=200)
    calls, serial = [], kernel.regressor_serial
    monkeypatch.setattr(kernel, "regressor_serial", lambda *args: calls.append(1) or serial(*args))
    y = dynid.regressor(robot, q, dq, ddq)
    assert calls and np.array_equal(y, ours)
    monkeypatch.setenv("DYNID_FOLDED_KERNELS", "0")
    calls.clear()
    dynid.regressor(robot, q, dq, ddq)
    assert not calls


@pytest.mark.parametrize("joints", [4, 3])
def test_whole_lines_written_straight_from_the_lanes_equal_the_in_place_y(tmp_path, joints):
    """A sample of the tree's Y (4 joints) is 160 numbers, whole cache lines: the streamed kernel
    transposes each line in registers from the lanes (regressor.write_lines). A sample of the chain's
    (3 joints) is 90 numbers: four samples start at four places in a line, and the kernel takes its
    lanes in that order to do the same (regressor.write_lines_phases). Every placement of Y in a line,
    Y's old contents overwritten or not, a batch that is no whole number of blocks or groups of
    eight, a stretch that starts inside a block, two threads: the in-place kernel's numbers bit for
    bit, nothing written past Y."""
    robot = dynid.load_robot(str(_write(tmp_path / "legs.urdf", 0.3, joints)))
    kernel = folded.kernel_for(robot)
    count, n = 1100, robot.n
    assert (10 * n * n) % 8 == (0 if joints == 4 else 2)
    q, dq, ddq = np.random.default_rng(5).uniform(-2.0, 2.0, (3, count, n))
    arrays = regressor_module.kernel_arrays(robot)
    in_place = np.zeros((count, n, 10 * n))
    kernel.regressor_serial(q, dq, ddq, *arrays, in_place, 0, False)
    size = count * 10 * n * n
    for shift in range(8):
        for every, fill in ((False, 0.0), (True, np.nan)):
            buffer = np.full(size + 16, fill)
            y = buffer[shift:shift + size].reshape(count, n, 10 * n)
            part = count - 13  # the last samples' lines are left alone
            kernel.regressor_serial(q[:part], dq[:part], ddq[:part], *arrays, y[:part], 4, every)
            assert np.array_equal(y[:part], in_place[:part])
            rest = buffer[shift + part * 10 * n * n:]
            assert np.array_equal(rest, np.full(rest.size, fill), equal_nan=True)
            assert np.array_equal(buffer[:shift], np.full(shift, fill), equal_nan=True)
    y = np.zeros((count, n, 10 * n))
    for start, stop in ((0, 550), (550, count)):  # a second thread's stretch starts inside a block
        kernel.range_of(q, dq, ddq, *arrays, y, start, stop, 4, False)
    assert np.array_equal(y, in_place)
    if joints == 4:
        y = np.zeros((count, n, 10 * n))
        kernel.regressor_parallel(q, dq, ddq, *arrays, y, 2, 4, False)
        assert np.array_equal(y, in_place)


@pytest.mark.parametrize("joints", [4, 3])
def test_explicit_kernel_gives_the_generic_kernels_y_to_rounding(tmp_path, monkeypatch, joints):
    """The explicit kernel (dynamics/explicit.py: the folded kernel's statements as straight-line
    vector code, the previous block's lines stored inside it), for an even n (the tree, 4 joints: a
    sample is whole lines) and an odd n (the chain, 3 joints: four samples start at four places in a
    line, its lanes in that order, a line map per lane group): Y equal to the generic kernel's to
    rounding, for every placement of Y in a line, a batch that is no whole number of blocks,
    stretches that start inside a block (at every place in a line) or are shorter than a block, two
    threads; nothing written outside Y; a line map of another place refused; and ``dynid.regressor``
    takes it for a streamed Y (not with DYNID_EXPLICIT_KERNELS=0). One compiled function serves
    every call (``regressor_parallel``, one thread or two; the serial one is a call of the same
    ``range_of``): a compile of the explicit kernel costs seconds."""
    robot = dynid.load_robot(str(_write(tmp_path / "legs.urdf", 0.3, joints)))
    module = regressor_module.explicit_kernel(robot)
    assert module is not None and module.PHASES == (joints == 3)
    (q, dq, ddq), generic, _, _ = _generic_and_folded(robot, count=1100)
    constants, _, slots, gravity = regressor_module.kernel_arrays(robot)
    largest, size = np.abs(generic).max(), generic.size
    threads = importlib.import_module("dynid.dynamics.threads")

    def run(y, start, stop, plan, workers=1):
        threads.with_threads(workers, module.regressor_parallel, q[start:stop], dq[start:stop], ddq[start:stop],
                             constants, slots, gravity, y, *plan, workers)

    for shift in range(8):
        buffer = np.zeros(size + 16)
        buffer[:shift], buffer[shift + size:] = np.nan, np.nan
        y = buffer[shift:shift + size].reshape(generic.shape)
        part = 1100 - 13  # 33 blocks and 31 samples
        run(y[:part], 0, part, regressor_module.explicit_plan(robot, module, y[:part]))
        assert np.abs(y[:part] - generic[:part]).max() <= 1e-14 * largest
        assert np.isnan(buffer[:shift]).all() and np.isnan(buffer[shift + size:]).all()
        assert not y[part:].any()
        wrong = buffer[shift + 1:shift + 1 + size].reshape(generic.shape)  # a line map of another place
        with pytest.raises(ValueError, match="line map"):
            run(wrong, 0, 1100, regressor_module.explicit_plan(robot, module, y))
    # segments as dynid.regressor's (Y[start:stop] and its plan), on one thread or two (the second
    # thread's stretch starts inside a block: 550, 37 + 531, 70 + 514)
    for segments in (((0, 1100, 2),), ((0, 37, 1), (37, 1100, 2)), ((0, 5, 1), (5, 70, 1), (70, 1098, 2),
                                                                    (1098, 1100, 1))):
        y = np.zeros_like(generic)
        for start, stop, workers in segments:
            run(y[start:stop], start, stop, regressor_module.explicit_plan(robot, module, y[start:stop]), workers)
        assert np.abs(y - generic).max() <= 1e-14 * largest
    monkeypatch.setattr(regressor_module, "FOLDED_MIN_SAMPLES", 64)
    monkeypatch.setattr(regressor_module, "stream_stage_samples", lambda robot, nbytes: 4)
    explicit = importlib.import_module("dynid.dynamics.explicit")
    monkeypatch.setattr(explicit, "wide_vectors", lambda: True)  # taken where Numba compiles for AVX-512
    calls = []
    monkeypatch.setattr(module, "regressor_serial",
                        lambda *args: calls.append(1) or module.regressor_parallel(*args, 1))
    assert np.abs(dynid.regressor(robot, q, dq, ddq, out=np.zeros_like(generic)) - generic).max() <= 1e-14 * largest
    assert calls
    monkeypatch.setattr(explicit, "wide_vectors", lambda: False)
    dynid.regressor(robot, q, dq, ddq, out=np.zeros_like(generic))
    monkeypatch.setattr(explicit, "wide_vectors", lambda: True)
    monkeypatch.setenv("DYNID_EXPLICIT_KERNELS", "0")
    dynid.regressor(robot, q, dq, ddq, out=np.zeros_like(generic))
    assert calls == [1]
