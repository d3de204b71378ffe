"""The formulas of the regressor's blocks (dynamics/regressor.py, module docstring R1-R3) for one
sample: plain arithmetic on their arguments, so that the lane kernels compile them and
``folded.py`` runs them on symbols to write a robot's own kernel."""

from __future__ import annotations

import numba as nb

from dynid.dynamics.lanes import cross3


@nb.njit(cache=True, inline="always")
def link_terms(w0, w1, w2, e0, e1, e2):
    """The entries of M and G (regressor.py's module docstring, R2-R3) of a link with angular
    velocity w and acceleration dw = e, besides e itself: with p_ab = w_a w_b,
    M = [[-(p11 + p22), p01 + e2, p02 - e1], [p01 - e2, -(p00 + p22), p12 + e0],
         [p02 + e1, p12 - e0, -(p00 + p11)]],
    G = [[e0, p02, -p01], [e1 - p02, e0 + p12, p00 - p11], [e2 + p01, p22 - p00, e0 - p12],
         [-p12, e1, p01], [p11 - p22, e2 - p01, e1 + p02], [p12, -p02, e2]];
    returned as (p01, p02, p12, G10, G11, G12, G20, G21, G22, G40, G41, G42, M00, M11, M22)."""
    p00, p11, p22, p01, p02, p12 = w0 * w0, w1 * w1, w2 * w2, w0 * w1, w0 * w2, w1 * w2
    return (p01, p02, p12, e1 - p02, e0 + p12, p00 - p11, e2 + p01, p22 - p00, e0 - p12, p11 - p22, e2 - p01,
            e1 + p02, -(p11 + p22), -(p00 + p22), -(p00 + p11))


@nb.njit(cache=True, inline="always")
def link_block(u0, u1, u2, s0, s1, s2, a0, a1, a2, e0, e1, e2, t):
    """Y[i, 10 j : 10 j + 10] from joint i's axis (u, s) and link j's classical acceleration a,
    dw = e and ``link_terms`` t, all in frame j: R1-R3 of regressor.py's module docstring."""
    p01, p02, p12, g10, g11, g12, g20, g21, g22, g40, g41, g42, m00, m11, m22 = t
    return (s0 * a0 + s1 * a1 + s2 * a2,
            m00 * s0 + g20 * s1 - g10 * s2 + a1 * u2 - a2 * u1,
            m11 * s1 - g41 * s0 + g11 * s2 + a2 * u0 - a0 * u2,
            m22 * s2 + g42 * s0 - g22 * s1 + a0 * u1 - a1 * u0,
            e0 * u0 + p02 * u1 - p01 * u2,
            g10 * u0 + g11 * u1 + g12 * u2,
            g20 * u0 + g21 * u1 + g22 * u2,
            e1 * u1 - p12 * u0 + p01 * u2,
            g40 * u0 + g41 * u1 + g42 * u2,
            e2 * u2 + p12 * u0 - p02 * u1)


@nb.njit(cache=True, inline="always")
def carry_axis(rel, t, up, sp):
    """Joint i's axis (u, s) in frame j from (up, sp) in frame p(j): S_i^(j) = X_{j<-p} S_i^(p),
    u = R^T up, s = R^T (sp - t x up), with R = rel (9, row major) and t of joint j."""
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = rel
    p0, p1, p2 = up
    l0, l1, l2 = sp
    c0, c1, c2 = cross3(t[0], t[1], t[2], p0, p1, p2)
    l0, l1, l2 = l0 - c0, l1 - c1, l2 - c2
    u0 = r00 * p0 + r10 * p1 + r20 * p2
    u1 = r01 * p0 + r11 * p1 + r21 * p2
    u2 = r02 * p0 + r12 * p1 + r22 * p2
    s0 = r00 * l0 + r10 * l1 + r20 * l2
    s1 = r01 * l0 + r11 * l1 + r21 * l2
    s2 = r02 * l0 + r12 * l1 + r22 * l2
    return (u0, u1, u2), (s0, s1, s2)
