"""Test problems of the bound-constrained Newton and an independent reference solver.

The problems of ``legid bench solvers`` and of the solver tests: convex least-squares costs
``f(x) = |A x - b|^2 / m`` subject to the total-mass equality ``c . x = M`` (``c >= 0`` with
zeros, like the COM offsets of the ZMP reduced set of Wu & Gao 2021) and a box, with bounds
active at the optimum and variables pinned (``lb == ub``, as ``--known`` does). The reference
is the better of scipy's SLSQP and OSQP (polished), neither of which shares code with the
Newton solver.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Callable, List, Optional

import numpy as np
import scipy.optimize as so


@dataclass
class QuadValue:
    """Cost, gradient, Hessian (the interface :func:`newton_solve` expects)."""

    e: float
    grad: Optional[np.ndarray]
    hess: Optional[np.ndarray]


class LeastSquaresCost:
    """``f(x) = |A x - b|^2 / m`` with its exact derivatives."""

    def __init__(self, a: np.ndarray, b: np.ndarray):
        self.a, self.b = a, b
        self.m = float(len(b))
        self.h = 2.0 * a.T @ a / self.m

    def __call__(self, x: np.ndarray, derivatives: bool = True) -> QuadValue:
        r = self.a @ x - self.b
        e = float(r @ r) / self.m
        if not derivatives:
            return QuadValue(e, None, None)
        return QuadValue(e, 2.0 * self.a.T @ r / self.m, self.h)


@dataclass
class BoxProblem:
    """One random problem: cost, mass row, total, box, start point, scales."""

    fun: Callable
    c: np.ndarray
    total: float
    lb: np.ndarray
    ub: np.ndarray
    x0: np.ndarray
    scales: np.ndarray
    n_pinned: int


def random_problem(rng: np.random.Generator, n_pinned: int = 0) -> BoxProblem:
    """A random convex problem whose optimum has active bounds (and ``n_pinned`` pinned)."""
    n = int(rng.integers(3, 13))
    scales = 10.0 ** rng.uniform(-2, 1, n)  # mixed units, like [m] and [kg]
    m = int(rng.integers(n, 3 * n))
    a = rng.normal(size=(m, n)) / scales[None, :]
    if rng.random() < 0.3:  # rank-deficient data: a direction the data does not see
        a[:, -1] = a[:, 0] * scales[0] / scales[-1]
    centre = scales * rng.uniform(0.5, 2.0, n)
    width = scales * rng.uniform(0.1, 1.0, n)
    lb, ub = centre - width, centre + width
    target = centre + width * rng.uniform(-3.0, 3.0, n)  # outside the box: bounds active
    b = a @ target + 0.1 * rng.normal(size=m)
    c = np.where(rng.random(n) < 0.6, rng.uniform(0.5, 2.0, n), 0.0)
    c[0] = max(c[0], 0.5)
    pinned = rng.choice(n, size=min(n_pinned, n - 1), replace=False)
    lb[pinned] = ub[pinned] = rng.uniform(lb[pinned], ub[pinned])
    feasible = rng.uniform(lb, ub)
    total = float(c @ feasible)
    x0 = rng.uniform(lb, ub)
    return BoxProblem(LeastSquaresCost(a, b), c, total, lb, ub, x0, scales, len(pinned))


def slsqp(fun: Callable, x0: np.ndarray, c: np.ndarray, total: float, lb: np.ndarray,
          ub: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """scipy SLSQP in scaled coordinates (tight tolerance); returns ``x``."""
    s = np.asarray(scales, float)
    f0 = max(abs(fun(x0, derivatives=False).e), 1e-300)

    def cost(y):
        return fun(s * y, derivatives=False).e / f0

    def jac(y):
        return s * fun(s * y).grad / f0
    cons = [{'type': 'eq', 'fun': lambda y: np.array([(c * s) @ y - total]),
             'jac': lambda y: (c * s)[None, :]}]
    res = so.minimize(cost, x0 / s, jac=jac, method='SLSQP', bounds=list(zip(lb / s, ub / s)),
                      constraints=cons, options={'ftol': 1e-15, 'maxiter': 2000})
    return np.clip(s * res.x, lb, ub)


def osqp_quadratic(prob: BoxProblem) -> Optional[np.ndarray]:
    """OSQP on the exact quadratic (polished, tight tolerances); None if not solved."""
    import osqp
    import scipy.sparse as sp

    s = prob.scales
    fun = prob.fun
    p = s[:, None] * fun.h * s[None, :]
    q = s * (-2.0 * fun.a.T @ fun.b / fun.m)
    n = s.size
    amat = sp.vstack([sp.csc_matrix((prob.c * s)[None, :]), sp.identity(n)], format='csc')
    lo = np.r_[prob.total, prob.lb / s]
    hi = np.r_[prob.total, prob.ub / s]
    solver = osqp.OSQP()
    solver.setup(sp.csc_matrix(np.triu(p)), q, amat, lo, hi, eps_abs=1e-12, eps_rel=1e-12,
                 max_iter=200000, polishing=True, verbose=False)
    res = solver.solve(raise_error=False)
    if 'solved' not in str(res.info.status).lower() or res.x is None:
        return None
    return np.clip(s * res.x, prob.lb, prob.ub)


def reference_cost(prob: BoxProblem) -> float:
    """Best feasible cost of SLSQP and OSQP (mass equality re-imposed by projection)."""
    from legid_ros.core.identification.solvers.qp import project_mass_box

    costs = []
    cands: List[Optional[np.ndarray]] = [
        slsqp(prob.fun, prob.x0, prob.c, prob.total, prob.lb, prob.ub, prob.scales),
        osqp_quadratic(prob)]
    for x in cands:
        if x is None or not np.all(np.isfinite(x)):
            continue
        x = project_mass_box(x, prob.c, prob.total, prob.lb, prob.ub)
        costs.append(prob.fun(x, derivatives=False).e)
    return float(min(costs))


def relative_gap(cost: float, ref: float) -> float:
    """``(cost - ref) / |ref|`` (negative: better than the reference)."""
    return float((cost - ref) / max(abs(ref), 1e-300))


@contextlib.contextmanager
def captured_newton_problems(store: list):
    """Record every ``newton_solve`` call of the ZMP Newton module (problem and result)."""
    from legid_ros.core.identification.solvers import zmp_newton

    inner = zmp_newton.newton_solve

    def spy(fun, x0, c, total, lb, ub, **kw):
        res = inner(fun, x0, c, total, lb, ub, **kw)
        store.append({'fun': fun, 'x0': np.array(x0), 'c': np.array(c), 'total': total,
                      'lb': np.array(lb), 'ub': np.array(ub),
                      'scales': np.array(kw.get('scales', np.ones(len(x0)))), 'result': res})
        return res
    zmp_newton.newton_solve = spy
    try:
        yield store
    finally:
        zmp_newton.newton_solve = inner
