"""How much a log's residuals are worth: their correlation in time, measured per joint and column.

Khalil-Gautier's covariance s^2 (W^T W)^-1 counts every sample as an independent one of one
noise variance. A real log's residuals are neither: they are low-pass filtered (the cutoff of
``--lowpass``, a drive's current filter: at 1 kHz behind a 5 Hz filter about a hundred samples
carry one independent value, so the white-noise std is about ten times too small), and joints
differ in noise (OLS pools them into one variance). The default's standard deviations
(``Estimator.with_correlated_residuals``) therefore use, per joint j with the fit's weight w_j
and residual variance sigma_j^2 = RSS_j / (r_j - b_j), the per-joint sandwich

    C = N^-1 (sum_j w_j^2 sigma_j^2 K_j A_j K_j) N^-1,    N = sum_j w_j A_j               (R1)

(A_j joint j's normal matrix; ols w_j = 1, wls w_j = 1 / sigma_j^2, so that with white
residuals it is s^2 N^-1 again), where K_j = diag(sqrt(kappa_jk)) scales each column's score
by the long-run variance of z(t) = y_jk(t) r_j(t) (joint j's regressor column k times its
residual) over its white value:

    kappa_jk = sum_{|l| < 2 M_j} w(l) gamma_z(l) / (sigma_j^2 sum_t y_jk(t)^2)              (R2)

gamma_z the autocovariance of z, w a trapezoid (1 up to lag M_j, 0 at 2 M_j: Politis & Romano's
flat-top taper, 1995); kappa is at least 1 (the white-noise figure stays a floor). The window
M_j comes from the residual's own autocorrelation rho_j (Sokal's automatic windowing, 1997):

    tau_j(M) = 1 + 2 sum_{l=1..M} rho_j(l),   M_j = the smallest M >= C_WINDOW tau_j(M)     (R3)

tau_j is the number of samples per independent one of joint j's residual ("correlated_samples"
in result.json "uncertainty"). The residuals are those of the fit (``coef_``) on evenly spread
contiguous pieces of the prepared logs (``PIECE_ROWS`` at most, ``data.blocks``), whose
regressor is built in memory; each piece's lags stay within it.

What this does not cover: an error that is a function of the state (a ripple, a missed effect)
and comes back every period of the excitation is as correlated as the period is long; it is a
bias common to every noise draw, and the payload's cluster jackknife (``identify.sandwich``)
is the tool for it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

def white(why: str) -> dict:
    """result.json "uncertainty" of std left white-noise ones (Khalil-Gautier's), with the reason."""
    return {"covariance": "white", "why": f"{why}: Khalil-Gautier's s^2 (W^T W)^-1"}


UNMEASURED = white("no piece of the logs long enough to measure the residuals' correlation")
C_WINDOW = 5.0  # Sokal's c of (R3)
PIECE_ROWS = 24_000  # rows of the logs whose residuals are measured (evenly spread pieces)
PIECES = 4  # pieces of the logs (at least one per log) when they are longer than PIECE_ROWS
SHORTEST_PIECE = 8  # rows: a piece this short carries no lag worth measuring (left out)


@dataclass
class ResidualCorrelation:
    """(R2)-(R3) of a fit over the measured pieces: per joint the scores' long-run covariance
    ``long_run`` (n, b, b) and its white value ``white`` (n, b, b) (sigma_j^2 Y_j^T Y_j), the
    correlated samples ``tau`` (n,) and window ``window`` (n,), the rows measured."""

    long_run: np.ndarray
    white: np.ndarray
    tau: np.ndarray
    window: np.ndarray
    rows: int

    def to_dict(self) -> dict:
        return {"correlated_samples": [float(v) for v in self.tau], "window": [int(v) for v in self.window],
                "rows": int(self.rows)}

    def entry(self, white: np.ndarray, std: np.ndarray) -> dict:
        """result.json "uncertainty" of std (b,) made with this measurement, ``white`` (b,) the
        white-noise ones: the measurement, the std over the white ones, those ("white_std")."""
        from dynid.files.outputs import json_floats

        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.asarray(std, dtype=float) / white
        shown = ratio[np.isfinite(ratio)]
        return {"covariance": "correlated", **self.to_dict(),
                "std_over_white": {"min": float(shown.min()), "median": float(np.median(shown)),
                                   "max": float(shown.max())} if shown.size else None,
                "white_std": json_floats(white)}

    def scores(self, ne, beta: np.ndarray) -> np.ndarray:
        """(n, b, b) the long-run covariance of each joint's scores over all the fit's rows ``ne``
        at the estimate ``beta``: its white value sigma_j^2 A_j carried through the inflation the
        pieces measured (R4), G_j = W^-1/2 L W^-1/2 with its eigenvalues raised to at least 1."""
        from dynid.identify.estimators import joint_noise_variances

        return self.carried(joint_noise_variances(ne, beta), ne.A)

    def carried(self, variances: np.ndarray, normal: np.ndarray) -> np.ndarray:
        """(n, b, b) (R4) to all rows whose per-joint normal matrices are ``normal`` (n, b, b) and
        residual variances ``variances`` (n,) (``scores``; a problem with more unknowns than
        ``NormalEquations`` holds, the Stribeck velocities, gives its own)."""
        return np.array([_carried(self.long_run[j], self.white[j], variances[j] * normal[j])
                         for j in range(len(variances))])



def _root(m: np.ndarray, inverse: bool = False) -> np.ndarray:
    """Symmetric square root (or pseudo-inverse square root) of a PSD matrix."""
    e, v = np.linalg.eigh(0.5 * (m + m.T))
    keep = e > 1e-10 * max(float(e.max()), 1e-300)
    r = np.where(keep, np.sqrt(np.where(keep, e, 1.0)) ** (-1.0 if inverse else 1.0), 0.0)
    return (v * r) @ v.T


def _carried(long_run: np.ndarray, white: np.ndarray, full: np.ndarray) -> np.ndarray:
    """(R4) L_full = D_f F^1/2 G F^1/2 D_f, G = W^-1/2 L W^-1/2 (eigenvalues >= 1), W and L the
    pieces' white and long-run covariances and F the full data's white one, each normalized by
    the square root of its diagonal (D); columns the pieces or the data do not excite are left white."""
    out = np.array(full, dtype=float)
    dw, df = np.sqrt(np.maximum(np.diag(white), 0.0)), np.sqrt(np.maximum(np.diag(full), 0.0))
    a = np.flatnonzero((dw > 0) & (df > 0))
    if a.size == 0:
        return out
    nw, nl = np.outer(dw[a], dw[a]), np.outer(dw[a], dw[a])
    wi = _root(white[np.ix_(a, a)] / nw, inverse=True)
    g = wi @ (long_run[np.ix_(a, a)] / nl) @ wi
    e, v = np.linalg.eigh(0.5 * (g + g.T))
    g = (v * np.maximum(e, 1.0)) @ v.T
    fr = _root(full[np.ix_(a, a)] / np.outer(df[a], df[a]))
    out[np.ix_(a, a)] = np.outer(df[a], df[a]) * (fr @ g @ fr)
    return out


def _autocovariance(x: np.ndarray, lags: int) -> np.ndarray:
    """(lags + 1, ...) sum_t x(t) x(t + l) for l = 0..lags along axis 0 (by FFT, no wrap; 0 from
    lag N on)."""
    import scipy.fft

    size = scipy.fft.next_fast_len(max(2 * x.shape[0] - 1, lags + 1), real=True)
    f = scipy.fft.rfft(x, size, axis=0)
    return scipy.fft.irfft(f * np.conj(f), size, axis=0)[:lags + 1]


def _long_run(z: np.ndarray, m: int) -> np.ndarray:
    """(b, b) sum_{|l| < 2m} w(l) sum_t z(t) z(t + l)^T of z (N, b), w the flat-top taper (R2):
    z^T (w * z), the convolution by FFT (zero padded: no wrap)."""
    import scipy.fft

    span = min(2 * m, len(z) - 1)
    size = scipy.fft.next_fast_len(len(z) + span + 1, real=True)
    lag = np.arange(size)
    lag = np.minimum(lag, size - lag)
    taper = np.where(lag <= span, np.clip(2.0 - lag / max(m, 1), 0.0, 1.0), 0.0)
    spectrum = scipy.fft.rfft(taper).real  # the taper is even: its transform is real
    zt = np.ascontiguousarray(z.T)  # (b, N): transforms along contiguous rows
    smoothed = scipy.fft.irfft(scipy.fft.rfft(zt, size, axis=-1) * spectrum, size, axis=-1)[:, :len(z)]
    out = zt @ smoothed.T
    return 0.5 * (out + out.T)


def window_of(rho: np.ndarray) -> tuple[float, int]:
    """(tau, M) of (R3) from the autocorrelation rho (L + 1,) (rho[0] = 1); M at most L."""
    tau = 1.0 + 2.0 * np.cumsum(rho[1:])
    m = np.arange(1, rho.size)
    ok = np.flatnonzero(m >= C_WINDOW * tau)
    k = int(ok[0]) if ok.size else rho.size - 2
    return float(max(tau[k], 1.0)), int(m[k])


def measurable(parts) -> bool:
    """Whether ``parts`` (as ``residual_correlation`` takes them) hold a piece it measures: one of
    more than ``SHORTEST_PIECE`` rows with a fitted row."""
    return any(len(r) > SHORTEST_PIECE and keep.any() for _, r, keep in parts)


def residual_correlation(parts) -> ResidualCorrelation:
    """(R2)-(R3) over ``parts``, an iterable of (y (N, n, b), r (N, n), keep (N, n) bool) of
    contiguous rows each (y the base regressor, r the fit's residual, keep the fitted rows)."""
    # each joint's rows contiguous: (n, N, b), the rows left out zero
    parts = [(np.where(keep.T[..., None], y.transpose(1, 0, 2), 0.0), np.where(keep, r, 0.0))
             for y, r, keep in parts if len(r) > SHORTEST_PIECE]
    if not parts:
        raise ValueError("residual_correlation: no rows")
    n, b = parts[0][0].shape[0], parts[0][0].shape[2]
    lags = max(max(len(r) for _, r in parts) // 4, 2)
    acov = sum(_autocovariance(r, lags) for _, r in parts)  # (lags + 1, n), each piece's lags within it
    rows = sum(int(np.count_nonzero(r.any(axis=1))) for _, r in parts)
    tau, window = np.ones(n), np.ones(n, dtype=np.int64)
    long_run, white = np.zeros((n, b, b)), np.zeros((n, b, b))
    for j in range(n):
        if acov[0, j] > 0:
            tau[j], window[j] = window_of(acov[:, j] / acov[0, j])
        sigma2 = acov[0, j] / max(sum(np.count_nonzero(r[:, j]) for _, r in parts), 1)
        for y, r in parts:
            long_run[j] += _long_run(y[j] * r[:, j, None], int(window[j]))
            white[j] += sigma2 * (y[j].T @ y[j])
    return ResidualCorrelation(long_run, white, tau, window, rows)


def contiguous_runs(data) -> list[slice]:
    """Rows of prepared ``data`` (``JointData``) that follow one another in time: its segments
    (``data.segments.segment_ranges``), cut again where a step is longer than 1.5 x the median
    (rows left out between, e.g. the cycles ``--cycles`` did not select): no lag spans a gap."""
    from dynid.data.segments import segment_ranges

    out = []
    for _, rows in segment_ranges(data):
        t = np.asarray(data.t[rows], dtype=float)
        if t.size < 3:
            out.append(rows)
            continue
        step = np.diff(t)
        cuts = np.flatnonzero(step > 1.5 * np.median(step)) + 1
        bounds = np.concatenate([[0], cuts, [t.size]]) + rows.start
        out += [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    return out


def spread_windows(lengths, rows: int = PIECE_ROWS, pieces: int = PIECES) -> list[tuple[int, slice]]:
    """(run, slice within it) of at most ``pieces`` windows, ``rows`` rows together at most, evenly
    spread over runs of ``lengths`` rows laid end to end (every run whole when they hold no more
    than ``rows``): where a fit held in memory measures its residuals, as ``measured_residuals``
    does for a streamed one. A window over the end of a run goes on into the next ones (as a block
    of a file over segments) and is cut at each run's end: no lag spans two runs, and runs shorter
    than a window (many short cycles) give their rows all the same."""
    lengths = np.asarray(lengths, dtype=np.int64)
    if lengths.sum() <= rows:
        return [(k, slice(0, int(size))) for k, size in enumerate(lengths) if size > 0]
    ends, width = np.cumsum(lengths), rows // pieces
    starts = ends - lengths
    out = []
    for centre in (np.arange(pieces) + 0.5) * ends[-1] / pieces:
        a = max(min(int(centre) - width // 2, int(ends[-1]) - width), 0)  # the window [a, a + width) of the whole
        for k in range(int(np.searchsorted(ends, a, side="right")), len(lengths)):
            if starts[k] >= a + width:
                break
            lo, hi = max(a, int(starts[k])) - int(starts[k]), min(a + width, int(ends[k])) - int(starts[k])
            if hi > lo:
                out.append((k, slice(lo, hi)))
    return out


def log_windows(readies, rows: int = PIECE_ROWS, pieces: int = PIECES) -> list[tuple[int, slice]]:
    """(log, rows of it) of the windows where a fit of the prepared logs ``readies`` (``JointData``)
    held in memory measures its residuals: ``spread_windows`` over their ``contiguous_runs``."""
    runs = [(i, run) for i, ready in enumerate(readies) for run in contiguous_runs(ready)]
    return [(runs[k][0], slice(runs[k][1].start + window.start, runs[k][1].start + window.stop))
            for k, window in spread_windows([run.stop - run.start for _, run in runs], rows, pieces)]


def windowed_uncertainty(est, ne, readies, parts, weights: np.ndarray | None = None,
                         normal: np.ndarray | None = None) -> dict:
    """``correlated_uncertainty`` of a fit held in memory (irls, ``--cycles``, ``--friction-drift``):
    its residuals measured on ``log_windows(readies)``, ``parts(windows)`` the (y, r, keep) of
    ``residual_correlation`` at those [(log, rows)]. An estimator without per-joint weights (pc
    pulled toward the description) given no ``weights``: its white-noise std, with the reason."""
    from dynid.identify.threads import single_blas_thread

    if weights is None and est.joint_weights() is None:
        return white(f"estimator {est.name}")
    with single_blas_thread():  # small products: BLAS threads only contend
        return correlated_uncertainty(est, ne, parts(log_windows(readies)), weights, normal)


def correlated_uncertainty(est, ne, parts, weights: np.ndarray | None = None, normal: np.ndarray | None = None) -> dict:
    """``est``'s covariance (fitted to ``ne``) made the per-joint sandwich (R1) whose scores carry the
    residuals' correlation measured on ``parts`` (``residual_correlation``'s (y, r, keep) at
    ``est.coef_``); ``weights`` (n,): the fit's weight of each joint's rows in ``ne`` (default
    ``est.joint_weights()``); ``normal``: the sandwich's bread when not sum_j w_j A_j (irls). Returns result.json "uncertainty": "covariance" "correlated" with the
    measured correlation, the std over the white-noise ones and those ("white_std"), or "white"
    with the reason (no piece long enough: the white-noise std are kept)."""
    parts = list(parts)
    if not measurable(parts):
        return dict(UNMEASURED)
    measured = residual_correlation(parts)
    white = np.array(est.std_, dtype=float)
    est.with_correlated_residuals(ne, measured.scores(ne, est.coef_), weights, normal)
    return measured.entry(white, est.std_)


def measured_residuals(robot, sources, options, base, prep, coef: np.ndarray, mapping=None, nan: str = "drop",
                       chunk_rows: int = 50_000, rows: int = PIECE_ROWS):
    """(y, r, keep) of evenly spread contiguous pieces of ``sources`` (``measured_pieces``)."""
    for _, y, r, keep in measured_pieces(robot, sources, options, base, prep, coef, mapping, nan, chunk_rows, rows):
        yield y, r, keep


def measured_pieces(robot, sources, options, base, prep, coef: np.ndarray, mapping=None, nan: str = "drop",
                    chunk_rows: int = 50_000, rows: int = PIECE_ROWS):
    """(prepared piece, y, r, keep) of evenly spread contiguous pieces of ``sources`` (at most
    ``rows`` rows together; ``data.blocks.read_blocks``, cut at segment boundaries), each prepared
    as the fit's data are (``prep``: cutoff, rests, edges) with the residual r = tau - y coef of the fit."""
    from dynid.data.blocks import pieces, read_blocks
    from dynid.data.columns import ColumnMapping
    from dynid.data.preprocess import prepare
    from dynid.identify.model import own_columns
    from dynid.identify.pipeline import regressor_arrays

    mapping = mapping or ColumnMapping()
    share = max(rows // max(len(sources), 1), 1)
    count = max(PIECES // max(len(sources), 1), 1)  # PIECES in all (each piece's filter edges cost alike)
    columns = own_columns(robot, options)
    for raw in pieces([b for s in sources for b in read_blocks(s, robot, mapping, nan, share, count, chunk_rows,
                                                                   prep)]):
        if len(raw) < 16:
            continue
        ready = prepare(raw, prep, joint_columns=columns)
        if ready.tau is None or len(ready) < 16:
            continue
        y, tau, keep = regressor_arrays(robot, ready, options, base, prep)
        keep = np.ones(tau.shape, dtype=bool) if keep is None else keep
        yield ready, y, tau - y @ coef, keep
