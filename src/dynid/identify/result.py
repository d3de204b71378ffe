"""result.json (docs/formats.md section 4): what ``identify`` writes and ``predict`` reads back.

Besides the contract fields it stores everything needed to recompute torques on new data:
the identification model options, the preprocessing, the column mapping, the base
parameter definition (independent columns and K), and for the physically consistent
estimator the full standard parameters.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np

from dynid import __version__
from dynid.data.columns import ColumnMapping
from dynid.files.inputs import read_json_document
from dynid.data.io import atomic_write_text
from dynid.identify.plausibility import description_warnings, fit_warnings, parameter_warnings
from dynid.data.preprocess import Preprocessing
from dynid.errors import DataError, DynidWarning
from dynid.identify.base import BaseParameters
from dynid.identify.estimators import Estimator
from dynid.identify.model import ModelOptions
from dynid.identify.normal_equations import NormalEquations
from dynid.identify.result_schema import check_result, check_result_robot
from dynid.robot.identity import robot_identity
from dynid.robot.inertia import link_inertials


def _num(x) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def fit_figures(ne: NormalEquations, beta: np.ndarray) -> dict:
    """RMSD (thesis eq. 5.1), relative RMSD (over the RMS torque) and relative error of a fit."""
    rss = ne.residual_ss(beta)
    rows = np.maximum(ne.rows, 1)
    rms_tau = np.sqrt(ne.C / rows)
    rmsd = np.sqrt(rss / rows)
    return {"rmsd": [_num(v) for v in rmsd],
            "relative_rmsd": [_num(v) for v in np.where(rms_tau > 0, rmsd / np.where(rms_tau > 0, rms_tau, 1), np.nan)],
            "relative_error": _num(np.sqrt(rss.sum() / max(ne.C.sum(), 1e-300))),
            "rows_per_joint": ne.rows.tolist()}


def build_result(robot_spec: str, robot, options: ModelOptions, base: BaseParameters, est: Estimator,
                 ne: NormalEquations, prep: Preprocessing, mapping: ColumnMapping, samples: int,
                 notes: list[str], data_path: str, extra: dict | None = None) -> dict:
    """The result.json dictionary."""
    params = [{"name": name, "value": float(v), "std": _num(s), "relative_std": _num(r), "combination": combo}
              for name, v, s, r, combo in zip(base.names, est.coef_, est.std_, est.rel_std_, base.combinations)]
    fit = fit_figures(ne, est.coef_)
    fit.update({"samples": int(samples), "condition_number": _num(est.cond_),
                "sigma": [_num(v) for v in np.sqrt(est.sigma2_)]})
    result = {
        "robot": robot_spec, "robot_name": robot.name, "robot_identity": robot_identity(robot),
        "n": robot.n, "estimator": est.name,
        "friction": options.friction, "model": options.to_dict(), "preprocessing": prep.to_dict(),
        "column_mapping": mapping.to_dict(), "data": str(data_path),
        "base_parameters": params, "base": base.to_dict(), "fit": fit,
        "warnings": list(getattr(est, "warnings_", [])), "data_notes": list(dict.fromkeys(notes)),
        "diagnostics": est.diagnostics(),
        "dynid_version": __version__,
    }
    b = base.rank  # est and ne may hold more unknowns after the base parameters (a friction drift: drift_fit.py)
    cov = np.asarray(getattr(est, "cov_", np.full((0, 0), np.nan)), dtype=float)[:b, :b]
    if cov.size and np.all(np.isfinite(cov)):  # prediction bands (identify/bands.py, docs/formats.md)
        result["covariance"] = [[float(x) for x in row] for row in cov]
    if robot.n_bodies != robot.n:  # mimic joints: 10 standard parameters per moving body (docs/formats.md)
        result["n_bodies"] = robot.n_bodies
    if hasattr(est, "theta_"):
        result["standard_parameters"] = [{"name": n, "value": float(v)}
                                         for n, v in zip(base.standard_names, est.theta_)]
        result["lmi_min_eigenvalues"] = [float(v) for v in est.lmi_min_eig_]
        result["links"] = [link_inertials(link.name, est.theta_[10 * i:10 * i + 10])
                           for i, link in enumerate(robot.links)]  # every link's standard inertials
    if extra:
        result.update(extra)
    fit["description_scale"], fit["description_scale_per_joint"] = description_scale(robot, options, base,
                                                                                     ne.leading(b))
    for text in fit_warnings(fit["relative_error"], fit["relative_rmsd"], str(data_path), "the fit") \
            + description_warnings(fit["description_scale"], str(data_path), fit["description_scale_per_joint"]) \
            + parameter_warnings(params, options.friction, torque_shares(base, est.coef_, ne)):  # identify.plausibility
        warnings.warn(DynidWarning(text), stacklevel=2)
    return result


def torque_shares(base: BaseParameters, beta: np.ndarray, ne: NormalEquations) -> dict[str, float]:
    """{name: RMS torque of the term / RMS torque of its joint} for the base parameters of one
    joint (named ...j, like Fv3 or Ia5): |beta_k| sqrt(A_j[k, k] / C_j) from the normal equations."""
    out = {}
    for k, name in enumerate(base.names):
        digits = name[len(name.rstrip("0123456789")):]
        j = int(digits) - 1 if digits else -1
        if 0 <= j < ne.n and ne.C[j] > 0:
            out[name] = float(abs(beta[k]) * np.sqrt(max(ne.A[j][k, k], 0.0) / ne.C[j]))
    return out


def description_scale(robot, options: ModelOptions, base: BaseParameters,
                      ne: NormalEquations) -> tuple[float | None, list[float | None]]:
    """(c, [c_j]): c of tau ~ c Y beta_d by least squares over the fitted samples, beta_d = K theta the
    robot description's base parameters (friction 0), c = sum_j B_j . beta_d / sum_j beta_d^T A_j
    beta_d from the normal equations alone (None when the description predicts no torque: no
    inertials); c_j the same for joint j alone, None where the description's torque is below
    ``DESCRIPTION_SHARE`` of the joint's RMS torque (too little to judge its sign)."""
    from dynid.identify.model import full_parameters

    beta = base.K @ full_parameters(robot, options)
    model2 = np.einsum("jab,a,b->j", ne.A, beta, beta)  # (n,) ||Y_j beta_d||^2
    cross = ne.B @ beta  # (n,) tau_j . Y_j beta_d
    total = float(model2.sum())
    c = _num(float(cross.sum()) / total) if total > 1e-12 * max(float(ne.C.sum()), 1e-300) else None
    per_joint = [_num(cross[j] / model2[j]) if model2[j] > DESCRIPTION_SHARE ** 2 * ne.C[j] > 0 else None
                 for j in range(ne.n)]
    return c, per_joint


