"""``--estimator pc --regularize auto`` against least squares and plain pc on MuJoCo logs of an
er3a whose true inertials are off the description's by up to 40 % (tests/mujoco_logs.py: the
setting of tests/test_regularized_pc.py, over several seeds).

Per seed: a 20 s training and a 10 s validation log at 200 Hz (PD tracking of a multi-sine in
MuJoCo, armature, damping, MuJoCo's friction constraint, 2^14-count motor encoders, 1 % torque
noise), identified by ``dynid identify`` (defaults: --lowpass auto) as ols, pc and pc
--regularize auto, validated by ``dynid validate`` on the validation log. Printed: the held-out
relative error of each (and the regularized over OLS), the weight chosen, how many of the base
parameters the data determine (OLS %sigma < 5, prior off by more than 3 sigma) are closer to
the truth than the description's, each link's entropic divergence from the truth (description,
pc, regularized), and the wall time of each identification.

Usage: .venv/bin/python bench/regularized_prior.py [--seeds 11 7 3]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # tests/mujoco_logs.py, cli_helpers.py


def run_seed(seed: int, root: Path) -> None:
    from cli_helpers import run_ok
    from mujoco_logs import er3a_off_its_description

    from dynid.identify import ModelOptions, base_parameters
    from dynid.identify.model import full_parameters
    from dynid.identify.regularized import link_divergences

    cad, truth = er3a_off_its_description(root, seed)
    results, errors, seconds = {}, {}, {}
    estimators = (("ols", []), ("pc", ["--estimator", "pc"]), ("reg", ["--estimator", "pc", "--regularize", "auto"]))
    for name, args in estimators:
        start = time.perf_counter()
        run_ok("identify", "-r", "er3a", "--data", root / "train.csv", "--out", root / f"{name}.json", *args)
        seconds[name] = time.perf_counter() - start
        run_ok("validate", "-r", "er3a", "--params", root / f"{name}.json", "--data", root / "validation.csv",
               "--json", root / f"v_{name}.json")
        results[name] = json.loads((root / f"{name}.json").read_text())
        errors[name] = json.loads((root / f"v_{name}.json").read_text())[str(root / "validation.csv")]["relative_error"]
    prior = full_parameters(cad, ModelOptions())
    base = base_parameters(cad, ModelOptions())
    std = np.array([p["std"] for p in results["ols"]["base_parameters"]])
    rel = np.array([p["relative_std"] for p in results["ols"]["base_parameters"]])
    beta_true, beta_prior = base.K @ truth, base.K @ prior
    determined = (rel < 5) & (np.abs(beta_prior - beta_true) > 3 * std)
    theta = {k: np.array([p["value"] for p in results[k]["standard_parameters"]]) for k in ("pc", "reg")}
    closer = np.abs(base.K @ theta["reg"] - beta_true)[determined] < np.abs(beta_prior - beta_true)[determined]
    print(f"seed {seed}: held-out relative error OLS {100 * errors['ols']:.4f} %, pc {100 * errors['pc']:.4f} %, "
          f"regularized {100 * errors['reg']:.4f} % ({errors['reg'] / errors['ols']:.4f} x OLS); weight "
          f"{results['reg']['regularization']['weight']:.3g}; determined base parameters closer to the truth than the "
          f"description: {int(closer.sum())} of {int(determined.sum())}")
    for label, values in (("description", prior), ("pc", theta["pc"]), ("regularized", theta["reg"])):
        d = link_divergences(values, truth, cad.n)
        values = " ".join(f"{v:7.3f}" for v in d)
        print(f"  divergence from the truth per link, {label:11s}: {values}  (sum {sum(d):.3f})")
    print(f"  identify wall time: OLS {seconds['ols']:.1f} s, pc {seconds['pc']:.1f} s, "
          f"regularized {seconds['reg']:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[11, 7, 3])
    args = parser.parse_args()
    for seed in args.seeds:
        with tempfile.TemporaryDirectory() as tmp:
            run_seed(seed, Path(tmp))


if __name__ == "__main__":
    main()
