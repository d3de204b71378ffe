"""Finite sum of harmonic sines (thesis eq. 4.1, 4.13) and its a-priori bounds (eq. 4.5-4.12).

    q(t)   = q0 + sum_k a_k sin(m_k w_f t)                     # eq. 4.1 (q0 = 0 in the thesis)
    dq(t)  = sum_k a_k m_k w_f cos(m_k w_f t)                  # eq. 4.7
    ddq(t) = -sum_k a_k (m_k w_f)^2 sin(m_k w_f t)             # eq. 4.9

m_k are the integer multipliers (1..N in eq. 4.1; 1, 2, 4 in eq. 4.13 — note that the OCR'd
eq. 4.15 writes cos where the derivative of eq. 4.14 gives sin). Triangle inequality:

    |q - q0| <= sum |a_k|,  |dq| <= w_f sum m_k |a_k|,  |ddq| <= w_f^2 sum m_k^2 |a_k|   # eq. 4.5-4.10
"""

from __future__ import annotations

import math

import numpy as np


def n_coefficients(n_harmonics: int) -> int:
    return n_harmonics


def basis(t: np.ndarray, w_f: float, harmonics, order: int) -> np.ndarray:
    """(M, N) k-th derivative of sin(x_k t), x_k = m_k w_f: x_k^k sin(x_k t + k pi/2)."""
    x = w_f * np.asarray(harmonics, dtype=float)
    return x**order * np.sin(np.multiply.outer(t, x) + order * np.pi / 2)


def amplitude_bound(coefficients: np.ndarray, w_f: float, harmonics, order: int) -> np.ndarray:
    """(n,) sum_k x_k^order |a_k| >= max_t |d^order (q - q0)/dt^order|   (eq. 4.5, 4.8, 4.10)."""
    x = w_f * np.asarray(harmonics, dtype=float)
    return (x**order) @ np.abs(coefficients)


def equal_amplitude_limits(q_max: float, dq_max: float, ddq_max: float, harmonics) -> tuple[float, float]:
    """Largest common amplitude a and base frequency w_f that respect the limits a priori.

    With all a_k = a (eq. 4.13-4.18): |q| <= N a <= q_max gives a = q_max / N (eq. 4.11), and
    the largest multiplier m_N must satisfy m_N w_f <= min(dq_max / q_max, sqrt(ddq_max / q_max))
    (eq. 4.12; the OCR'd eq. 4.12 drops the square root that eq. 4.10 implies). Both bounds
    use the general form sum_k m_k a w_f <= dq_max, sum_k m_k^2 a w_f^2 <= ddq_max, which
    reduce to the thesis' ones when every m_k is replaced by m_N.
    q_max: largest allowed |q - q0| [rad]. Returns (a [rad], w_f [rad/s]).
    """
    m = np.asarray(harmonics, dtype=float)
    a = q_max / m.size
    w_f = min(dq_max / (a * m.sum()), math.sqrt(ddq_max / (a * (m**2).sum())))
    return a, w_f
