"""Preprocessing of joint data: resampling, zero-phase low-pass, differentiation, decimation.

The chain ``prepare`` applies, in order (each step documented below):

1. resample to a uniform grid when time stamps are irregular (a step of the segment deviating
   more than 0.1 % from its median step) or a rate is asked for: cubic spline of q (and dq,
   ddq), linear interpolation of tau; cycle/stage take the previous sample's label. A
   segment's rate and whether it is irregular follow ``data.timing`` (the median of its first
   steps; every step), never the way a streamed log is cut into chunks;
2. zero-phase Butterworth low-pass (order 4, forward and backward) of q, dq, ddq (and tau when
   ``filter_torque``), each end continued by a fitted polynomial with exact initial states, so
   there is no start-up transient (``data.edges``); the default cutoff is min(20 Hz, fs / 10);
2b. with ``filter_torque`` (Gautier's parallel filtering: the torque and the regressor through the
   same filter), the columns that are not smooth in the signals (the sign of Coulomb friction;
   ``joint_columns``, when given) are filtered too, exactly; the rigid-body columns, built from the
   filtered signals, equal their filtered selves up to the filter's effect on products of signals;
3. differentiation where dq or ddq are absent: time-aware central differences (second
   order on irregular grids, ``numpy.gradient``) or Savitzky-Golay derivatives;
3b. a torque logged late (``tau_delay``, a driver's filter) is moved earlier by whole samples;
3c. standing still (``rest_band``; ``data.rest`` measures it, ``data.still`` applies it): where
   a joint's raw position stays within its band over ``rest_window`` seconds before or after
   a sample, its dq is 0 there (the filter spreads every stop over the rest; the friction
   sign must not follow it; ddq stays the filtered one, which the ends of a stop need).

4. decimation by k (``Preprocessing.decimate``): q (dq and ddq then follow by differences,
   which commute with the filter) and tau all pass the same zero-phase low-pass with cutoff
   0.8 x the new Nyquist frequency fs / (2 k), then every k-th sample of the global grid
   is kept. This is Gautier's parallel filtering applied to
   the signals the regressor is built from: it equals filtering the regressor W itself
   (``parallel_decimate``, which needs W at every sample) for the terms linear in the
   signals, and up to the filter's effect on the products of signals otherwise, which is
   negligible when the motion's bandwidth is far below the cutoff (as after step 2). Columns
   that are not smooth in the signals (the sign of Coulomb friction) are computed at the full
   rate and filtered exactly when ``prepare`` is given ``joint_columns``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from dynid.data.columns import JointData
from dynid.data.edges import lowpass_edges
from dynid.data.segments import (
    DEFAULT_BRIDGE_GAP, DEFAULT_MAX_GAP, check_segmentation, concat, describe, gap_rule, segment_ranges,
)
from dynid.data.still import REST_WINDOW, still_mask
from dynid.data.timing import IRREGULAR_TOLERANCE, SegmentTiming, segment_timing
from dynid.errors import DataError

# a cutoff above this fraction of the Nyquist frequency filters (almost) nothing: none is applied
NYQUIST_MARGIN = 0.98


@dataclass(frozen=True)
class Preprocessing:
    """Settings of ``prepare``; stored in result.json so ``predict`` repeats them.

    lowpass_hz: cutoff [Hz]; None = default min(20, fs/10); 0 = no filtering
    derivative: "central" | "savgol"
    savgol_window: samples (odd) of the Savitzky-Golay window; savgol_order: its polynomial
    resample_hz: resample to this rate (None = only when time stamps are irregular)
    decimate: keep every k-th sample after parallel filtering (step 4; 1 = off)
    min_velocity: samples of a joint with |dq| below this [rad/s | m/s] are left out of the fit
    trim: samples left out of fits and scores at each end of a log (filter and derivative
      edge effects); None = fs / (2 cutoff) when filtering, else 2 (``edge_samples``)
    filter_torque: low-pass tau with the same filter (off by default: torque noise then stays
      white, which the Khalil-Gautier standard deviations assume; decimation filters both)
    segments: "gaps" (split at gaps and 'segment' labels) | "auto" (also at time resets);
      max_gap: steps longer than this multiple of the median step split the log (``data.segments``)
      unless they are at most bridge_gap [s] long (dropped cycles: resampled inside the segment)
    tau_delay: the logged torque lags the positions by this much [s] (a driver's filter): each
      segment's tau is moved earlier by round(tau_delay fs) samples (step 3b); the samples
      this leaves without a torque fall in the segment's edge samples, never fitted or scored
    rest_band: per joint [rad | m]: standing still where the raw position stays within it over
      ``rest_window`` (per joint [s]; () = 0.05 s) before or after a sample: dq = 0 there
      (step 3c, ``data.rest``); () = off
    reversal_span: per joint: its rows within this many samples (at the prepared rate) of a
      velocity reversal are left out of fits (``data.reversals``: the acceleration estimate smears
      the friction flip there); 0 or () = off (set by ``--friction auto|stribeck|load-dependent``
      for the joints whose log shows the smear)
    reversal_velocity: per joint [rad/s | m/s]: rows with |dq| at most this are slow (their sign
      is the noise's), left out with the span around them; () = only dq = 0
    """

    lowpass_hz: float | None = None
    filter_order: int = 4
    derivative: str = "central"
    savgol_window: int = 11
    savgol_order: int = 3
    resample_hz: float | None = None
    decimate: int = 1
    min_velocity: float = 0.0
    trim: int | None = None
    filter_torque: bool = False
    segments: str = "gaps"
    max_gap: float = DEFAULT_MAX_GAP
    tau_delay: float = 0.0
    bridge_gap: float = DEFAULT_BRIDGE_GAP
    rest_band: tuple[float, ...] = ()
    rest_window: tuple[float, ...] = ()
    reversal_span: tuple[float, ...] = ()
    reversal_velocity: tuple[float, ...] = ()

    def __post_init__(self):
        check_segmentation(self.segments, self.max_gap, self.bridge_gap)
        band = tuple(float(v) for v in (self.rest_band or ()))
        window = tuple(float(v) for v in np.atleast_1d(self.rest_window if self.rest_window is not None else ()))
        if not all(math.isfinite(v) and v >= 0.0 for v in band) or not all(math.isfinite(v) and v > 0.0
                                                                              for v in window) \
                or (band and len(window) not in (0, 1, len(band))):
            raise DataError(f"rest band {list(band)} over {list(window)} s: expected position bands >= 0 and a window "
                            "> 0 per joint")
        object.__setattr__(self, "rest_band", band)
        object.__setattr__(self, "rest_window", window)
        span = tuple(float(v) for v in (self.reversal_span or ()))
        slow = tuple(float(v) for v in (self.reversal_velocity or ()))
        if not all(math.isfinite(v) and v >= 0.0 for v in span + slow):
            raise DataError(f"reversal span {list(span)} samples, velocities {list(slow)}: expected numbers >= 0")
        object.__setattr__(self, "reversal_span", span)
        object.__setattr__(self, "reversal_velocity", slow)
        if not abs(self.tau_delay) < 1.0:
            raise DataError(f"--tau-delay {self.tau_delay}: expected a delay in seconds below 1 s")
        if self.derivative not in ("central", "savgol"):
            raise DataError(f"derivative method '{self.derivative}' unknown, expected central or savgol")
        if self.decimate < 1:
            raise DataError(f"decimate must be >= 1, got {self.decimate}")
        for name, value, low in (("lowpass", self.lowpass_hz, 0.0), ("resample", self.resample_hz, None),
                                 ("min-velocity", self.min_velocity, 0.0), ("trim", self.trim, 0)):
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                    or (value < low if low is not None else value <= 0):
                expected = f">= {low:g}" if low is not None else "> 0"
                raise DataError(f"--{name} {value!r}: expected a finite number {expected}")

    def to_dict(self) -> dict:
        out = dict(self.__dict__)
        out["rest_band"], out["rest_window"] = list(self.rest_band), list(self.rest_window)
        out["reversal_span"], out["reversal_velocity"] = list(self.reversal_span), list(self.reversal_velocity)
        return out

    @classmethod
    def from_dict(cls, d: dict | None) -> "Preprocessing":
        return cls(**(d or {}))

    def cutoff(self, fs: float) -> float:
        """The low-pass cutoff used at sample rate fs [Hz] (0 = none). A cutoff given at or above the
        Nyquist frequency fs / 2 filters nothing: it warns (a log slower than the user thought). So does
        one within ``NYQUIST_MARGIN`` of it: there a Butterworth filter's poles approach z = -1, it
        filters almost nothing and takes ~1900 / (1 - 2 fc / fs) samples to settle (a 100 Hz log
        whose time stamps give fs = 100.0000001 Hz and --lowpass 50 asked for 2e10 samples)."""
        fc = min(20.0, fs / 10.0) if self.lowpass_hz is None else float(self.lowpass_hz)
        nyquist = 0.5 * fs
        if self.lowpass_hz is not None and fc >= NYQUIST_MARGIN * nyquist > 0.0:
            import warnings

            from dynid.errors import DynidWarning

            where = ("at or above the Nyquist frequency" if fc >= nyquist else
                     f"within {100 * (1 - NYQUIST_MARGIN):g} % of the Nyquist frequency")
            warnings.warn(DynidWarning(f"--lowpass {fc:g} Hz is {where} {nyquist:g} Hz of a log sampled at {fs:.4g} "
                                       f"Hz: no low-pass filter applied (give a cutoff below "
                                       f"{NYQUIST_MARGIN * nyquist:.4g} Hz, or --lowpass 0 for none)"), stacklevel=2)
        return fc if 0.0 < fc < NYQUIST_MARGIN * nyquist else 0.0


def sample_rate(t: np.ndarray) -> float:
    """Median sample rate [Hz] of time stamps t (N,)."""
    return 1.0 / float(np.median(np.diff(t)))


def prepared_rate(data: JointData) -> float:
    """The uniform rate [Hz] of prepared data (``JointData.rate``; the median rate of its time
    stamps when preprocessing did not record one)."""
    return float(data.rate) if data.rate else sample_rate(data.t)


def is_irregular(t: np.ndarray) -> bool:
    dt = np.diff(t)
    med = np.median(dt)
    return bool(np.max(np.abs(dt - med)) > IRREGULAR_TOLERANCE * med)


MAX_UPSAMPLING = 10  # --resample above this multiple of the log's rate is refused (memory, no information)


def uniform_grid(t: np.ndarray, fs: float, t0: float | None = None) -> np.ndarray:
    """Times t0 + k / fs within [t[0], t[-1]] (t0 defaults to t[0])."""
    t0 = t[0] if t0 is None else t0
    k0 = int(np.ceil((t[0] - t0) * fs - 1e-9))
    k1 = int(np.floor((t[-1] - t0) * fs + 1e-9))
    return t0 + np.arange(k0, k1 + 1) / fs


SNAP = 1e-3  # a grid point this close to a logged time stamp (a fraction of the step) takes the stamp
MOSTLY_LOGGED = 0.9  # a window whose grid points are logged stamps this often is a regular log with holes


def resample(data: JointData, fs: float, t0: float | None = None) -> JointData:
    """JointData on the uniform grid t0 + k/fs (cubic spline for motion, linear for torque).

    In a regular log with holes (rows dropped for NaN: ``MOSTLY_LOGGED`` of the grid points are
    within ``SNAP`` of a step of a logged time stamp) those grid points are the logged stamps,
    exactly (so the windows of one stream agree on them), and the points that fill the holes are
    marked ``filled`` (``predict`` writes the log's own samples only). A log whose stamps are mostly
    off the grid (jitter) keeps the plain grid, nothing marked: every grid point is a sample of the
    resampled log."""
    import scipy.interpolate

    grid = uniform_grid(data.t, fs, t0)
    filled = None
    if len(grid) and len(data) > 1:
        k = np.clip(np.searchsorted(data.t, grid), 1, len(data) - 1)
        nearest = np.where(np.abs(data.t[k - 1] - grid) <= np.abs(data.t[k] - grid), k - 1, k)
        logged = np.abs(data.t[nearest] - grid) <= SNAP / fs
        if logged.mean() >= MOSTLY_LOGGED:  # a regular log with holes (jittered logs keep the plain grid)
            grid = np.where(logged, data.t[nearest], grid)
            filled = None if logged.all() else ~logged
    spline = lambda a: None if a is None else scipy.interpolate.CubicSpline(data.t, a, axis=0)(grid)  # noqa: E731
    tau = None
    if data.tau is not None:
        tau = np.column_stack([np.interp(grid, data.t, data.tau[:, j]) for j in range(data.tau.shape[1])])
    prev = np.clip(np.searchsorted(data.t, grid, side="right") - 1, 0, len(data) - 1)
    label = lambda a: None if a is None else a[prev]  # noqa: E731
    return JointData(grid, spline(data.q), spline(data.dq), spline(data.ddq), tau, label(data.cycle),
                     label(data.stage), data.source, list(data.notes), segment=label(data.segment), filled=filled)


def lowpass(x: np.ndarray, fs: float, cutoff: float, order: int = 4) -> np.ndarray:
    """Zero-phase Butterworth low-pass of x (N, ...) along time (forward-backward), each end
    continued by a fitted polynomial with exact initial states: no start-up transient
    (``data.edges``)."""
    if cutoff <= 0.0:
        return x
    return lowpass_edges(x, fs, cutoff, order)


def central_derivative(t: np.ndarray, x: np.ndarray, step: float | None = None) -> np.ndarray:
    """dx/dt (N, ...) by second-order central differences on the (possibly irregular) grid t.

    A grid uniform to 1e-9 relative uses one scalar step (the same numbers to 1e-9, faster):
    ``step`` [s] when given (the segment's, so a piece of it gives the same numbers), else the
    mean step of t."""
    dt = np.diff(t)
    mean = float(dt.mean())
    if np.max(np.abs(dt - mean)) <= 1e-9 * mean:
        return np.gradient(x, mean if step is None or abs(step - mean) > 1e-9 * mean else step, axis=0,
                           edge_order=2)
    return np.gradient(x, t, axis=0, edge_order=2)


def savgol_derivative(x: np.ndarray, dt: float, window: int = 11, order: int = 3) -> np.ndarray:
    """dx/dt (N, ...) by a Savitzky-Golay filter on a uniform grid of step dt."""
    import scipy.signal

    window = window if window % 2 else window + 1
    if window > x.shape[0]:
        window = x.shape[0] if x.shape[0] % 2 else x.shape[0] - 1
    if window <= order:
        raise DataError(f"Savitzky-Golay: {x.shape[0]} samples are too few for order {order}")
    return scipy.signal.savgol_filter(x, window, order, deriv=1, delta=dt, axis=0)


def irregular_note(fs: float, prep: Preprocessing) -> str:
    return (f"irregular time stamps: resampled to a uniform {fs:.6g} Hz grid ("
            f"{gap_rule(1.0 / fs, prep.max_gap, prep.bridge_gap)}, never interpolated)")


def too_short(data: JointData, prep: Preprocessing, timing: SegmentTiming | None = None) -> str | None:
    """Why a segment of raw samples leaves nothing after its ``edge_samples`` (None when it does not);
    timing: its ``segment_timing`` when the caller has it (else taken from ``data``)."""
    if len(data) >= 3:
        fs = (timing or segment_timing(data.t)).rate
        trim = edge_samples(prep, fs / prep.decimate)
        if len(data) > 2 * trim * prep.decimate:
            return None
        need = f"more than 2 x {trim} edge samples"
    else:
        need = "at least 3"
    return f"{len(data)} samples, the filter and the derivatives need {need}"


def prepare(data: JointData, prep: Preprocessing = Preprocessing(), grid_t0: float | None = None,
            joint_columns=None) -> JointData:
    """Resample, filter and differentiate (module docstring); returns q, dq, ddq all filled.

    All samples are kept; ``edge_samples`` says how many at each end fits should skip.
    joint_columns(q, dq, ddq) -> (N, n, e): with decimation or a filtered torque, columns filtered
    exactly (``own``; ``identify.model.own_columns``).

    A log of several segments (``data.segment``, ``data.segments``) is prepared segment by
    segment (each on its own grid; nothing crosses a boundary); a segment too short to keep a
    sample after its edges is dropped with a note, and when none is left that is an error."""
    parts = segment_ranges(data)
    if len(parts) == 1:
        return prepare_segment(data, prep, grid_t0, joint_columns)
    ready, notes = [], list(data.notes)
    for segment, rows in parts:
        piece = data.select(rows)
        piece.notes = []
        timing = segment_timing(piece.t)  # one pass over its time stamps for both
        reason = too_short(piece, prep, timing)
        if reason:
            notes.append(f"{describe(piece, segment)} dropped: {reason}")
            continue
        done = prepare_segment(piece, prep, None, joint_columns, timing)
        notes.extend(done.notes)
        ready.append(done)
    if not ready:
        raise DataError(f"{data.source}: no segment is long enough for the filter: {'; '.join(notes[-3:])}")
    out = concat(ready)
    out.notes = list(dict.fromkeys(notes))
    return out


def prepare_segment(data: JointData, prep: Preprocessing = Preprocessing(), grid_t0: float | None = None,
                    joint_columns=None, timing: SegmentTiming | None = None) -> JointData:
    """``prepare`` of one segment (continuous motion; grid_t0: where the uniform grid starts).

    timing: the whole segment's time base (``data.timing``) when ``data`` is a window of it
    (streaming); None: taken from ``data``. A window of a regular segment that holds an irregular
    step (rows dropped for NaN) is resampled on the segment's grid as well."""
    if len(data) < 3:
        raise DataError(f"{data.source}: {len(data)} samples; at least 3 are needed")
    timing = timing or segment_timing(data.t)
    if prep.resample_hz and prep.resample_hz > MAX_UPSAMPLING * timing.rate:
        raise DataError(f"{data.source}: --resample {prep.resample_hz:g} Hz is more than {MAX_UPSAMPLING} times the "
                        f"log's rate ({timing.rate:.6g} Hz); interpolation adds no information")
    irregular = timing.irregular or is_irregular(data.t)
    fs = float(prep.resample_hz or timing.rate)
    # a joint whose logged position never changes in this piece stands still exactly: its
    # derivatives are 0, not the rounding of a spline and a filter (which column normalization
    # would turn into an excited parameter)
    fixed, level = np.ptp(data.q, axis=0) == 0.0, data.q[0].copy()
    if prep.resample_hz or irregular:
        data = resample(data, fs, grid_t0)
        if prep.resample_hz:  # the grid asked for is the output: none of it is 'filled'
            data.filled = None
        if irregular:
            data.notes.append(irregular_note(fs, prep))
            if data.filled is not None:
                data.notes.append("the samples missing from a regular log (rows dropped) are interpolated for the "
                                  "filters only: the log keeps its own time stamps and they get no prediction")
    fc = prep.cutoff(fs)
    filt = lambda a: None if a is None else lowpass(a, fs, fc, prep.filter_order)  # noqa: E731
    q, dq, ddq = filt(data.q), filt(data.dq), filt(data.ddq)
    tau = filt(data.tau) if prep.filter_torque else data.tau

    def derive(x):
        if prep.derivative == "savgol":
            return savgol_derivative(x, 1.0 / fs, prep.savgol_window, prep.savgol_order)
        return central_derivative(data.t, x, 1.0 / fs)

    if dq is None:
        dq = derive(q)
    if ddq is None:
        ddq = derive(dq)
    if fixed.any():
        q, dq, ddq = q.copy(), dq.copy(), ddq.copy()
        q[:, fixed], dq[:, fixed], ddq[:, fixed] = level[fixed], 0.0, 0.0
    if prep.tau_delay and tau is not None:
        tau = advance(tau, int(round(prep.tau_delay * fs)))
    still = None
    if prep.rest_band:  # step 3c, on the raw positions (resampled, not filtered)
        if len(prep.rest_band) != q.shape[1]:
            raise DataError(f"{data.source}: {len(prep.rest_band)} rest bands for {q.shape[1]} joints")
        still = still_mask(data.q, fs, prep.rest_band, prep.rest_window or REST_WINDOW)
        dq = np.where(still, 0.0, dq)
    # parallel filtering (step 2b): with the torque filtered, the columns that are not smooth in the
    # signals (the sign of Coulomb friction) are filtered alike, exactly
    own = None if joint_columns is None or not (prep.filter_torque and fc > 0 or prep.decimate > 1) \
        else joint_columns(q, dq, ddq)
    if own is not None and prep.filter_torque:
        own = filt(own)
    if prep.decimate <= 1:
        return replace(data, q=q, dq=dq, ddq=ddq, tau=tau, notes=list(data.notes), rate=fs, own=own)
    # step 4: one more low-pass for every signal, then every k-th sample of the global grid
    dec = lambda a: None if a is None else lowpass(a, fs, 0.8 * fs / (2.0 * prep.decimate), prep.filter_order)  # noqa: E731
    q = dec(q)
    # filtering and differences commute (both linear, time-invariant on the grid): derive
    # from the filtered q rather than filtering the derivatives (fewer columns to filter)
    dq = derive(q) if data.dq is None else dec(dq)
    ddq = derive(dq) if data.ddq is None else dec(ddq)
    if fixed.any():
        q[:, fixed], dq[:, fixed], ddq[:, fixed] = level[fixed], 0.0, 0.0
    index = np.rint((data.t - (data.t[0] if grid_t0 is None else grid_t0)) * fs).astype(np.int64)
    if still is not None:  # the decimation filter spreads the stops again
        dq = np.where(still, 0.0, dq)
    out = replace(data, q=q, dq=dq, ddq=ddq, tau=dec(tau), notes=list(data.notes), own=dec(own),
                  rate=fs / prep.decimate)
    return out.select(index % prep.decimate == 0)


def advance(x: np.ndarray, k: int) -> np.ndarray:
    """x (N, ...) moved k samples earlier (x_out[i] = x[i + k]; k < 0 later); the k samples
    at the end (start) repeat the last (first) value."""
    if k == 0 or x.shape[0] == 0:
        return x
    index = np.clip(np.arange(x.shape[0]) + k, 0, x.shape[0] - 1)
    return x[index]


EDGE_PERIODS = 0.5  # edge samples per end, in units of fs / cutoff (``edge_samples``)


def edge_samples(prep: Preprocessing, fs: float) -> int:
    """Samples (at the output rate fs, after decimation) at each end of a log left out of fits
    and scores: ``EDGE_PERIODS`` fs_in / cutoff input samples, at least 2, plus those a
    ``tau_delay`` leaves without a torque. The filter has no start-up transient (``data.edges``);
    what remains near an end is the extrapolation error of the edge polynomials, largest in ddq
    within fs / (2 cutoff) samples of the end (there 2-30 x the ddq error of the same rows filtered
    inside a longer log, 1-16 x from fs / (2 cutoff) to fs / cutoff, on 500-5000 Hz multi-sine
    logs with encoder quantization, measured when the edge polynomials were chosen by backcasting;
    trial edges choose better ones). Such rows predict the torque as well as interior ones
    (tests/test_filter_edges.py) but are kept out of fits, where errors in the regressor bias the
    estimate. Before the edge treatment this was 3 fs / cutoff (the transient's length)."""
    if prep.trim is not None:
        return int(prep.trim)
    fs_in = fs * prep.decimate
    fc = prep.cutoff(fs_in)
    delay = abs(prep.tau_delay) * fs_in
    samples = (max(EDGE_PERIODS * fs_in / fc if fc > 0 else 2.0, 2.0) + delay) / prep.decimate
    # rounded first: 0.5 x 1000 Hz / 20 Hz is 25 samples, not 26 when fs carries a rounding error
    return int(np.ceil(round(samples, 6))) + 1


def edge_mask(count: int, trim: int, head: bool = True, tail: bool = True) -> np.ndarray:
    """(count,) True away from the trimmed ends (``head``/``tail``: whether this block has them)."""
    keep = np.ones(count, dtype=bool)
    if head:
        keep[:trim] = False
    if tail and trim > 0:
        keep[max(count - trim, 0):] = False
    return keep


def parallel_decimate(y: np.ndarray, tau: np.ndarray, fs: float, factor: int,
                      order: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """Gautier's parallel filtering: low-pass Y (N, n, p) and tau (N, n) alike, keep every factor-th.

    The cutoff is 0.8 x the Nyquist frequency after decimation, fs / (2 factor).
    """
    if factor <= 1:
        return y, tau
    fc = 0.8 * fs / (2.0 * factor)
    yf = lowpass(y.reshape(y.shape[0], -1), fs, fc, order).reshape(y.shape)
    return np.ascontiguousarray(yf[::factor]), np.ascontiguousarray(lowpass(tau, fs, fc, order)[::factor])


def velocity_mask(dq: np.ndarray, min_velocity: float) -> np.ndarray:
    """(N, n) True where |dq| >= min_velocity (the samples a fit or a score keeps)."""
    return np.abs(dq) >= min_velocity


def segments(data: JointData, by: str = "cycle") -> list[tuple[str, np.ndarray]]:
    """Sample indices of each value of the ``cycle``, ``stage`` or ``segment`` column, in order of appearance."""
    labels = {"cycle": data.cycle, "stage": data.stage, "segment": data.segment}.get(by)
    if labels is None and by == "segment":
        return [("0", np.arange(len(data)))]
    if labels is None:
        raise DataError(f"{data.source}: no '{by}' column to segment by")
    labels = np.asarray(labels)
    values, first = np.unique(labels, return_index=True)
    return [(str(v), np.flatnonzero(labels == v)) for v in values[np.argsort(first)]]
