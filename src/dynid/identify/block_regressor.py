"""The rigid-body regressor of a block of samples, computed without the GIL.

``dynid.regressor`` parallelizes over samples with Numba's thread pool, which holds the
calling thread's GIL and spins between calls. For streaming identification it is faster to
give each worker thread whole blocks: this runs the same kernels serially with the GIL
released (``dynid.dynamics.regressor.regressor_serial``, the same numbers), so several threads
compute regressors and Gram matrices (BLAS, also without the GIL) at once while the main thread
reads and filters the next chunk.
"""

from __future__ import annotations

import numpy as np

from dynid.dynamics.lanes import kernel_arrays
from dynid.dynamics.regressor import regressor_serial


def rigid_regressor_block(robot, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Fill ``out`` (N, n, 10 n), C-contiguous, zero outside the ancestor blocks, with the
    rigid-body regressor of (N, n) C-contiguous q, dq, ddq, in the calling thread, GIL released.
    A robot with mimic joints takes the NumPy projection of dynamics/mimic.py instead (GIL held)."""
    if robot.has_mimic:
        from dynid.dynamics import regressor

        return regressor(robot, q, dq, ddq, out=out)
    regressor_serial(q, dq, ddq, *kernel_arrays(robot), out, 0, False)  # dynid.regressor's types: one compiled kernel
    return out

