"""The rigid-body regressor of a block of samples, compiled without the GIL.

``dynid.regressor`` parallelizes over samples with Numba's OpenMP pool, which holds the
calling thread's GIL and spins between calls. For streaming identification it is faster to
give each worker thread whole blocks: this kernel runs the foundation's per-sample kernel
(``dynid.dynamics.regressor._regressor_sample``, the same numbers) serially with the GIL
released, so several threads compute regressors and Gram matrices (BLAS, also without the
GIL) at once while the main thread reads and filters the next chunk.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from dynid.dynamics.kernels import robot_arrays
from dynid.dynamics.regressor import _regressor_sample


@nb.njit(cache=True, nogil=True)
def _regressor_block(q, dq, ddq, parents, revolute, p_rot, p_t, axis, e_rot, e_t, screw, gravity, y):
    for k in range(q.shape[0]):
        _regressor_sample(k, q, dq, ddq, parents, revolute, p_rot, p_t, axis, e_rot, e_t, screw, gravity, y)


def rigid_regressor_block(robot, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Fill ``out`` (N, n, 10 n), C-contiguous, zero outside the ancestor blocks, with the
    rigid-body regressor of (N, n) C-contiguous q, dq, ddq, in the calling thread, GIL released.
    A robot with mimic joints takes the NumPy projection of dynamics/mimic.py instead (GIL held)."""
    if robot.has_mimic:
        from dynid.dynamics import regressor

        return regressor(robot, q, dq, ddq, out=out)
    _regressor_block(q, dq, ddq, *robot_arrays(robot), out)
    return out
