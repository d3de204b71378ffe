"""Drive gains with a physically consistent robot and load (``gains`` method ``pc``).

(G4) of ``gains`` is weighted least squares in x = [beta; phi_u] once the gains K are fixed,
and each gain is closed-form once x is fixed. The estimate alternates the two, from the
structured TLS solution:

1. x: with omega_j = w_j / K_j^2, minimize sum_j omega_j ||W_j,x x - (K_j i_j + y_j)||^2 over
   beta = K_b theta (theta the model's full parameters, ``identify.physical``: one
   pseudo-inertia LMI per link, rotor inertias and friction >= 0, a 1e-6 pull toward the
   description for the directions the data leave free) and phi_u with the load's
   pseudo-inertia J(phi_k + phi_u) >= 0 (Wensing, Kim & Slotine 2017), a semidefinite program;
2. K: joint j's current error ||i_j - u_j / K_j||^2 with u_j = W_j,x x - y_j (the model's
   torque) is least at 1 / K_j = i_j.u_j / u_j.u_j;

until the gains move by less than 1e-7 of themselves (at most ``ITERATIONS`` rounds).
"""

from __future__ import annotations

import numpy as np

from dynid.errors import IllConditionedError
from dynid.identify.physical import PhysicallyConsistent, least_squares_form, pseudo_inertia_basis, pseudo_solve

ITERATIONS = 12
REGULARIZATION = 1e-6


def consistent_fit(robot, options, base, known: np.ndarray, known_values: np.ndarray, unknown: np.ndarray):
    """A callable (x_start, weights, ne, keep) -> (x, solver status) for ``gains.fit_gains(pc=...)``:
    ``ne`` the normal equations of the determined unknowns, ``keep`` which of [beta; phi_u] they are."""

    def fit(x_start: np.ndarray, weights: np.ndarray, ne, keep: np.ndarray):
        n = ne.n
        m = ne.b - n
        gains = np.array(x_start[m:], dtype=float)
        helper = PhysicallyConsistent(robot=robot, options=options, base=base)
        status = "optimal"
        x = np.array(x_start[:m], dtype=float)
        for _ in range(ITERATIONS):  # alternate the program in x and the closed-form gains
            x, status = _program(helper, base, ne, weights, gains, keep, known, known_values, unknown)
            new = _gains(ne, x)
            moved = float(np.max(np.abs(new / gains - 1.0)))
            gains = new
            if moved < 1e-7:
                break
        return np.concatenate([x, gains]), status

    return fit


def _gains(ne, x: np.ndarray) -> np.ndarray:
    """Step 2 of the module docstring, from the sums: with c_j = -i_j the gain's column,
    u.u = x^T A_xx x - 2 x^T B_x + C, i.u = B_g - A_gx x, i.i = A_gg."""
    n, m = ne.n, ne.b - ne.n
    out = np.empty(n)
    for j in range(n):  # n scalars
        a, rhs = ne.A[j], ne.B[j]
        uu = x @ a[:m, :m] @ x - 2.0 * x @ rhs[:m] + ne.C[j]
        iu = rhs[m + j] - a[m + j, :m] @ x
        if not iu > 0:
            raise IllConditionedError(f"drive gains (pc): joint {j + 1}'s current does not follow the model's torque "
                                      "(its gain would not be positive)")
        out[j] = uu / iu
    return out


def _program(helper, base, ne, weights, gains, keep, known, known_values, unknown):
    """Step 1 of the module docstring: (x = [beta; phi_u] at ``keep``, solver status)."""
    import cvxpy as cp

    m = ne.b - ne.n
    omega = weights / gains**2
    h = np.einsum("j,jab->ab", omega, ne.A[:, :m, :m])
    r = np.einsum("j,ja->a", omega, ne.B[:, :m]) - np.einsum("j,jab,b->a", omega, ne.A[:, :m, m:], gains)
    g, c = least_squares_form(h, r)
    x_ls = pseudo_solve(h, r)
    residual = g @ x_ls - c
    norm = max(float(residual @ residual), 1e-12 * float(c @ c), 1e-300)
    theta = cp.Variable(base.K.shape[1])
    phi_u = cp.Variable(unknown.size)
    x = (cp.hstack([base.K @ theta, phi_u]) if unknown.size else base.K @ theta)[keep]
    scale = helper.parameter_scale()
    objective = cp.sum_squares(g @ x - c) / norm
    objective += REGULARIZATION * cp.sum_squares(cp.multiply(1.0 / scale, theta - helper.theta_prior))
    constraints = helper.constraints(theta)
    basis = pseudo_inertia_basis()
    load = sum(float(v) * basis[k] for k, v in zip(known, known_values))
    if unknown.size:
        load = load + sum(phi_u[i] * basis[k] for i, k in enumerate(unknown))
        mass = float(known_values[0])
        constraints.append(load / mass >> 0)
    problem = cp.Problem(cp.Minimize(objective), constraints)
    status = helper.solve_program(problem)
    if theta.value is None:
        raise IllConditionedError(f"drive gains (pc): the semidefinite program failed (solver status '{status}')")
    values = [base.K @ np.asarray(theta.value, dtype=float)]
    if unknown.size:
        values.append(np.asarray(phi_u.value, dtype=float))
    return np.concatenate(values)[keep], status
