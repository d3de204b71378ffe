"""sin and cos of one angle in straight-line arithmetic, so that loops over samples vectorize.

Numba calls the C library for ``math.sin``/``math.cos``, one sample at a time, and a call in a
loop stops the compiler from using SIMD instructions for the rest of it. ``sincos`` is the
textbook method instead (Muller, "Elementary Functions", 3rd ed., ch. 11): reduce x by the
nearest multiple n of pi/2, r = x - n pi/2 in |r| <= pi/4 (Cody-Waite: pi/2 split in three
parts, the first two with 33 significant bits so that n * PIO2_1 and n * PIO2_2 are exact for
|n| < 2^20), then the Taylor series of sin and cos in r and the quadrant n mod 4. The series
are cut after r^17 and r^18: the first terms left out are below (pi/4)^19 / 19! = 7e-20 and
(pi/4)^20 / 20! = 3e-21, far under half an ulp, so the result is within about one ulp of the
correctly rounded value (tests/test_sincos.py checks it against the C library).

The reduction is trusted only for |x| < ``SINCOS_LIMIT`` (1e5, well inside 2^20 pi/2); callers send larger
angles (never a joint angle in practice, but accepted) to ``math.sin``/``math.cos``.
"""

from __future__ import annotations

import math

import numba as nb

TWO_OVER_PI = 0.6366197723675814
PIO2_1 = 1.5707963267341256  # pi/2 = PIO2_1 + PIO2_2 + PIO2_3 (33 + 33 + 53 bits)
PIO2_2 = 6.077100506303966e-11
PIO2_3 = 2.0222662487959506e-21
SINCOS_LIMIT = 1.0e5  # |x| below this: |n| < 2^16, so n * PIO2_1 and n * PIO2_2 are exact

# Taylor coefficients (-1)^k / (2k+1)! and (-1)^k / (2k)!, k = 1..
S1, S2, S3, S4 = -1.0 / 6.0, 1.0 / 120.0, -1.0 / 5040.0, 1.0 / 362880.0
S5, S6, S7, S8 = -1.0 / 39916800.0, 1.0 / 6227020800.0, -1.0 / 1307674368000.0, 1.0 / 355687428096000.0
C1, C2, C3, C4 = -0.5, 1.0 / 24.0, -1.0 / 720.0, 1.0 / 40320.0
C5, C6, C7, C8 = -1.0 / 3628800.0, 1.0 / 479001600.0, -1.0 / 87178291200.0, 1.0 / 20922789888000.0
C9 = -1.0 / 6402373705728000.0


@nb.njit(cache=True, inline="always")
def sincos(x):
    """(sin x, cos x) for |x| < SINCOS_LIMIT, within about one ulp; no call, no loop."""
    n = math.floor(x * TWO_OVER_PI + 0.5)
    r = ((x - n * PIO2_1) - n * PIO2_2) - n * PIO2_3
    z = r * r
    s = r + r * z * (S1 + z * (S2 + z * (S3 + z * (S4 + z * (S5 + z * (S6 + z * (S7 + z * S8)))))))
    c = 1.0 + z * (C1 + z * (C2 + z * (C3 + z * (C4 + z * (C5 + z * (C6 + z * (C7 + z * (C8 + z * C9))))))))
    quadrant = n - 4.0 * math.floor(n * 0.25)  # n mod 4 as 0.0, 1.0, 2.0, 3.0
    odd = quadrant == 1.0 or quadrant == 3.0
    sin_x = c if odd else s
    cos_x = s if odd else c
    if quadrant >= 2.0:
        sin_x = -sin_x
    if quadrant == 1.0 or quadrant == 2.0:
        cos_x = -cos_x
    return sin_x, cos_x
