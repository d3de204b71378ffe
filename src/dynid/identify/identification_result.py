"""The result of an identification: typed fields over the result.json document.

``Identification.fit`` returns an ``IdentificationResult``; ``load_result`` reads one back from
a result.json (written by ``save`` or by ``dynid identify``: the two are the same document).
Every field is read from the document, so a fitted result and the same result saved and loaded
hold the same numbers (JSON keeps a double's shortest round-trip text).

    result.names, result.values, result.std          # base parameters (b,), their standard deviations
    result.undetermined                              # names the data could not determine
    result.predict(t, q, dq=dq)                      # (N, n) torques, preprocessed as in training
    result.validate(t, q, tau)                       # RMSD per joint (thesis eq. 5.1), relative error
    result.save("result.json")
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dynid.data.arrays import ArrayLog
from dynid.data.columns import ColumnMapping
from dynid.data.preprocess import Preprocessing
from dynid.identify.base import BaseParameters
from dynid.identify.model import ModelOptions


@dataclass(frozen=True)
class IdentificationResult:
    """An identified model and how it was obtained (attributes in SI units).

    robot: the ``dynid.Robot`` identified
    document: the result.json dictionary (docs/formats.md); ``save`` writes it unchanged
    names: (b,) base parameter names (``identify.base``: e.g. ``ZZ1R``, ``Fc2``, ``Ia3``)
    values: (b,) base parameter values [kg, kg m, kg m^2, N m, N m s/rad, ... as the names' units]
    std: (b,) Khalil-Gautier standard deviations, NaN where there is none (a parameter the
      data do not determine, or an ill-conditioned problem accepted with max_condition inf)
    covariance: (b, b) parameter covariance (None when not available)
    undetermined: names of the base parameters the data could not determine (joints held
      still): they keep the description's values (or pc's constraints choose them)
    diagnostics: numerical honesty of the fit: rank, condition number, convergence
    rmsd, relative_rmsd: (n,) fit residual per joint [N m | N] and over its RMS torque (eq. 5.1)
    estimator, friction: as configured; model, base, preprocessing, mapping: what ``predict``
      repeats on new data
    warnings: messages about the data and the fit
    """

    robot: object
    document: dict

    @classmethod
    def from_dict(cls, document: dict, robot) -> "IdentificationResult":
        """The result of a result.json dictionary (checked: ``result_schema.check_result``) for ``robot``."""
        from dynid.identify.result_schema import check_result

        return cls(robot, check_result(document, "result"))

    # -- fields --------------------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        """(b,) base parameter names."""
        return [p["name"] for p in self.document["base_parameters"]]

    @property
    def values(self) -> np.ndarray:
        """(b,) base parameter values [SI units of each parameter]."""
        return np.array([p["value"] for p in self.document["base_parameters"]], dtype=float)

    @property
    def std(self) -> np.ndarray:
        """(b,) standard deviations (Khalil-Gautier), NaN where there is none."""
        return np.array([np.nan if p.get("std") is None else p["std"] for p in self.document["base_parameters"]],
                        dtype=float)

    @property
    def covariance(self) -> np.ndarray | None:
        """(b, b) parameter covariance, None when the fit has none."""
        cov = self.document.get("covariance")
        return None if cov is None else np.array(cov, dtype=float)

    @property
    def undetermined(self) -> list[str]:
        """Names of the base parameters the data leave undetermined (joints held still)."""
        return list(self.document.get("undetermined", {}).get("parameters", []))

    @property
    def diagnostics(self) -> dict:
        """Rank, condition number, convergence of the fit (docs/formats.md, "diagnostics")."""
        return self.document.get("diagnostics", {})

    @property
    def rmsd(self) -> np.ndarray:
        """(n,) RMSD of the fit per joint (thesis eq. 5.1) [N m | N]."""
        return np.array([np.nan if v is None else v for v in self.document["fit"]["rmsd"]], dtype=float)

    @property
    def relative_rmsd(self) -> np.ndarray:
        """(n,) RMSD per joint over the joint's RMS torque."""
        return np.array([np.nan if v is None else v for v in self.document["fit"]["relative_rmsd"]], dtype=float)

    @property
    def estimator(self) -> str:
        """ols | wls | irls | pc."""
        return self.document["estimator"]

    @property
    def friction(self) -> str:
        """The friction model: none | coulomb-viscous | polynomial | asymmetric."""
        return self.document["friction"]

    @property
    def warnings(self) -> list[str]:
        """Messages about the data and the fit."""
        return list(self.document.get("warnings", []))

    @property
    def model(self) -> ModelOptions:
        """The identification model (``identify.model.ModelOptions``)."""
        return ModelOptions.from_dict(self.document["model"])

    @property
    def base(self) -> BaseParameters:
        """The base parameter definition (``identify.base.BaseParameters``: independent columns, K)."""
        return BaseParameters.from_dict(self.document["base"], self.model)

    @property
    def preprocessing(self) -> Preprocessing:
        """The preprocessing ``predict`` repeats (``data.preprocess.Preprocessing``)."""
        return Preprocessing.from_dict(self.document["preprocessing"])

    @property
    def mapping(self) -> ColumnMapping:
        """The data layout of the training logs (``data.columns.ColumnMapping``)."""
        return ColumnMapping.from_dict(self.document.get("column_mapping"))

    def __repr__(self) -> str:
        return (f"IdentificationResult({self.estimator} on {self.document.get('robot_name')}, "
                f"{len(self.document['base_parameters'])} base parameters, "
                f"relative error {self.document['fit'].get('relative_error')})")

    # -- use -----------------------------------------------------------------------------
    def predict(self, t, q, dq=None, ddq=None, columns: dict | None = None, since_cold: float | None = None,
                with_time: bool = False):
        """Model torques (N, n) [N m | N] on arrays t (N,) [s], q, dq, ddq (N, n) (dq, ddq None:
        estimated from q), preprocessed as in training (``prediction.predict_chunks``), at the
        log's own samples (as ``dynid predict`` writes them: rows dropped for NaN get none). On
        irregular time stamps the samples are those of the uniform grid the log is resampled to;
        ``with_time``: return (t (M,), tau_hat (M, n)) to know them. A model with a friction drift
        needs the log's temperatures (``columns``: temp1..tempn) or its operating time
        (``since_cold`` [s] at t[0], inf = warm; or a since_cold column)."""
        log = ArrayLog.from_signals(t, q, None, dq, ddq, columns, name="arrays")
        parts = _prediction(self, log, since_cold)
        own = [slice(None) if p["filled"] is None else ~p["filled"] for p in parts]  # the log's own time stamps
        t_out = np.concatenate([p["t"][k] for p, k in zip(parts, own)]) if parts else np.empty(0)
        tau_hat = (np.concatenate([p["tau_hat"][k] for p, k in zip(parts, own)]) if parts
                   else np.empty((0, self.robot.n)))
        return (t_out, tau_hat) if with_time else tau_hat

    def validate(self, t, q, tau, dq=None, ddq=None, columns: dict | None = None, since_cold: float | None = None,
                 min_velocity: float = 0.05) -> dict:
        """Validation figures on arrays (``dynid validate``'s report: "rmsd", "relative_rmsd" (n,)
        per joint (thesis eq. 5.1), "relative_error", "samples"; with ``min_velocity`` [rad/s |
        m/s] also "moving": the figures without slower samples), on the interior samples;
        ``columns``, ``since_cold``: as ``predict``."""
        log = ArrayLog.from_signals(t, q, tau, dq, ddq, columns, name="arrays")
        return self.validate_files([log], min_velocity, ColumnMapping(), since_cold=since_cold)["arrays"]

    def validate_files(self, paths, min_velocity: float = 0.05, mapping: ColumnMapping | None = None,
                       segments: dict | None = None, chunk_rows: int = 50_000, since_cold: float | None = None) -> dict:
        """``dynid validate`` on files (or ``ArrayLog``s): {path: report} and "overall" for
        several (``prediction.validate_sources``); ``mapping`` default: as in training;
        ``segments``: preprocessing fields to change ({"segments": "auto"}); ``since_cold``: a
        drifting friction's operating time at each log's first sample [s]."""
        from dynid.identify.prediction import validate_sources

        return validate_sources(self.robot, self.document, list(paths), mapping, segments, min_velocity, chunk_rows,
                                since_cold=since_cold)

    def relative_to(self, directory: str | Path) -> "IdentificationResult":
        """The same result with the paths of its data ("data", "sources", a friction drift's
        "sources") relative to ``directory`` (a result kept beside its logs, in a folder that
        may move)."""
        import copy
        import os

        def rel(path: str) -> str:
            return os.path.relpath(path, directory) if os.path.isabs(path) or os.path.exists(path) else path

        document = copy.deepcopy(self.document)
        document["data"] = rel(document["data"])
        for source in document.get("sources", []) + (document.get("friction_drift") or {}).get("sources", []):
            source["path"] = rel(source["path"])
        return IdentificationResult(self.robot, document)

    def save(self, path: str | Path) -> None:
        """Write result.json (atomically), exactly as ``dynid identify --out`` does."""
        from dynid.identify.result import write_result

        write_result(path, self.document)


def _prediction(result: IdentificationResult, log: ArrayLog, since_cold: float | None = None) -> list[dict]:
    from dynid.identify.prediction import predict_chunks

    return [c for c in predict_chunks(result.robot, result.document, log, ColumnMapping(), since_cold=since_cold)
            if len(c["t"])]


def load_result(path: str | Path, robot=None, force: bool = False) -> IdentificationResult:
    """An ``IdentificationResult`` read from a result.json. ``robot``: the robot it belongs to
    (checked against the stored identity; ``force`` uses it anyway, with a warning); None loads
    the robot the result names ("robot": a builtin name or a description's path)."""
    from dynid.identify.result import load_result as read_document

    if robot is None:
        from dynid.robot import load_robot

        document = read_document(path)
        return IdentificationResult(load_robot(document["robot"]), document)
    if not hasattr(robot, "n"):
        from dynid.robot import load_robot

        robot = load_robot(robot)
    return IdentificationResult(robot, read_document(path, robot, force))
