"""One identification, as a library call: ``dynid.Identification``.

    robot = dynid.load_robot("er3a")
    idn = dynid.Identification(robot, offset=True)             # configure (the options of dynid identify)
    result = idn.fit(t, q, tau, dq=dq)                         # arrays in SI units, time-major (N, n)
    result = idn.fit_files(["a.csv", "b.parquet"])             # or files, streamed in bounded memory
    result.names, result.values, result.std                    # base parameters (identify/identification_result.py)
    tau_hat = result.predict(t, q, dq=dq)                      # preprocessed as in training
    result.save("result.json")                                 # exactly what dynid identify writes

The steps, in order, are those of ``dynid identify`` (which calls this class, as do the fleet
and the demo):

1. the model (``ModelOptions``) and its base parameters (``base.base_parameters``, QR of the
   regressor on random states, thesis 2.3);
2. the preprocessing; with ``rest="auto"`` where each joint stands still is found on its raw
   positions (``data.rest``: velocity 0 there, each rest's held torque a level of its own),
   then with ``lowpass="auto"`` the cutoff is chosen by blocked cross-validation of the log
   (``crossval.auto_lowpass``);
3. the data: streamed into per-joint normal equations (``pipeline.accumulate_sources``: OLS,
   WLS, PC), or held in memory when the estimator needs the samples (IRLS), cycles are
   selected (``cycles``) or the friction drifts (``friction_drift``: ``identify.drift_fit``); identifying each cycle alone (``per``) reads the logs into memory
   once more and leaves the main fit as it is;
4. the base parameters the data leave undetermined (joints held still:
   ``undetermined.find_undetermined``) keep the description's values, the others are fitted;
5. the result.json document (``result.build_result``), with the warnings issued on the way.

Arrays go through exactly the readers a file goes through (``data.arrays.ArrayLog``: the same
chunks, cleaning, segments, filters), so ``fit`` on arrays and ``fit_files`` on the same
samples written to a file give the same numbers.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

import numpy as np

from dynid.data.arrays import ArrayLog
from dynid.data.columns import ColumnMapping
from dynid.data.preprocess import Preprocessing
from dynid.data.segments import DEFAULT_BRIDGE_GAP
from dynid.errors import DataError, DynidWarning
from dynid.identify.model import ModelOptions
from dynid.identify.undetermined import STILL_RANGE

WHITE_STRIBECK = {"covariance": "white", "why": "friction stribeck: the joint covariance with the Stribeck velocities "
                                                "(identify.stribeck_uncertainty) under white residuals (estimator "
                                                "not ols or wls, or no piece of the logs to measure them on)"}
CHOSEN_FRICTION = ("stribeck", "load-dependent", "auto")  # friction models the data decide (``identify.stribeck``)


@dataclass
class Identification:
    """Configuration of an identification (scikit-learn life cycle: configure, then ``fit``).

    robot: a ``dynid.Robot`` or its spec (builtin name, .urdf or .yaml path); spec: how
    result.json names the robot ("robot"; default: the spec given, else the builtin's name or
    the description's path). The other fields are the options of ``dynid identify``, same names
    and defaults:

    estimator: ols | wls | irls | pc (physically consistent)
    friction: none | coulomb-viscous | polynomial | asymmetric | stribeck (its velocity per joint
      fitted to the log) | load-dependent (a Coulomb level growing with the transmitted torque,
      ``identify.load_friction``) | auto (coulomb-viscous, load-dependent, polynomial or stribeck
      by held-out error, ``identify.stribeck``; result "friction_selection"); offset: per-joint
      torque offset;
    rotor_inertia: I_a ddq per joint; smooth_sign: velocity scale of a tanh sign [rad/s | m/s]
    friction_drift: None | "time" | "temperature": friction coefficients drifting from cold to
      warm with the time since the cold start (thesis eq. 5.4) or the temperatures temp1..tempn,
      identified with the rest (``identify.drift_fit``; ols or wls); since_cold: "time" mode, the
      seconds since the cold start at each log's first sample (or "warm"; default: the log's
      since_cold column, else 0); drift_rows: samples of the time constants' search at most
    lowpass: cutoff [Hz] of the zero-phase low-pass before differentiation, 0 = off, None =
      min(20 Hz, fs/10), "auto" = chosen by blocked cross-validation; lowpass_fallback: when the
      log is too short for the folds of "auto", use min(20 Hz, fs/10) with a note (else an error)
    cv_folds: folds of "auto"; excitation: the log's excitation trajectory (an
      ``excite.periodic.PeriodicTrajectory``, as ``excite.fileio.load_trajectory`` reads a dynid
      excite JSON or builtin name) or its bandwidth [Hz]: its highest harmonic narrows the cutoff grid
    filter_torque: low-pass the torque like the positions (Gautier's parallel filtering); None:
      chosen by the cross-validation of "auto" (off with a fixed cutoff)
    derivative: central | savgol; resample: rate [Hz] (irregular logs are always resampled);
      decimate: parallel filtering and decimation factor; min_velocity: samples of a joint
      slower than this [rad/s | m/s] are left out; segments: gaps | auto; max_gap: a step longer
      than this multiple of the median step splits the log, unless it lasts at most bridge_gap
      [s] (dropped controller cycles, resampled; "auto": from the motion's bandwidth measured on
      the log, ``data.segments`` S2, 20-100 ms); tau_delay: the torque lags by [s], or "auto":
      the whole-sample shift of the torque that cross-validation prefers over none by more than
      one standard error (``identify.delay_selection``; result "delay_selection")
    rest: "auto" finds where each joint stands still on its raw positions (a band measured from
      the log's noise, ``data.rest``: velocity 0 there, no Coulomb torque of a random sign, each
      rest's held torque a level of its own in the fit; result "rest_detection"); "off": the
      filtered velocity everywhere
    still_range: a joint moving less than this [rad; a tenth in m] is held still (0 = off)
    nan: drop | reject rows with NaN; chunk_rows: rows read at a time (bounded memory)
    prior_bound: pc, keep rigid-body parameters within this fraction of the robot's own
    regularize: pc, pull the link inertials toward the description's with this weight of the
      entropic divergence (``identify.regularized``), or "auto": chosen by blocked cross-validation
      (``identify.regularize_cv``; result "regularization")
    per: also identify each "cycle", "stage" or "segment" (result "per_<per>");
      skip_first: per cycle, statistics also without the first K cycles (None: the thesis' 5 of
      24, scaled to the cycles present)
    cycles: identify on these cycles only ("6-24", "3,9", "last19", "unit1")
    essential: also the essential parameters (Pham & Gautier 1991; result "essential")
    max_condition: refuse fits above this condition number; irls_iterations: at most this many
      reweightings; tol: relative QR tolerance of the base parameters (None: 1e-8)
    seed: of the random states on which the base parameters and the undetermined ones are found
    """

    robot: object
    estimator: str = "ols"
    friction: str = "coulomb-viscous"
    offset: bool = False
    rotor_inertia: bool = True
    smooth_sign: float = 0.0
    friction_drift: str | None = None
    since_cold: float | str | None = None
    drift_rows: int = 8_000
    lowpass: float | str | None = "auto"
    lowpass_fallback: bool = True
    cv_folds: int = 5
    excitation: object = None
    filter_torque: bool | None = None
    derivative: str = "central"
    resample: float | None = None
    decimate: int = 1
    min_velocity: float = 0.0
    segments: str = "gaps"
    max_gap: float = 5.0
    bridge_gap: float | str = "auto"
    tau_delay: float | str = "auto"
    rest: str = "auto"
    still_range: float = STILL_RANGE
    nan: str = "drop"
    chunk_rows: int = 50_000
    prior_bound: float | None = None
    regularize: float | str | None = None
    per: str | None = None
    skip_first: int | None = None
    cycles: str | None = None
    essential: bool = False
    max_condition: float = 1e7
    irls_iterations: int = 50
    tol: float | None = None
    seed: int = 0
    spec: str | None = None
    _load_warnings: list = field(init=False, repr=False, default_factory=list)

    def __post_init__(self):
        from dynid.identify.pipeline import ESTIMATOR_NAMES
        from dynid.robot import Robot, load_robot

        if isinstance(self.robot, Robot):
            if self.spec is None:
                self.spec = self.robot.name if self.robot.source == "builtin" else str(self.robot.source)
        else:
            self.spec = self.spec or str(self.robot)
            with _recorded(self._load_warnings):
                self.robot = load_robot(self.robot)
        if self.estimator not in ESTIMATOR_NAMES:
            raise DataError(f"estimator '{self.estimator}' unknown, expected one of {list(ESTIMATOR_NAMES)}")
        if self.estimator == "irls" and self.irls_iterations < 1:
            raise DataError(f"--irls-iterations {self.irls_iterations}: expected at least 1")
        if self.regularize is not None and self.estimator != "pc":
            raise DataError(f"--regularize needs --estimator pc (got --estimator {self.estimator})")
        if isinstance(self.regularize, str) and self.regularize.strip() != "auto":
            try:
                self.regularize = float(self.regularize)
            except ValueError:
                raise DataError(f"--regularize '{self.regularize}': expected a weight >= 0 or 'auto'") from None
        if self.rest not in ("auto", "off"):
            raise DataError(f"--rest: expected 'auto' or 'off', got '{self.rest}'")
        if isinstance(self.lowpass, str) and self.lowpass != "auto":
            raise DataError(f"--lowpass: expected a cutoff in Hz, 0 (off) or 'auto', got '{self.lowpass}'")
        if isinstance(self.bridge_gap, str) and self.bridge_gap != "auto":
            raise DataError(f"--bridge-gap: expected a step in seconds or 'auto', got '{self.bridge_gap}'")
        if isinstance(self.tau_delay, str) and self.tau_delay != "auto":
            raise DataError(f"--tau-delay: expected a delay in seconds or 'auto', got '{self.tau_delay}'")
        self.options = self.configured_options()
        if self.friction_drift is not None:
            from dynid.data.covariates import parse_since_cold
            from dynid.identify.drift import check_mode

            check_mode(self.friction_drift, self.options, self.robot)
            if self.estimator not in ("ols", "wls"):
                raise DataError(f"--friction-drift: --estimator {self.estimator} is not available with a drifting "
                                "friction; use ols or wls")
            if isinstance(self.since_cold, str):
                self.since_cold = parse_since_cold(self.since_cold)
        self.prep = Preprocessing(lowpass_hz=None if self.lowpass == "auto" else self.lowpass,
                                  derivative=self.derivative, resample_hz=self.resample, decimate=self.decimate,
                                  min_velocity=self.min_velocity, segments=self.segments, max_gap=self.max_gap,
                                  tau_delay=0.0 if self.tau_delay == "auto" else self.tau_delay,  # delay_alignment
                                  bridge_gap=DEFAULT_BRIDGE_GAP  # "auto": gap_bridging
                                  if self.bridge_gap == "auto" else float(self.bridge_gap),
                                  filter_torque=bool(self.filter_torque))

    def configured_options(self) -> ModelOptions:
        """The model before the data are seen: ``stribeck`` and ``auto`` start from Coulomb-viscous
        (the cutoff is chosen with it) and become the chosen model in ``choose_friction``."""
        chosen = self.friction in CHOSEN_FRICTION
        return ModelOptions(friction="coulomb-viscous" if chosen else self.friction, rotor_inertia=self.rotor_inertia,
                            offset=self.offset, smooth_sign=self.smooth_sign)

    def __repr__(self) -> str:
        """The robot's spec and the options that differ from the defaults (scikit-learn style)."""
        changed = [f"{f.name}={getattr(self, f.name)!r}" for f in fields(self)
                   if f.init and f.name not in ("robot", "spec") and getattr(self, f.name) != f.default]
        return f"Identification({', '.join([repr(self.spec)] + changed)})"

    @staticmethod
    def preprocessing_options(prep: Preprocessing) -> dict:
        """The options that make ``prep`` (a result's "preprocessing", a fleet's settings) this
        class's preprocessing, with its cutoff fixed; ValueError for one they cannot express. Rest
        bands are measured again (``rest="auto"``: the same bands on the same logs)."""
        options = {"lowpass": prep.lowpass_hz, "derivative": prep.derivative, "resample": prep.resample_hz,
                   "decimate": prep.decimate, "min_velocity": prep.min_velocity, "segments": prep.segments,
                   "max_gap": prep.max_gap, "bridge_gap": prep.bridge_gap, "tau_delay": prep.tau_delay,
                   "filter_torque": prep.filter_torque, "rest": "auto" if prep.rest_band else "off"}
        prep = replace(prep, rest_band=(), rest_window=())
        made = Preprocessing(lowpass_hz=prep.lowpass_hz, derivative=prep.derivative, resample_hz=prep.resample_hz,
                             decimate=prep.decimate, min_velocity=prep.min_velocity, segments=prep.segments,
                             max_gap=prep.max_gap, tau_delay=prep.tau_delay, bridge_gap=prep.bridge_gap,
                             filter_torque=prep.filter_torque)
        if made != prep:
            raise ValueError(f"preprocessing not expressible as identify options: {prep}")
        return options

    def clone(self, **changes) -> "Identification":
        """The same configuration with ``changes`` (scikit-learn's ``set_params`` on a copy)."""
        given = {f.name: getattr(self, f.name) for f in fields(self) if f.init}
        out = Identification(**{**given, **changes})
        if "robot" not in changes:  # the robot was loaded once, by this one
            out._load_warnings = list(self._load_warnings)
        return out

    # -- fit -----------------------------------------------------------------------------
    def fit(self, t, q, tau, dq=None, ddq=None, columns: dict | None = None,
            name: str = "arrays") -> "IdentificationResult":  # noqa: F821
        """Identify from arrays: t (N,) [s], q and tau (N, n) [rad | m, N m | N], dq and ddq (N, n)
        or None (estimated from q); ``columns``: more columns by their file names (``cycle``,
        ``stage``, ``segment``, ``temp1``..); ``name``: how notes and result.json name the data."""
        return self._identify([ArrayLog.from_signals(t, q, tau, dq, ddq, columns, name)], ColumnMapping())

    def fit_files(self, paths, mapping: ColumnMapping | None = None) -> "IdentificationResult":  # noqa: F821
        """Identify from joint data files (CSV, Parquet, ROS bags; globs and directories as
        ``--data``), each preprocessed on its own, all in one least-squares problem; ``mapping``:
        how the files' layout maps onto the contract columns (``--rename``, ``--degrees``...)."""
        return self._identify([paths] if isinstance(paths, (str, Path, ArrayLog)) else list(paths), mapping)

    def _identify(self, sources: list, mapping: ColumnMapping | None):
        from dynid.data.sources import check_sources, expand_sources

        found_warnings: list[str] = []
        with _recorded(found_warnings):
            mapping = mapping or ColumnMapping()
            files = [s for s in sources if not isinstance(s, ArrayLog)]
            sources = [s for s in sources if isinstance(s, ArrayLog)] + (expand_sources(files) if files else [])
            check_sources(sources, mapping)
            self.options = self.configured_options()
            base = self.base_parameters()
            prep, extra, notes = self.preprocessing(sources, mapping, base)
            if self.friction in CHOSEN_FRICTION:
                chosen = []  # the notes of the friction model's fit
                base, prep = self.choose_friction(sources, mapping, prep, extra, chosen)
                if self.lowpass == "auto" and self.options.friction != "coulomb-viscous":
                    prep, base, chosen = self.chosen_cutoff(sources, mapping, prep, base, extra, notes)
                notes += chosen
            weight = None
            if self.regularize is not None:
                weight, extra["regularization"] = self.regularization(sources, mapping, base, prep)
            if self.estimator == "irls" or self.cycles or self.friction_drift:
                fitted = self._fit_in_memory(sources, mapping, base, prep, weight)
            else:
                acc = self.accumulate(sources, mapping, base, prep)
                fitted = self.solve(acc.ne, acc.q_min, acc.q_max, base, weight)
                fitted.samples, fitted.notes = acc.samples, list(acc.notes)
                extra["uncertainty"] = self.correlated_std(fitted, base, sources, mapping, prep) \
                    if self.options.friction != "stribeck" else dict(WHITE_STRIBECK)
                if self.options.friction == "load-dependent":  # the std of the fixed point (load_friction, L3)
                    from dynid.identify.drift_fit import fit_rows
                    from dynid.identify.load_friction import fitted_fl, static_parts
                    from dynid.identify.pipeline import prepared_sources

                    readies = prepared_sources(self.robot, sources, self.options, mapping, prep, self.nan)
                    fl = fitted_fl(base, fitted.est.coef_, self.robot.n)
                    self._fixed_point_std(fitted, base, static_parts(self.robot, self.options, base, readies,
                                                                     fit_rows(readies, prep), fl))
                if self.options.friction == "stribeck":  # the std of the joint estimate with v_s (stribeck, S6)
                    self._stribeck_std(fitted, base, sources, mapping, prep, extra, notes)
                if self.per:
                    from dynid.identify.pipeline import prepared_sources

                    readies = prepared_sources(self.robot, sources, self.options, mapping, prep, self.nan)
                    fitted.extra["per_" + self.per] = self._per(readies, base, prep, weight)
                fitted.extra["sources"] = [c.to_dict() for c in acc.sources]
            self.with_constraints(fitted.est, fitted.extra.get("uncertainty") or extra.setdefault("uncertainty", {}))
            document = self.document(fitted, base, prep, mapping, notes, str(sources[0]), extra)
        return self._result(document, found_warnings)

    def base_parameters(self):
        """The base parameters of the model (``identify.base.base_parameters``)."""
        from dynid.identify.base import base_parameters

        return base_parameters(self.robot, self.options, seed=self.seed, tol=self.tol)

    def preprocessing(self, sources: list, mapping: ColumnMapping, base) -> tuple[Preprocessing, dict, list[str]]:
        """(preprocessing, result.json additions, notes): ``rest="auto"`` measures the rest bands
        ("rest_detection"), before the cutoff, so that its cross-validation scores the fit that is
        made; ``lowpass="auto"`` chooses the cutoff by cross-validation of ``sources``
        ("lowpass_selection")."""
        prep, extra = self.gap_bridging(sources, mapping)
        prep, delay_notes = self.delay_alignment(sources, mapping, prep, extra)
        prep, more, notes = self.rest_detection(sources, mapping, prep)
        extra.update(more)
        notes = delay_notes + notes
        if self.lowpass != "auto":
            return prep, extra, notes
        prep, extra["lowpass_selection"], more = self.cutoff_selection(sources, mapping, base, prep)
        return prep, extra, notes + more

    def gap_bridging(self, sources: list, mapping: ColumnMapping) -> tuple[Preprocessing, dict]:
        """(preprocessing, result.json additions): ``bridge_gap="auto"`` takes the longest step that
        never splits a log from the motion's bandwidth measured on ``sources`` (``data.segments``
        S1-S2, "gap_bridging"); a number is kept as given."""
        if self.bridge_gap != "auto":
            return self.prep, {}
        from dynid.data.bandwidth import choose_bridge_gap

        prep, info = choose_bridge_gap(self.robot, sources, self.prep, mapping, self.nan, self.chunk_rows)
        return prep, {"gap_bridging": info}

    def delay_alignment(self, sources: list, mapping: ColumnMapping, prep: Preprocessing,
                        extra: dict) -> tuple[Preprocessing, list[str]]:
        """(``prep`` with the torque delay, notes): ``tau_delay="auto"`` chooses it on ``sources``
        (``identify.delay_selection``, result "delay_selection" added to ``extra``); a number is kept."""
        if self.tau_delay != "auto":
            return prep, []
        from dynid.identify.delay_selection import choose_tau_delay

        delay, extra["delay_selection"] = choose_tau_delay(self.robot, sources, prep, mapping, self.nan)
        if not delay:
            return prep, []
        info = extra["delay_selection"]
        return replace(prep, tau_delay=delay), [
            f"torque delay {delay * 1e3:.4g} ms ({info['samples']} samples) chosen on the log (--tau-delay auto): the "
            "torque shifted earlier by it predicts held-out folds better than as logged (by "
            f"{info['held_out_gain']:.4g} N^2 m^2, one standard error {info['standard_error']:.4g}); --tau-delay 0 "
            "keeps the log as it is"]

    def rest_detection(self, sources: list, mapping: ColumnMapping,
                       prep: Preprocessing | None = None) -> tuple[Preprocessing, dict, list[str]]:
        """(``prep`` (default: this configuration's) with the rest bands measured on ``sources`` when
        ``rest="auto"`` (``data.rest``), result.json additions ("rest_detection"), notes)."""
        prep = self.prep if prep is None else prep
        if self.rest != "auto":
            return prep, {}, []
        from dynid.data.rest import choose_rest

        prep, info, notes = choose_rest(self.robot, sources, prep, mapping, self.nan, self.chunk_rows)
        return prep, {"rest_detection": info}, notes

    def cutoff_selection(self, sources: list, mapping: ColumnMapping, base,
                         prep: Preprocessing) -> tuple[Preprocessing, dict, list[str]]:
        """``lowpass="auto"``: (``prep`` with the cutoff chosen by blocked cross-validation of
        ``sources``, result.json "lowpass_selection", notes), with this configuration's folds,
        excitation bandwidth, condition limit and fallback (``crossval.auto_lowpass``)."""
        from dynid.identify.crossval import auto_lowpass

        return auto_lowpass(self.robot, sources, self.options, base, prep, mapping, self.nan, not self.lowpass_fallback,
                            self.cv_folds, self.bandwidth(), self.max_condition, self.chunk_rows, self.still_range,
                            self.filter_torque)

    def chosen_cutoff(self, sources: list, mapping: ColumnMapping, prep: Preprocessing, base, extra: dict,
                      notes: list[str]) -> tuple[Preprocessing, object, list[str]]:
        """``lowpass="auto"`` with a friction model chosen or fitted on the log (``CHOSEN_FRICTION``)
        other than the Coulomb-viscous one the cutoff was chosen with: the cutoff again, with the
        model that is fitted, then that model's nonlinear terms (and, for ``auto``, the model) again
        at it. A model the Coulomb-viscous one misses by far (friction growing with the load) would
        otherwise keep the cutoff that hides the misfit best (a simulated er3a log: 0.94 Hz
        instead of 2-5 Hz, Fl of joint 2 eight standard deviations off). Returns (preprocessing,
        base parameters, the friction fit's notes); "lowpass_selection" gains "friction" (the model
        it was chosen with) and "first" (the Coulomb-viscous choice)."""
        first = extra["lowpass_selection"]
        start = replace(prep, lowpass_hz=self.prep.lowpass_hz, filter_torque=self.prep.filter_torque, reversal_span=(),
                        reversal_velocity=())
        prep, extra["lowpass_selection"], more = self.cutoff_selection(sources, mapping, base, start)
        extra["lowpass_selection"]["friction"] = self.options.friction
        extra["lowpass_selection"]["first"] = first
        notes += more
        self.options, chosen = self.configured_options(), []
        base, prep = self.choose_friction(sources, mapping, prep, extra, chosen)
        return prep, base, chosen

    def choose_friction(self, sources: list, mapping: ColumnMapping, prep: Preprocessing, extra: dict,
                        notes: list[str]):
        """``friction`` stribeck, load-dependent or auto: the model (and its Stribeck velocities or
        load parameters) fitted or chosen on ``sources`` prepared with ``prep``
        (``identify.stribeck``; result "friction_selection"); sets ``options`` and returns (its
        base parameters, ``prep`` with the rows the choice left out, ``data.reversals``). With a
        friction drift the models are chosen and fitted static here, the drift is fitted with the
        chosen one (``identify.drift_fit``)."""
        from dynid.identify.stribeck import MODELS, select_friction

        allowed = MODELS if self.friction == "auto" else (self.friction,)
        self.options, extra["friction_selection"], more, prep = select_friction(
            self.robot, sources, self.options, prep, mapping, self.nan, self.cv_folds, allowed)
        notes += more
        return self.base_parameters(), prep

    def bandwidth(self) -> float | None:
        """Highest harmonic [Hz] of ``excitation`` (None without one)."""
        if self.excitation is None or isinstance(self.excitation, (int, float)):
            return self.excitation
        return max(self.excitation.harmonics) * self.excitation.w_f / (2.0 * math.pi)

    def make_estimator(self, base, found=None, weight: float | None = None, **kw):
        """A fresh estimator of the configured kind (``pipeline.make_estimator``); ``found``
        (``undetermined.Undetermined``): the parameters to hold at the description's values
        (pc holds none: its constraints choose them, unless regularized toward the description
        with ``weight``); ``kw``: more estimator options."""
        from dynid.identify.pipeline import make_estimator

        kw.update(self._estimator_options())
        if weight is not None:
            kw["regularize"] = weight
        if found is not None and (self.estimator != "pc" or weight is not None):
            kw.update(found.options())
        return make_estimator(self.estimator, self.robot, self.options, base, **kw)

    def _estimator_options(self) -> dict:
        kw = {"max_condition": self.max_condition}
        if self.estimator == "irls":
            kw["max_iter"] = self.irls_iterations
        if self.estimator == "pc":
            kw["bound"] = self.prior_bound
        return kw

    def regularization(self, sources: list, mapping: ColumnMapping, base, prep: Preprocessing) -> tuple[float, dict]:
        """(weight, result.json "regularization") of ``regularize``: the weight given, or the one
        blocked cross-validation of ``sources`` chooses (``regularize_cv.choose_weight``)."""
        if self.regularize != "auto":
            return float(self.regularize), {"weight": float(self.regularize), "chosen_by": "--regularize"}
        from dynid.identify.regularize_cv import choose_weight

        selection = choose_weight(self.robot, sources, self.options, base, prep, mapping, self.nan, self.cv_folds,
                                  self.chunk_rows, self.still_range, **self._estimator_options())
        return selection.chosen, selection.to_dict()

    def accumulate(self, sources: list, mapping: ColumnMapping, base, prep: Preprocessing,
                   workers: int | None = None, cuts: list | None = None):
        """The streamed normal equations of ``sources`` (``pipeline.accumulate_sources``: per file
        and segment; ``workers`` compute threads, default one per core; ``cuts``: per source,
        times that cut it into blocks of time whose equations are kept apart)."""
        from dynid.identify.pipeline import accumulate_sources

        return accumulate_sources(self.robot, sources, self.options, base, mapping, prep, self.chunk_rows, self.nan,
                                  workers, cuts=cuts)

    def solve(self, ne, q_min, q_max, base, weight: float | None = None) -> "Fitted":
        """The configured estimator fitted to normal equations ``ne`` (``NormalEquations``) of
        samples whose joint positions span [q_min, q_max] (n,): the base parameters those data
        leave undetermined (joints held still) keep the description's values; ``weight``: of a
        pc regularized toward the description (``regularization``)."""
        from dynid.identify.undetermined import find_undetermined

        found = find_undetermined(self.robot, self.options, base, q_min, q_max, self.still_range, self.seed)
        return Fitted(self.refit(ne, base, found, weight), ne, 0, [], found)

    def refit(self, ne, base, found, weight: float | None = None):
        """A fresh estimator fitted to ``ne`` with the undetermined parameters ``found`` held as in
        the fit (held-out validation refits without a fold: ``fleet.validation``)."""
        return self.make_estimator(base, found, weight).fit_normal_equations(ne)

    def _fit_in_memory(self, sources, mapping, base, prep, weight: float | None = None) -> "Fitted":
        """IRLS, ``per`` and ``cycles``: the samples of every source held in memory."""
        from dynid.identify.normal_equations import NormalEquations
        from dynid.identify.pipeline import prepared_sources, stacked_regressor
        from dynid.identify.undetermined import find_undetermined

        r, options = self.robot, self.options
        readies = prepared_sources(r, sources, options, mapping, prep, self.nan)
        more = {}
        if self.friction_drift:
            from dynid.identify.drift_fit import training_covariates

            timings, covariates = training_covariates(r, readies, mapping, self.friction_drift, self.since_cold,
                                                      sources)
        if self.cycles:
            from dynid.identify.cycle_groups import cycle_mask, parse_cycles

            labelled = [d.cycle for d in readies if d.cycle is not None]
            more["cycles"] = parse_cycles(self.cycles, np.concatenate(labelled) if labelled else None)
            picks = [cycle_mask(d.cycle, self.cycles, d.source) for d in readies]
            readies = [d.select(pick) for d, pick in zip(readies, picks)]
            if self.friction_drift:
                covariates = [c[pick] for c, pick in zip(covariates, picks)]
        if self.friction_drift:
            from dynid.identify.drift_fit import identify_drifting

            drifting, counts, found = identify_drifting(
                r, readies, covariates, options, base, prep,
                lambda names, **kw: self.make_estimator(base, names=names, weight=weight, **kw), self.friction_drift,
                self.still_range, self.drift_rows)
            from dynid.identify.drift_fit import drift_std

            est, ne = drifting.estimator, drifting.ne
            more["uncertainty"] = self.with_constraints(est, drifting.uncertainty)  # pc: drift std null there too
            drifting.drift.std = drift_std(drifting, base.rank)
            self.options = drifting.drift.options  # load-dependent: the load torque of the fixed point with the drift
            more["friction_drift"] = drifting.result_entry(timings)
        else:
            y, tau, mask, counts, span = stacked_regressor(r, readies, options, base, prep)
            found = find_undetermined(r, options, base, *span, self.still_range, self.seed)
            est = self.make_estimator(base, found, weight).fit(y, tau, mask)
            ne = NormalEquations(r.n, base.rank)
            ne.add(y, tau, mask)
            more["uncertainty"] = self._in_memory_std(est, ne, readies, y, tau, mask)
            if options.friction == "load-dependent":  # the std of the fixed point (load_friction, L3)
                from dynid.identify.load_friction import fitted_fl, load_slope
                from dynid.identify.model import load_torque

                q, dq, ddq = (np.concatenate([getattr(d, k) for d in readies]) for k in ("q", "dq", "ddq"))
                slope = load_slope(options, fitted_fl(base, est.coef_, r.n), dq, load_torque(r, q, dq, ddq, options))
                self._fixed_point_std(Fitted(est, ne, 0, [], found), base, [(y, slope, mask)])
        notes = [(f"{d.source}: " if len(readies) > 1 else "") + note for d in readies for note in d.notes]
        if self.per:
            if self.friction_drift:  # each cycle of the warm robot: the fitted drift taken off
                from dynid.identify.drift_fit import without_drift

                readies = without_drift(r, readies, covariates, drifting.drift)
            more["per_" + self.per] = self._per(readies, base, prep, weight)
        more["sources"] = [c.to_dict() for c in counts]
        return Fitted(est, ne, sum(c.samples for c in counts), notes, found, more,
                      drifting.held if self.friction_drift else None)

    def correlated_std(self, fitted: "Fitted", base, sources: list, mapping: ColumnMapping,
                       prep: Preprocessing) -> dict:
        """ols and wls: ``fitted.est``'s covariance made the per-joint sandwich whose scores carry
        the correlation of the residuals in time, measured on pieces of ``sources``
        (``identify.residual_correlation`` R1-R3); result.json "uncertainty" says which covariance
        the std are (the others keep Khalil-Gautier's white-noise one: "white")."""
        from dynid.identify.residual_correlation import correlated_uncertainty, measured_residuals, white

        est = fitted.est
        if est.joint_weights() is None:
            return white(f"estimator {est.name}")
        from dynid.identify.threads import single_blas_thread

        with single_blas_thread():  # small products: BLAS threads only contend
            parts = measured_residuals(self.robot, sources, self.options, base, prep, est.coef_, mapping, self.nan,
                                       self.chunk_rows)
            return correlated_uncertainty(est, fitted.ne, parts)

    @staticmethod
    def with_constraints(est, uncertainty: dict) -> dict:
        """``uncertainty`` (result.json's) with pc's "constraints": where a constraint is active, the
        std of the parameters on it made null (``PhysicallyConsistent.active_constraints``); pc
        regularized toward the description (no per-joint weights) and the other estimators: as is."""
        if est.name == "pc" and est.joint_weights() is not None and "constraints" not in uncertainty:
            uncertainty["constraints"] = est.active_constraints()  # once: it nulls the std it judges held
        return uncertainty

    @staticmethod
    def _in_memory_std(est, ne, readies, y: np.ndarray, tau: np.ndarray, mask: np.ndarray | None) -> dict:
        """irls and ``cycles``, fitted to the rows y (N, n, b), tau (N, n), mask of the prepared
        logs ``readies`` held in memory: ``correlated_std`` on evenly spread windows of those rows
        (``residual_correlation.windowed_uncertainty``; no lag across a segment or a cycle left
        out). irls: the M-estimate's sandwich at its final weights (the scores of its rows scaled by
        ``row_scale``, w_j = 1; the bread of ``bread_scale``)."""
        from dynid.identify.normal_equations import NormalEquations
        from dynid.identify.residual_correlation import windowed_uncertainty
        from dynid.identify.threads import single_blas_thread

        starts = np.cumsum([0] + [len(d) for d in readies])
        if starts[-1] != len(y):
            raise AssertionError(f"rows {len(y)} of the stacked regressor, {starts[-1]} prepared")
        keep = np.ones(tau.shape, dtype=bool) if mask is None else mask
        scale, weights, normal = None, None, None
        if hasattr(est, "row_scale"):  # irls: the scores of its scaled rows, the bread of psi'
            scale, weights, ne = est.row_scale(), np.ones(tau.shape[1]), NormalEquations(*y.shape[1:])
            bread, slope = NormalEquations(*y.shape[1:]), est.bread_scale()
            with single_blas_thread():
                for s in range(0, len(y), 20_000):
                    sl = slice(s, s + 20_000)
                    ne.add(y[sl] * scale[sl, :, None], tau[sl] * scale[sl], keep[sl])
                    bread.add(y[sl] * slope[sl, :, None], tau[sl] * slope[sl], keep[sl])
            normal = bread.A.sum(axis=0)

        def part(i: int, window: slice):
            rows = slice(int(starts[i]) + window.start, int(starts[i]) + window.stop)
            yk, rk = y[rows], tau[rows] - y[rows] @ est.coef_
            if scale is not None:
                yk, rk = yk * scale[rows, :, None], rk * scale[rows]
            return yk, rk, keep[rows]

        return windowed_uncertainty(est, ne, readies, lambda windows: [part(i, w) for i, w in windows], weights,
                                    normal)

    def _fixed_point_std(self, fitted: "Fitted", base, parts) -> None:
        """Friction load-dependent: ``fitted.est``'s covariance made that of the fixed point of its
        load torque (``load_friction.fixed_point_std``, L3) from the regressor rows ``parts``
        (``load_friction.slope_gram``); ols and wls only (irls and pc keep the last iterate's)."""
        from dynid.identify.load_friction import fixed_point_std, inertial_base_columns, slope_gram

        gram = slope_gram(parts, self.robot.n, base.rank)
        fixed_point_std(fitted.est, fitted.ne, gram, inertial_base_columns(self.robot, self.options, base))

    def _stribeck_std(self, fitted: "Fitted", base, sources: list, mapping: ColumnMapping, prep: Preprocessing,
                      extra: dict, notes: list[str]) -> None:
        """Friction stribeck: ``fitted.est``'s covariance made that of the joint estimate of the
        parameters and the Stribeck velocities (``stribeck_uncertainty.joint_covariance``, S6): the
        std of Fs, Fc, Fv and of the rigid-body parameters include the uncertainty of v_s. A joint
        whose v_s the log does not determine (no "stribeck_velocity_std") has no std of Fs and Fc
        (NaN, null in result.json: they mean nothing without v_s; "covariance", for prediction
        bands, keeps their rows at the fitted v_s) and a note says so. The joint
        covariance for ols and wls only, the sandwich (R1) of its Jacobian with the residuals'
        correlation measured on pieces of the logs (``residual_correlation``; extra "uncertainty");
        pc keeps the sandwich at the fixed v_s (``correlated_std``), a note says so."""
        from dynid.identify.drift_fit import fit_rows
        from dynid.identify.load_friction import fitted_rows
        from dynid.identify.pipeline import prepared_sources
        from dynid.identify.residual_correlation import measurable, measured_pieces, residual_correlation
        from dynid.identify.stribeck_uncertainty import joint_covariance, used_joints, velocity_columns
        from dynid.identify.threads import single_blas_thread

        n, index = self.robot.n, {name: i for i, name in enumerate(base.names)}
        beta = fitted.est.coef_
        excess = np.array([beta[index[f"Fs{j + 1}"]] - beta[index[f"Fc{j + 1}"]]
                           if f"Fs{j + 1}" in index and f"Fc{j + 1}" in index else np.nan for j in range(n)])
        velocity_std = (extra.get("friction_selection") or {}).get("stribeck_velocity_std") or [None] * n
        determined = np.array([s is not None for s in velocity_std])
        readies = prepared_sources(self.robot, sources, self.options, mapping, prep, self.nan)
        parts = ((yb, dq, keep) for _, _, _, dq, _, yb, keep in fitted_rows(self.robot, self.options, base, readies,
                                                                            fit_rows(readies, prep)))
        velocity, used, measured = np.array(self.options.stribeck_velocity), used_joints(excess, determined), None
        if fitted.est.name in ("ols", "wls") and used.size:  # the rows [Y_b | h] of (S4) on pieces of the logs
            free = np.flatnonzero(np.isfinite(fitted.est.std_))
            with single_blas_thread():
                pieces = [(np.concatenate([y[..., free], velocity_columns(ready.dq, velocity, excess, used)], axis=2),
                           r, keep) for ready, y, r, keep in measured_pieces(
                    self.robot, sources, self.options, base, prep, beta, mapping, self.nan, self.chunk_rows)]
                measured = residual_correlation(pieces) if measurable(pieces) else None
        white = joint_covariance(fitted.est, fitted.ne, parts, velocity, excess, determined, measured)
        done = white is not None
        if measured is not None and done:
            extra["uncertainty"] = measured.entry(white, fitted.est.std_)
        elif not done and fitted.est.joint_weights() is not None:  # no v_s to add, or pc: the sandwich at the v_s
            extra["uncertainty"] = self.correlated_std(fitted, base, sources, mapping, prep)
        if not determined.all():  # Fs, Fc of a v_s the log does not determine: no std (null)
            est, joints = fitted.est, np.flatnonzero(~determined)
            for j in joints:
                for name in (f"Fs{j + 1}", f"Fc{j + 1}"):
                    if name in index:
                        est.std_[index[name]] = est.rel_std_[index[name]] = np.nan
            notes.append(f"Fs and Fc of joint(s) {', '.join(str(j + 1) for j in joints)}: no standard deviation "
                         "(null), their Stribeck velocity is not determined by the log")
        if not done and self.estimator not in ("ols", "wls"):
            notes.append(f"Stribeck friction with estimator {self.estimator}: the std are those at the fitted v_s "
                         "(the uncertainty of v_s is not in them; ols and wls include it)")

    def _per(self, readies, base, prep, weight: float | None = None) -> dict:
        """Each cycle (stage, segment) of the prepared logs identified alone, all base parameters
        fitted: result.json "per_<per>" (thesis 5.1.5)."""
        from dynid.identify.pipeline import per_cycle

        stats = per_cycle(self.robot, readies, self.options, base, lambda: self.make_estimator(base, weight=weight),
                          self.per, prep, prepared=True)
        out = {"labels": stats["labels"], "failed": stats["failed"], "mean": stats["mean"].tolist(),
               "std": stats["std"].tolist(),
               "relative_spread": [None if not np.isfinite(v) else float(v) for v in stats["relative_spread"]],
               "values": stats["values"].tolist()}
        if self.per == "cycle":
            from dynid.identify.cycle_stats import statistics_to_json, thesis_statistics

            out["statistics"] = statistics_to_json(thesis_statistics(stats["values"], stats["labels"],
                                                                     self.skip_first))
        return out

    def document(self, fitted: "Fitted", base, prep: Preprocessing, mapping: ColumnMapping, notes: list[str],
                 data_name: str, extra: dict) -> dict:
        """The result.json dictionary of a fit (``result.build_result``, the undetermined
        parameters marked; ``extra``: more fields, e.g. "lowpass_selection")."""
        from dynid.identify.result import build_result
        from dynid.identify.undetermined import annotate

        extra = {**extra, **fitted.extra}
        if self.essential:
            from dynid.identify.essential import essential_parameters

            est, sigma2 = fitted.est, getattr(fitted.est, "sigma2_", None)
            scores = getattr(est, "score_covariance_", None) if est.name in ("ols", "wls") else None
            why = (f"estimator {est.name} (the reduced fits are least squares: ols and wls only)"
                   if est.name not in ("ols", "wls") else "friction stribeck" if self.options.friction == "stribeck"
                   else "no piece of the logs long enough to measure the residuals' correlation")
            names, found = list(base.names), fitted.found
            if fitted.held is not None:
                # --friction-drift: the drift coefficients (drift_fit D1) are candidates too, and the
                # columns the fit held (undetermined, or the drift of joints that never moved) stay held
                names, found = list(est.names), fitted.held
            extra["essential"] = essential_parameters(fitted.ne, names, None if sigma2 is None else
                                                      1.0 / np.maximum(sigma2, 1e-300), found=found,
                                                      scores=scores, why=why)
        document = build_result(self.spec, self.robot, self.options, base, fitted.est, fitted.ne, prep, mapping,
                                fitted.samples, notes + list(fitted.notes), data_name, extra)
        annotate(document, fitted.found, self.robot, base, self.estimator)
        return document

    def _result(self, document: dict, issued: list[str]):
        """The result object; the DynidWarnings issued while fitting come first in its warnings."""
        from dynid.identify.identification_result import IdentificationResult

        document["warnings"] = list(dict.fromkeys(self._load_warnings + issued)) + document["warnings"]
        return IdentificationResult.from_dict(document, self.robot)


@dataclass
class Fitted:
    """An estimator fitted to some data, with what result.json needs of the data: the normal
    equations ``ne``, the sample count, the notes, the undetermined parameters ``found`` and
    result.json additions (``extra``: "sources", "per_cycle"...); ``held``: with a friction drift,
    the parameters held among all of ``est``'s (base and drift, ``drift_fit.DriftFit.held``)."""

    est: object
    ne: object
    samples: int
    notes: list[str]
    found: object
    extra: dict = field(default_factory=dict)
    held: object = None


class _recorded:
    """Collect the DynidWarnings of a block into a list (texts), then issue them again, so that
    the caller's handlers (the CLI's warning lines) still see each once."""

    def __init__(self, into: list[str]):
        self.into = into

    def __enter__(self):
        self._catch = warnings.catch_warnings(record=True)
        self._caught = self._catch.__enter__()
        warnings.simplefilter("always", DynidWarning)
        return self.into

    def __exit__(self, *exc):
        self._catch.__exit__(*exc)
        for w in self._caught:
            if issubclass(w.category, DynidWarning):
                if str(w.message) not in self.into:
                    self.into.append(str(w.message))
                warnings.warn(DynidWarning(str(w.message)), stacklevel=3)
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        return False

