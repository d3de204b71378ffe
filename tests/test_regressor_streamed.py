"""Y streamed past the caches (dynamics/regressor.py, ``regressor_streamed``): whole samples
through a small stage by non-temporal stores, for a Y larger than the last-level cache. The
numbers are bit for bit those of the in-place kernel (itself checked against Pinocchio), on
every alignment of Y in a cache line, on one thread and two, and Y's zeros are written as zeros
(an ``out`` full of NaN comes back exactly Y)."""

import importlib

import numpy as np
import pytest

import dynid
from dynid.dynamics.lanes import kernel_arrays, pair_slots

regressor_module = importlib.import_module("dynid.dynamics.regressor")
threads = importlib.import_module("dynid.dynamics.threads")


@pytest.mark.parametrize("name", ["er3a", "kr500-rail"])  # n even and odd: a sample's line offset moves with n odd
def test_streamed_y_equals_the_in_place_y_bit_for_bit(name):
    robot = dynid.load_robot(name)
    n = robot.n
    constants, parents, slots, gravity = kernel_arrays(robot)
    count = 203  # six blocks of 32 lanes and a short one
    q, dq, ddq = np.random.default_rng(3).uniform(-2.0, 2.0, (3, count, n))
    reference = np.zeros((count, n, 10 * n))
    regressor_module.regressor_serial(q, dq, ddq, constants, parents, slots, gravity, reference)
    for stage in (4, 12):
        for shift in (0, 1, 3):  # Y starting at other places of a cache line
            y = np.full((count - shift, n, 10 * n), np.nan)
            regressor_module.regressor_serial(q[shift:], dq[shift:], ddq[shift:], constants, parents, slots, gravity,
                                              y, stage)
            assert np.array_equal(y, reference[shift:]), (stage, shift)
    y = np.full((count - 1, n, 10 * n), np.nan)
    threads.with_threads(2, regressor_module._regressor_parallel, q[1:], dq[1:], ddq[1:], constants, parents, slots,
                         gravity, y, 2, 8)
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
    streamed = dynid.regressor(robot, q, dq, ddq, out=np.full_like(in_place, np.nan))
    assert np.array_equal(streamed, in_place)
    tau = dynid.inverse_dynamics(robot, q, dq, ddq)
    assert np.allclose(streamed @ robot.parameters(), tau, rtol=0, atol=1e-10 * np.abs(tau).max())
    # an out whose numbers are not 8-byte aligned (a buffer at an odd offset) cannot take whole-line
    # stores: stored in place, the same numbers
    buffer = bytearray(in_place.nbytes + 1)
    unaligned = np.frombuffer(buffer, dtype=np.float64, offset=1, count=in_place.size).reshape(in_place.shape)
    assert unaligned.ctypes.data % 8 and unaligned.flags.c_contiguous
    assert np.array_equal(dynid.regressor(robot, q, dq, ddq, out=unaligned), in_place)


def test_streaming_is_kept_for_robots_whose_y_is_mostly_non_zero_lines():
    """Streaming writes all 80 n^2 bytes of a sample; in-place stores move each touched line twice
    (read for ownership, write back). A chain touches most lines of Y; a branched tree (four legs of
    three joints on a fixed base, solo12-like) few of them: in place."""
    chain = pair_slots(np.arange(-1, 5))
    legs = pair_slots(np.array([-1, 0, 1, -1, 3, 4, -1, 6, 7, -1, 9, 10]))
    assert 80 * 36 <= 128 * regressor_module.touched_lines(chain)
    assert 80 * 144 > 128 * regressor_module.touched_lines(legs)
    # the lines of one er3a sample by hand: 6 rows, row i holds 10 (6 - i) numbers from column 10 i
    entries = [i * 60 + c for i in range(6) for c in range(10 * i, 60)]
    assert regressor_module.touched_lines(chain) == np.mean([len({(8 * (e + s)) // 64 for e in entries})
                                                             for s in range(8)])
