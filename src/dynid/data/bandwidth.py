"""The motion's bandwidth, measured from the logged positions.

A low-pass filter on q must pass the motion and may stop everything above it: encoder
quantization, sensor noise, a structural mode of the arm (none of it is rigid-body motion).
The cross-validation of the cutoff (``identify.crossval``) cannot always tell those apart,
when the torque's own noise is far larger than the model's error; it then needs to know where
the motion ends. When the excitation trajectory is known, its highest harmonic says so; for any
other log it is measured here:

1. each piece of the log (a file, segment or block: ``blocks``) on its own uniform grid at the
   median rate (linear interpolation over dropped samples or jittered stamps), each joint's q
   detrended by its straight line and weighted by a Hann window (short logs: the window's side
   lobes, not the jump between the ends, decide what leaks to high frequency);
2. its one-sided periodogram P_j(f) (``scipy.signal.periodogram``); the white noise floor of q
   (quantization, sensor noise) is the median of P_j over the upper half of the band
   [fs / 4, fs / 2], where a robot's motion carries no power, and is subtracted (clipped at 0);
3. the pieces' power, each weighted by its duration, summed on a common frequency axis;
4. B_j = the lowest frequency below which ``FRACTION`` = 99 % of joint j's motion power lies:
   the *occupied bandwidth* of radio engineering with beta = 1 % (ITU Radio Regulations,
   No. 1.153: the band outside which a fraction beta of the mean power is emitted; here a
   baseband signal, so all of beta above B_j);                                          (B1)
5. B = max over the joints that move (the filter acts on every joint: it must pass each one's
   motion; a joint held still carries only its noise and wander, and is left out).       (B2)

The power is that of q, not of its derivatives: the harmonics that carry 99 % of the position's
power are the motion; a structural mode of a few 1e-4 rad, or quantization steps, are far
below 1 % of it however large they become in ddq. bench/cutoff_tie.py prints B: 1.25-1.375 Hz
on 6 s, 5 kHz motor-side logs of a multi-sine up to 1.2 Hz with a 30-40 Hz mode (the Hann
window's main lobe adds up to 2 / T = 0.33 Hz), 0.50 Hz on a 20 s, 500 Hz er3a log up to
0.5 Hz; tests/test_motion_bandwidth.py holds it to the top harmonic under quantization, jitter,
dropped samples, a structural mode and cut files.
"""

from __future__ import annotations

import numpy as np

from dynid.data.columns import ColumnMapping, JointData
from dynid.data.preprocess import sample_rate
from dynid.data.segments import DEFAULT_BRIDGE_GAP, MAX_BRIDGE_GAP, bridge_for_motion

FRACTION = 0.99  # (B1): the share of the position's power below the bandwidth (ITU beta = 1 %)
AXIS_POINTS = 20_001  # the common frequency axis the pieces' cumulative power is summed on


def motion_bandwidth(blocks: list[JointData], joints: list[int] | None = None,
                     fraction: float = FRACTION) -> float | None:
    """B [Hz] (B2) of the pieces ``blocks`` (each with t (N,) [s] and q (N, n)): the largest
    occupied bandwidth (B1) of the ``joints`` (0-based; None: all) whose motion has any power
    above the noise floor; None when no piece is long enough (16 samples) or no joint moves."""
    pieces = [b for b in blocks if len(b) >= 16 and float(b.t[-1] - b.t[0]) > 0.0]
    if not pieces:
        return None
    n = pieces[0].q.shape[1]
    joints = list(range(n)) if joints is None else list(joints)
    if not joints:
        return None
    top = max(0.5 * sample_rate(b.t) for b in pieces)
    axis = np.linspace(0.0, top, AXIS_POINTS)
    energy = np.zeros((AXIS_POINTS, len(joints)))  # cumulative motion power x duration, per joint
    for b in pieces:
        f, power, seconds = _spectrum(b, joints)
        floor = np.median(power[f >= 0.5 * f[-1]], axis=0)  # step 2: white noise of q
        motion = np.clip(power - floor, 0.0, None)
        cumulative = np.cumsum(motion, axis=0) * (f[1] - f[0]) * seconds
        energy += np.column_stack([np.interp(axis, f, cumulative[:, k]) for k in range(len(joints))])
    widths = [float(axis[np.searchsorted(energy[:, k], fraction * energy[-1, k])])
              for k in range(len(joints)) if energy[-1, k] > 0.0]
    return max(widths) if widths else None


def _spectrum(b: JointData, joints: list[int]) -> tuple[np.ndarray, np.ndarray, float]:
    """(f (F,) [Hz], one-sided periodogram (F, k) of the joints' q, duration [s]) of one piece on
    its uniform grid at the median rate (step 1)."""
    import scipy.signal

    fs = sample_rate(b.t)
    t = np.arange(b.t[0], b.t[-1], 1.0 / fs)
    q = np.column_stack([np.interp(t, b.t, b.q[:, j]) for j in joints])
    f, power = scipy.signal.periodogram(q, fs, window="hann", detrend="linear", axis=0)
    return f, power, len(t) / fs


def choose_bridge_gap(robot, paths, prep, mapping: ColumnMapping = ColumnMapping(), nan: str = "drop",
                      chunk_rows: int = 50_000, budget: int = 240_000) -> tuple[object, dict]:
    """(``prep`` with ``bridge_gap`` from the motion, result.json's "gap_bridging"): B (B2) of
    the log file(s) or array logs ``paths``, read in pieces cut only at steps longer than
    ``MAX_BRIDGE_GAP`` (step 1 interpolates over shorter ones), then the longest step that cubic
    interpolation bridges within 1e-5 of the motion's amplitude (``data.segments``, S1-S2)."""
    from dataclasses import replace

    from dynid.data.blocks import pieces, read_blocks

    paths = list(paths)
    share = max(budget // max(len(paths), 1), 1)
    wide = replace(prep, bridge_gap=MAX_BRIDGE_GAP)
    blocks = pieces([b for p in paths for b in read_blocks(p, robot, mapping, nan, share, 5, chunk_rows, wide)])
    bandwidth = motion_bandwidth(blocks)
    gap = bridge_for_motion(bandwidth)
    info = {"method": f"0.0396 s Hz / motion bandwidth (cubic interpolation within 1e-5 of the motion's "
                      f"amplitude), clipped to [{DEFAULT_BRIDGE_GAP:g}, {MAX_BRIDGE_GAP:g}] s",
            "motion_bandwidth_hz": bandwidth, "bridge_gap": gap}
    return replace(prep, bridge_gap=gap), info
