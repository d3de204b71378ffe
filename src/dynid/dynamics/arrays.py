"""Shape checks for the time-major joint arrays every batched function takes."""

from __future__ import annotations

import numpy as np

from dynid.errors import DataError


def joint_arrays(robot, **arrays) -> tuple[list[np.ndarray], bool]:
    """Check named arrays are (N, n) (or one sample (n,)) with equal N; return them 2-D.

    Returns the arrays as float (N, n) and whether the input was a single sample, so the
    caller can squeeze its result back.
    """
    out, single, count = [], None, None
    for name, value in arrays.items():
        a = np.asarray(value, dtype=float)
        if a.ndim == 1:
            a = a[None, :]
            is_single = True
        elif a.ndim == 2:
            is_single = False
        else:
            raise DataError(f"{name}: expected shape (N, {robot.n}) or ({robot.n},), got {a.shape}")
        if a.shape[1] != robot.n:
            raise DataError(
                f"{name}: expected {robot.n} columns (one per joint of '{robot.name}'), got shape {a.shape}"
            )
        if count is not None and a.shape[0] != count:
            raise DataError(f"{name}: {a.shape[0]} samples, but the other arrays have {count}")
        if single is not None and is_single != single:
            raise DataError(f"{name}: mixes a single sample with batched arrays")
        count, single = a.shape[0], is_single
        out.append(a)
    return out, bool(single)
