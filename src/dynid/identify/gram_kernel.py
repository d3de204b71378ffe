"""Compiled accumulation of the per-joint Gram matrices of a block of samples (gram.py's fast path).

For a tree robot the regressor kernel writes each joint's base columns as rows of a lane buffer
(``dynid.dynamics.regressor.regressor_rows_serial``, called by gram.py just before: a compiled
kernel that called it would keep, in Numba's on-disk cache, the copy of the dynamics kernels it
was compiled with, since the cache of this file is checked against this file only);
``gram_block`` adds the joint's own (friction,
rotor inertia, offset, motor) columns and torque as further rows, zeroes the samples left out,
and accumulates the lower triangle of X_j X_j^T = [R_j O_j tau_j]^T [R_j O_j tau_j] with a
register-blocked product (4 x 4 sums held in registers while the samples stream by: about 2.5x
the speed of a BLAS matrix product on these thin matrices, which computes both triangles).
The same pass sums the rows of X_j over each rest of joint j (the terms S, s of the rest levels,
``identify.rest_levels``, H1), so the rests need no regressor of their own.
All of it runs without the GIL, one call per block of samples.
"""

from __future__ import annotations

import numba as nb


@nb.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def syrk_lower(x, rows, count, g):
    """g[a, b] += sum_k x[a, k] x[b, k] for b <= a < rows (rows a multiple of 4), k < count, by
    4 x 4 blocks (the diagonal blocks whole: read the lower triangle); the sums are reordered
    (SIMD), as BLAS reorders them."""
    for a in range(0, rows, 4):
        xa0, xa1, xa2, xa3 = x[a], x[a + 1], x[a + 2], x[a + 3]
        for b in range(0, a + 4, 4):
            xb0, xb1, xb2, xb3 = x[b], x[b + 1], x[b + 2], x[b + 3]
            s00 = s01 = s02 = s03 = s10 = s11 = s12 = s13 = 0.0
            s20 = s21 = s22 = s23 = s30 = s31 = s32 = s33 = 0.0
            for k in range(count):
                p0, p1, p2, p3 = xa0[k], xa1[k], xa2[k], xa3[k]
                r0, r1, r2, r3 = xb0[k], xb1[k], xb2[k], xb3[k]
                s00 += p0 * r0
                s01 += p0 * r1
                s02 += p0 * r2
                s03 += p0 * r3
                s10 += p1 * r0
                s11 += p1 * r1
                s12 += p1 * r2
                s13 += p1 * r3
                s20 += p2 * r0
                s21 += p2 * r1
                s22 += p2 * r2
                s23 += p2 * r3
                s30 += p3 * r0
                s31 += p3 * r1
                s32 += p3 * r2
                s33 += p3 * r3
            g[a, b] += s00
            g[a, b + 1] += s01
            g[a, b + 2] += s02
            g[a, b + 3] += s03
            g[a + 1, b] += s10
            g[a + 1, b + 1] += s11
            g[a + 1, b + 2] += s12
            g[a + 1, b + 3] += s13
            g[a + 2, b] += s20
            g[a + 2, b + 1] += s21
            g[a + 2, b + 2] += s22
            g[a + 2, b + 3] += s23
            g[a + 3, b] += s30
            g[a + 3, b + 1] += s31
            g[a + 3, b + 2] += s32
            g[a + 3, b + 3] += s33


@nb.njit(cache=True, nogil=True)
def gram_block(own, own_rows, own_ratio, tau_row, tau, keep, xt, acc, rows, tau_sum, run, run_sums):
    """Add the block's X_j X_j^T (lower triangle) to acc (n, W, W) for every joint j, the count
    of rows used to rows (n,) and their torque sum to tau_sum (n,); the columns of X_j over the
    samples k of each rest r of joint j (run[k, j] == r >= 0) to run_sums[r, :tau_row[j] + 1].

    xt (n, W + 1, >= N): lane buffer holding the regressor rows of the block's N samples
    (``regressor_rows_serial``), its rows past tau_row zero; own (N, m, e) own columns;
    own_rows (n, E, 3): destination row, motor and column of each own row (destination -1:
    unused), own_ratio (n, E) its factor; tau_row (n,): the row of tau_j (the last of X_j);
    tau (N, n); keep (N, n) rows to use (a rest's rows are rows used); run (N, n) or (0, n):
    no rests; run_sums (R, >= W)."""
    count, n = tau.shape
    for j in range(n):
        x = xt[j]
        for e in range(own_rows.shape[1]):
            dest = own_rows[j, e, 0]
            if dest < 0:
                continue
            motor, col, ratio = own_rows[j, e, 1], own_rows[j, e, 2], own_ratio[j, e]
            for k in range(count):
                x[dest, k] = ratio * own[k, motor, col]
        last = tau_row[j]
        for k in range(count):
            x[last, k] = tau[k, j]
        for k in range(count):
            if keep[k, j]:
                rows[j] += 1
                tau_sum[j] += tau[k, j]
            else:
                for r in range(last + 1):
                    x[r, k] = 0.0
        if run.shape[0]:
            add_run_sums(x, last + 1, run[:, j], run_sums)
        syrk_lower(x, 4 * ((last + 4) // 4), count, acc[j])


@nb.njit(cache=True, nogil=True)
def add_run_sums(x, rows, run, run_sums):
    """run_sums[r, :rows] += the sum of x[:rows, k] over the samples k of each rest r (run[k] == r;
    -1: none; a rest's samples are contiguous), one stretch at a time along the contiguous rows."""
    count, k = run.shape[0], 0
    while k < count:
        label = run[k]
        end = k + 1
        while end < count and run[end] == label:
            end += 1
        if label >= 0:
            for r in range(rows):
                total = 0.0
                for i in range(k, end):
                    total += x[r, i]
                run_sums[label, r] += total
        k = end