DESCRIPTION_SHARE = 0.3  # the description's RMS torque on a joint, over the measured one, needed to judge c_j


def write_result(path: str | Path, result: dict) -> None:
    atomic_write_text(path, json.dumps(result, indent=2) + "\n")


def load_result(path: str | Path, robot=None, force: bool = False) -> dict:
    """A result.json, checked (``result_schema.check_result``); with ``robot``, also checked to
    belong to it (``check_result_robot``: a mismatch is an error unless ``force``)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"result file not found: {path}")
    result = check_result(read_json_document(path, "result.json"), str(path))
    if robot is not None:
        check_result_robot(result, robot, str(path), force)
    return result


def result_model(result: dict) -> tuple[ModelOptions, BaseParameters, np.ndarray, Preprocessing]:
    """(model options, base parameters, beta (b,), preprocessing) stored in a result. The values of
    ``base_parameters`` are matched to the base definition by name (an edited file may list them
    in another order); a name missing, unknown or given twice is an error."""
    try:
        options = ModelOptions.from_dict(result["model"])
        base = BaseParameters.from_dict(result["base"], options)
        beta = parameter_values(result["base_parameters"], base.names)
        prep = Preprocessing.from_dict(result["preprocessing"])
    except (KeyError, TypeError, ValueError, IndexError, OverflowError) as exc:
        if isinstance(exc, DataError):
            raise
        raise DataError(f"result.json: malformed model, base or preprocessing field ({type(exc).__name__}: {exc})"
                        ) from None
    return options, base, beta, prep


def parameter_values(entries: list[dict], names: list[str]) -> np.ndarray:
    """(b,) values of ``entries`` ({"name", "value"}) in the order of ``names`` (matched by name)."""
    values: dict[str, float] = {}
    for entry in entries:
        if entry["name"] in values:
            raise DataError(f"result.json: base parameter '{entry['name']}' is listed twice; expected each once")
        values[entry["name"]] = float(entry["value"])
    missing = [nm for nm in names if nm not in values]
    unknown = [nm for nm in values if nm not in set(names)]
    if missing or unknown:
        raise DataError(f"result.json: base_parameters do not match the base definition (missing {missing[:6]}, "
                        f"unknown {unknown[:6]}); expected one value per name of base.names")
    return np.array([values[nm] for nm in names], dtype=float)
