"""A Y that dynid.regressor returns without ``out`` may live in the memory of a Y this process
dropped (dynamics/recycled.py): it must hold no number of that old Y, whether it is stored in
place or streamed past the caches, and memory that an array or a view still uses is never
handed out again."""

import gc
import importlib

import numpy as np
import pytest

import dynid

regressor_module = importlib.import_module("dynid.dynamics.regressor")
recycled = importlib.import_module("dynid.dynamics.recycled")


@pytest.fixture
def er3a_states(monkeypatch):
    monkeypatch.setattr(recycled, "_pool", [])
    robot = dynid.load_robot("er3a")
    count = recycled.MIN_BYTES // (8 * 6 * 60) + 37  # just large enough to be recycled
    return robot, np.random.default_rng(11).uniform(-2.0, 2.0, (3, count, robot.n))


@pytest.mark.parametrize("stage", [0, 8], ids=["in place", "streamed"])
def test_a_y_in_recycled_memory_holds_no_old_number(er3a_states, stage, monkeypatch):
    monkeypatch.setattr(regressor_module, "stream_stage_samples", lambda robot, nbytes: stage)
    robot, (q, dq, ddq) = er3a_states
    reference = np.zeros((q.shape[0], robot.n, 10 * robot.n))
    regressor_module.regressor_serial(q, dq, ddq, *regressor_module.kernel_arrays(robot), reference, 0, False)
    old = dynid.regressor(robot, q[::-1], dq, ddq)
    old[...] = np.nan  # what a user may leave in it, zeros of the non-ancestor blocks included
    del old
    gc.collect()
    assert len(recycled._pool) == 1
    y = dynid.regressor(robot, q, dq, ddq)
    assert not recycled._pool  # it took that memory
    assert np.array_equal(y, reference)


def test_memory_still_in_use_by_a_view_is_not_handed_out(er3a_states):
    robot, (q, dq, ddq) = er3a_states
    first = dynid.regressor(robot, q, dq, ddq)
    view, kept = first[5:9], first[5:9].copy()
    del first
    gc.collect()
    assert not recycled._pool
    second = dynid.regressor(robot, q[::-1], dq[::-1], ddq[::-1])
    assert np.array_equal(view, kept)
    assert not np.shares_memory(view, second)
