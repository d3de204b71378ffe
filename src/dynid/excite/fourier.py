"""Finite Fourier series with offset (thesis eq. 4.19-4.21).

    q_i(t)   = q_i0 + sum_l [ a_li/(w_f l) sin(w_f l t) - b_li/(w_f l) cos(w_f l t) ]   # eq. 4.19
    dq_i(t)  = sum_l [ a_li cos(w_f l t) + b_li sin(w_f l t) ]                          # eq. 4.20
    ddq_i(t) = w_f sum_l l [ -a_li sin(w_f l t) + b_li cos(w_f l t) ]                   # eq. 4.21

The OCR'd eq. 4.21 of the thesis lacks the factor l inside the sum; the form above is the
time derivative of eq. 4.20. Coefficient rows are a_1..a_N then b_1..b_N (units rad/s).
With x_l = w_f l, the k-th derivative of each basis function is a phase-shifted sinusoid:

    d^k/dt^k [ sin(x t)/x ] = x^(k-1) sin(x t + k pi/2)
    d^k/dt^k [-cos(x t)/x ] = -x^(k-1) cos(x t + k pi/2)
"""

from __future__ import annotations

import numpy as np


def n_coefficients(n_harmonics: int) -> int:
    return 2 * n_harmonics


def basis(t: np.ndarray, w_f: float, harmonics, order: int) -> np.ndarray:
    """(M, 2N) k-th derivative of the basis [sin(x_l t)/x_l | -cos(x_l t)/x_l], x_l = w_f l."""
    x = w_f * np.asarray(harmonics, dtype=float)
    phase = np.multiply.outer(t, x) + order * np.pi / 2
    scale = x ** (order - 1)
    return np.concatenate([scale * np.sin(phase), -scale * np.cos(phase)], axis=1)


def amplitude_bound(coefficients: np.ndarray, w_f: float, harmonics, order: int) -> np.ndarray:
    """(n,) sum_l x_l^(k-1) sqrt(a_l^2 + b_l^2) >= max_t |d^k (q - q0)/dt^k| (each harmonic exactly)."""
    x = w_f * np.asarray(harmonics, dtype=float)
    m = len(x)
    amplitude = np.hypot(coefficients[:m], coefficients[m:])
    return (x ** (order - 1)) @ amplitude

