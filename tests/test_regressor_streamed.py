"""Y streamed past the caches (dynamics/regressor.py, ``regressor_streamed``): whole samples
through a small stage, then the cache lines that hold a non-zero block by non-temporal stores,
for a Y larger than the last-level cache. The numbers are bit for bit those of the in-place
kernel (itself checked against Pinocchio), on every alignment of Y in a cache line, for chains
and a branched tree, on one thread and two; every line with a non-zero is written whole (zeros
included) and no other line is touched (an ``out`` full of NaN keeps NaN exactly there)."""

import importlib

import numpy as np
import pytest

import dynid
from dynid.dynamics.lanes import kernel_arrays, pair_slots
from urdf_factory import write_robot

regressor_module = importlib.import_module("dynid.dynamics.regressor")
threads = importlib.import_module("dynid.dynamics.threads")


def _in_lines(buffer, phase, shape):
    """An array of ``shape`` in ``buffer`` whose first number is ``phase`` numbers after a line start."""
    first = (-(buffer.ctypes.data // 8)) % 8 + phase
    return buffer[first:first + int(np.prod(shape))].reshape(shape)


def _lines_of_blocks(slots, y):
    """Per number of y (N, n, 10 n): whether its cache line holds a number of an ancestor block
    (the blocks that may be non-zero; Y is zero elsewhere)."""
    block = np.repeat(slots >= 0, 10, axis=1)  # (n, 10 n)
    line = (y.ctypes.data // 8 + np.arange(y.size)) // 8
    hot = np.unique(line[np.broadcast_to(block, y.shape).reshape(-1)])
    return np.isin(line, hot).reshape(y.shape)


# n even and odd (a sample's line offset moves with n odd), and a branched tree with prismatic joints
@pytest.mark.parametrize("name", ["er3a", "kr500-rail", "branched"])
def test_streamed_y_equals_the_in_place_y_bit_for_bit(name, tmp_path):
    robot = dynid.load_robot(str(write_robot(tmp_path, name, seed=5)) if name == "branched" else name)
    n = robot.n
    constants, parents, slots, gravity = kernel_arrays(robot)
    count = 203  # six blocks of 32 lanes and a short one
    q, dq, ddq = np.random.default_rng(3).uniform(-2.0, 2.0, (3, count, n))
    reference = np.zeros((count, n, 10 * n))
    regressor_module.regressor_serial(q, dq, ddq, constants, parents, slots, gravity, reference, 0, False)
    for stage in (4, 12):
        for phase in (0, 1, 3):  # Y starting at other places of a cache line
            y = _in_lines(np.zeros(reference.size + 16), phase, reference.shape)
            regressor_module.regressor_serial(q, dq, ddq, constants, parents, slots, gravity, y, stage, False)
            assert np.array_equal(y, reference), (stage, phase)
            y = _in_lines(np.full(reference.size + 16, np.nan), phase, reference.shape)
            regressor_module.regressor_serial(q, dq, ddq, constants, parents, slots, gravity, y, stage, False)
            hot = _lines_of_blocks(slots, y)
            assert np.array_equal(y[hot], reference[hot]), (stage, phase)
            assert (~hot).mean() > 0.2  # lines of zeros alone: a quarter to most of Y
            if phase == 0:  # not written at all
                assert np.isnan(y[~hot]).all(), stage
            else:  # but for zeros in the lines two stages share (ordinary stores)
                assert (np.isnan(y[~hot]) | (y[~hot] == 0.0)).all() and np.isnan(y[~hot]).mean() > 0.9, (stage, phase)
    y = np.zeros((count - 1, n, 10 * n))
    threads.with_threads(2, regressor_module._regressor_parallel, q[1:], dq[1:], ddq[1:], constants, parents, slots,
                         gravity, y, 2, 8, False)
    assert np.array_equal(y, reference[1:])


def test_dynid_regressor_streams_a_y_larger_than_the_last_level_cache(monkeypatch):
    """With the last-level cache made small, dynid.regressor takes the streamed path, and its Y
    is still tau = Y theta and the in-place Y."""
    robot = dynid.load_robot("er3a")
    q, dq, ddq = np.random.default_rng(4).uniform(-2.0, 2.0, (3, 1500, robot.n))
    in_place = dynid.regressor(robot, q, dq, ddq)
    assert regressor_module.stream_stage_samples(robot, in_place.nbytes) == 0  # 4 MB: stays cached
    monkeypatch.setattr(regressor_module, "cache_bytes", lambda level, default: {1: 32 * 2**10, 3: 2**20}[level])
    assert regressor_module.stream_stage_samples(robot, in_place.nbytes) == 8  # 8 samples of 2880 bytes in 32 KB
    streamed = dynid.regressor(robot, q, dq, ddq)
    assert streamed.ctypes.data % 64 == 0  # a Y of its own starts a line: every stage fills whole lines
    assert np.array_equal(streamed, in_place)
    assert np.array_equal(dynid.regressor(robot, q[1:], dq[1:], ddq[1:], out=np.zeros_like(in_place[1:])),
                          in_place[1:])
    tau = dynid.inverse_dynamics(robot, q, dq, ddq)
    assert np.allclose(streamed @ robot.parameters(), tau, rtol=0, atol=1e-10 * np.abs(tau).max())
    # an out whose numbers are not 8-byte aligned (a buffer at an odd offset) cannot take whole-line
    # stores: stored in place, the same numbers
    buffer = bytearray(in_place.nbytes + 1)
    unaligned = np.frombuffer(buffer, dtype=np.float64, offset=1, count=in_place.size).reshape(in_place.shape)
    assert unaligned.ctypes.data % 8 and unaligned.flags.c_contiguous
    assert np.array_equal(dynid.regressor(robot, q, dq, ddq, out=unaligned), in_place)


def test_the_lines_streamed_are_those_that_hold_a_non_zero_and_trees_stream_too(tmp_path, monkeypatch):
    """Streaming moves 64 bytes per line that holds a non-zero, in-place stores 128 (read for
    ownership, write back), so every robot streams a Y larger than the last-level cache. The lines
    of one er3a sample by hand: row i holds 10 (6 - i) numbers from column 10 i."""
    chain = pair_slots(np.arange(-1, 5))
    entries = [i * 60 + c for i in range(6) for c in range(10 * i, 60)]
    assert regressor_module.touched_lines(chain) == np.mean([len({(8 * (e + s)) // 64 for e in entries})
                                                             for s in range(8)])
    stage = _in_lines(np.zeros(4 * 360 + 16), 0, (4 * 360 + 8,))  # no numbers before its first line
    lines = np.zeros(181, dtype=np.int64)
    count = regressor_module.hot_lines(lines, stage, 0, regressor_module.block_runs(chain), 6)
    assert list(lines[:count]) == sorted({8 * (e // 8) for e in entries}) and count == 30 and lines[count] == 360
    monkeypatch.setattr(regressor_module, "cache_bytes", lambda level, default: {1: 32 * 2**10, 3: 2**20}[level])
    tree = dynid.load_robot(str(write_robot(tmp_path, "branched", seed=5)))
    assert regressor_module.stream_stage_samples(tree, 2**21) == 4  # 8000 bytes a sample: 4 in 32 KB
