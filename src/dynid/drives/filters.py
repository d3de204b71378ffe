"""The stable first-order filter F(s) = lambda / (s + lambda) on sampled signals, and the
filtered derivative (s F)(s) = lambda - lambda F(s), so that d/dt is never applied to data.

Discretization (uniform step h): the continuous convolution z(t) = F[x](t) obeys exactly

    z_k = a z_{k-1} + int_0^h lambda e^{-lambda (h - s)} x(t_{k-1} + s) ds,    a = e^{-lambda h}

and x is interpolated on [t_{k-1}, t_k] by the cubic through x_{k-2}, x_{k-1}, x_k, x_{k+1}
(weights w_m by 12-point Gauss-Legendre, exact for the polynomial times exponential to
rounding). The local error is O(h^4) for smooth x (a "cubic hold" equivalent of F), and the
recursion runs as one ``scipy.signal.lfilter`` over all columns at once.

Filtered signals are defined on samples 1 .. N-2 (the cubic needs one neighbour on each side).
Initial states: ``filtered(x, start=x[0])`` starts the filter in steady state at x_1; the
filtered derivative lambda (x - F[x]) with that start equals F[dx/dt] started from 0, which is
how every other term of the regression is filtered (docs/voltage_identification.md, eq. V7).
"""

from __future__ import annotations

import numpy as np

from dynid.errors import DataError


def cubic_hold_weights(lam: float, h: float) -> tuple[float, np.ndarray]:
    """(a, w (4,)) of z_k = a z_{k-1} + w . (x_{k-2}, x_{k-1}, x_k, x_{k+1})."""
    nodes, weights = np.polynomial.legendre.leggauss(12)
    s = 0.5 * h * (nodes + 1.0)  # in [0, h]
    kernel = 0.5 * h * weights * lam * np.exp(-lam * (h - s))
    grid = np.array([-h, 0.0, h, 2.0 * h])  # abscissae of x_{k-2} .. x_{k+1}, origin at t_{k-1}
    w = np.empty(4)
    for m in range(4):
        others = np.delete(grid, m)
        basis = np.prod((s[:, None] - others) / (grid[m] - others), axis=1)  # Lagrange L_m(s)
        w[m] = kernel @ basis
    return float(np.exp(-lam * h)), w


def check_uniform(t: np.ndarray) -> float:
    """The step h of uniform time stamps t (N,), or DataError."""
    dt = np.diff(t)
    h = float(np.mean(dt))
    if dt.size < 4 or np.max(np.abs(dt - h)) > 1e-6 * h:
        raise DataError("acceleration-free identification needs uniformly sampled data (at least 5 samples); "
                        "resample the log first")
    return h


def filtered(x: np.ndarray, lam: float, h: float, start: np.ndarray | None = None) -> np.ndarray:
    """F[x] on samples 1..N-2: x (N, ...) -> (N-2, ...); ``start`` is the state at sample 1
    (default 0)."""
    import scipy.signal

    x = np.asarray(x, dtype=float)
    a, w = cubic_hold_weights(lam, h)
    g = w[0] * x[:-3] + w[1] * x[1:-2] + w[2] * x[2:-1] + w[3] * x[3:]  # samples 2 .. N-2
    z0 = np.zeros(x.shape[1:]) if start is None else np.asarray(start, dtype=float)
    flat = g.reshape(g.shape[0], -1)
    z, _ = scipy.signal.lfilter([1.0], [1.0, -a], flat, axis=0, zi=(a * z0.reshape(1, -1)))
    return np.concatenate([z0[None], z.reshape(g.shape)], axis=0)


def filtered_derivative(x: np.ndarray, lam: float, h: float) -> np.ndarray:
    """(s F)[x] = lambda (x - F[x]) with F started at x_1: equals F[dx/dt] started from 0."""
    x = np.asarray(x, dtype=float)
    return lam * (x[1:-1] - filtered(x, lam, h, start=x[1]))
