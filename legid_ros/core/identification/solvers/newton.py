"""The solver of Wu & Gao 2021: projected Newton with steepest-descent fallback.

Each iteration (eq. 11): the Newton step ``dx = -H^-1 G`` restricted to the mass plane
``c . x = M`` (null-space form ``-Z (Z^T H Z)^-1 Z^T G``, the exact projected Newton step);
when the projected Hessian is singular or not positive definite, the steepest-descent step
``dx = -alpha (E - c c^T / c^T c) G``. The new point is projected on the mass plane and the box
bounds (Euclidean projection; the paper does not say how the bounds were kept). A backtracking
line search (not in the paper) halves the step until the cost decreases, which keeps the
iteration stable for any ``alpha``. Stop when ``||dx|| <= eps`` (eps = 1e-4 in SI, as in the
paper).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, List

import numpy as np
import scipy.linalg as sla

from legid_ros.core.errors import SolverError
from legid_ros.core.identification.solvers.qp import project_mass_box


@dataclass
class NewtonResult:
    """Outcome of :func:`newton_solve`.

    Attributes:
        x: Final iterate.
        iterations: Iterations done.
        converged: Whether ``||dx|| <= eps`` was reached.
        newton_steps: Iterations that used the Newton step.
        descent_steps: Iterations that fell back to steepest descent.
        gauss_newton_steps: Iterations that fell back to the Gauss-Newton step.
        cost_history: Cost after each iteration.
    """

    x: np.ndarray
    iterations: int
    converged: bool
    newton_steps: int = 0
    descent_steps: int = 0
    gauss_newton_steps: int = 0
    cost_history: List[float] = field(default_factory=list)


def _null_space(c: np.ndarray) -> np.ndarray:
    return sla.null_space(c[None, :])


def newton_solve(fun: Callable, x0: np.ndarray, c: np.ndarray, total: float,
                 lb: np.ndarray, ub: np.ndarray, eps: float = 1e-4, alpha: float = 1.0,
                 max_iter: int = 300, min_eig_ratio: float = 1e-10,
                 raise_on_failure: bool = False, scales=None,
                 fallback: str = 'descent') -> NewtonResult:
    """Minimise ``fun`` subject to ``c . x = total`` and ``lb <= x <= ub``.

    Args:
        fun: ``fun(x, derivatives=True)`` returning an object with ``e``, ``grad``, ``hess``.
        x0: Start point (projected first, as the paper requires).
        c: Mass row (non-negative entries).
        total: Mass the row must sum to [kg].
        lb, ub: Box bounds.
        eps: Stop when the step norm is at most eps.
        alpha: Steepest-descent step length.
        max_iter: Iteration limit.
        min_eig_ratio: Projected Hessian counts as singular below this eigenvalue ratio.
        fallback: 'descent' (the paper: steepest descent when the projected Hessian is not
            positive definite) or 'gauss_newton' (the Gauss-Newton step with the positive
            semi-definite part of the Hessian, when ``fun`` provides ``gauss_newton``; converges
            far faster on ill-conditioned problems; steepest descent if that is singular too).
        scales: Typical magnitudes of ``x``; the steepest-descent step is taken in
            ``x / scales`` (the Newton step does not depend on scaling). Default: ones, the
            paper's plain gradient step in SI units.
        raise_on_failure: Raise :class:`SolverError` if not converged.

    Returns:
        :class:`NewtonResult`.
    """
    x = project_mass_box(np.asarray(x0, float), c, total, lb, ub)
    s = np.ones(x.size) if scales is None else np.asarray(scales, float)
    cs = c * s
    zsc = _null_space(cs)
    proj = s[:, None] * (np.eye(x.size) - np.outer(cs, cs) / (cs @ cs)) * s[None, :]
    val = fun(x)
    hist = [val.e]
    n_newton = n_desc = n_gn = 0
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        zs = zsc.T @ (s[:, None] * val.hess * s[None, :]) @ zsc  # definiteness test, scaled
        eig = np.linalg.eigvalsh(0.5 * (zs + zs.T))
        gn = getattr(val, 'gauss_newton', None)
        # steps solved in scaled coordinates x / s: the same step as in SI units, but the
        # reduced Hessian's condition number no longer mixes metres and kilograms
        if eig[0] > min_eig_ratio * max(abs(eig[-1]), 1e-300):
            dx = -s * (zsc @ np.linalg.solve(zs, zsc.T @ (s * val.grad)))
            n_newton += 1
        elif fallback == 'gauss_newton' and gn is not None:
            # Gauss-Newton step on the determined subspace: directions the data does not see
            # at all (e.g. the reduced set's exact ZMP invariance) are left where they are
            gs = zsc.T @ (s[:, None] * gn * s[None, :]) @ zsc
            lam, vec = np.linalg.eigh(0.5 * (gs + gs.T))
            keep = lam > 1e-13 * max(lam[-1], 1e-300)
            dz = vec[:, keep] @ ((vec[:, keep].T @ (zsc.T @ (s * val.grad))) / lam[keep])
            dx = -s * (zsc @ dz)
            n_gn += 1
        else:
            dx = -alpha * proj @ val.grad
            n_desc += 1
        step = 1.0
        accepted = False
        for _ in range(40):
            x_new = project_mass_box(x + step * dx, c, total, lb, ub)
            new = fun(x_new, derivatives=False)
            if new.e <= val.e:
                accepted = True
                break
            step *= 0.5
        if not accepted:
            # no decrease along the step even after 40 halvings: a numerical minimum
            converged = True
            break
        moved = float(np.linalg.norm(x_new - x))
        x = x_new
        val = fun(x)
        hist.append(val.e)
        if moved <= eps:
            converged = True
            break
    if raise_on_failure and not converged:
        raise SolverError('Newton iteration did not converge', 'max_iter', it, x)
    return NewtonResult(x=x, iterations=it, converged=converged, newton_steps=n_newton,
                        descent_steps=n_desc, gauss_newton_steps=n_gn, cost_history=hist)

