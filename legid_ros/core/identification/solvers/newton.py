"""The solver of Wu & Gao 2021: bound-constrained Newton with steepest-descent fallback.

Minimise ``f(x)`` subject to the total-mass equality ``c . x = M`` and the box
``lb <= x <= ub`` (pinned variables ``lb == ub`` included: parameters measured otherwise).
All steps are taken in scaled coordinates ``y = x / s`` (``s`` the typical magnitudes), which
leaves the Newton step unchanged and keeps the model's condition number free of unit mixes.

Each iteration builds a quadratic model of ``f`` at the (feasible) iterate and takes:

- the **Newton step** (Wu & Gao's eq. 11) when the Hessian is positive definite on the mass
  plane: the exact minimiser of the model on the plane *and the box* (primal active set,
  :func:`legid_ros.core.identification.solvers.box_qp.box_qp_step`), so bounds that are
  active, and pinned variables, are respected by the step itself rather than clipped after;
- otherwise the paper's **steepest-descent step** ``-alpha G`` projected on the plane and the
  box (or, with ``fallback='gauss_newton'``, the model with the positive semi-definite
  Gauss-Newton part of the Hessian).

The feasible set is convex, so every point of the step is feasible; a backtracking line search
(Armijo, not in the paper) halves the step until the cost decreases enough.

**Stopping (KKT test).** The iterate is a minimiser when the quadratic model, with a
curvature made positive definite on the plane if needed, cannot be decreased on the feasible
set by more than ``ftol |f|`` (``ftol 1e-10 |f_0|`` once the cost has fallen below ``1e-10``
of its start value ``f_0``, for data fitted exactly): this predicted decrease is zero
exactly when the projected gradient is zero, i.e. the KKT conditions (stationarity on the
free variables, multipliers of the right sign on the active bounds) hold. ``converged`` is
set only by this test; a line search that finds no decrease ends with status ``'stalled'``,
the iteration limit with ``'max_iterations'``, both with the last iterate. (The paper's stop
on ``||dx|| <= eps`` is no proof of a minimum: a short step also comes from a stalled line
search.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np
import scipy.linalg as sla

from legid_ros.core.errors import SolverError
from legid_ros.core.identification.solvers.box_qp import augment_equality, box_qp_step
from legid_ros.core.identification.solvers.qp import project_mass_box

CONVERGED, STALLED, MAX_ITERATIONS = 'converged', 'stalled', 'max_iterations'


@dataclass
class NewtonResult:
    """Outcome of :func:`newton_solve`.

    Attributes:
        x: Final iterate (the last one, also when not converged).
        iterations: Iterations done.
        converged: Whether the KKT test held at ``x``.
        newton_steps: Iterations that used the Newton step.
        descent_steps: Iterations that fell back to steepest descent.
        gauss_newton_steps: Iterations that fell back to the Gauss-Newton step.
        cost_history: Cost after each iteration.
        status: 'converged', 'stalled' (no decrease along the step) or 'max_iterations'.
        predicted_decrease: Decrease of the local model still available at ``x`` (cost units).
        kkt_residual: Infinity norm of the projected gradient at ``x`` (scaled coordinates,
            cost units).
    """

    x: np.ndarray
    iterations: int
    converged: bool
    newton_steps: int = 0
    descent_steps: int = 0
    gauss_newton_steps: int = 0
    cost_history: List[float] = field(default_factory=list)
    status: str = CONVERGED
    predicted_decrease: float = 0.0
    kkt_residual: float = 0.0


_PLANE_BASES: Dict[bytes, np.ndarray] = {}  # mass row (scaled) -> null-space basis
_PLANE_BASES_MAX = 64


def _plane_basis(cy: np.ndarray) -> np.ndarray:
    """Orthonormal basis of ``{d: cy . d = 0}`` (n, n - 1), computed once per row: an online
    estimator solves on the same mass row at every update."""
    key = cy.tobytes()
    basis = _PLANE_BASES.get(key)
    if basis is None:
        if len(_PLANE_BASES) >= _PLANE_BASES_MAX:
            _PLANE_BASES.clear()
        basis = sla.null_space(cy[None, :])
        basis.setflags(write=False)
        _PLANE_BASES[key] = basis
    return basis


def _is_feasible(x: np.ndarray, c: np.ndarray, total: float, lb: np.ndarray,
                 ub: np.ndarray) -> bool:
    """Whether ``x`` is in the box and on the mass plane (up to round-off): a warm start
    needs no projection."""
    return bool(np.all(np.isfinite(x)) and np.all(x >= lb) and np.all(x <= ub)
                and abs(float(c @ x) - total) <= 1e-12 * max(abs(total), 1.0))


def _unpin(b: np.ndarray, pinned: np.ndarray) -> np.ndarray:
    """The model Hessian with pinned variables decoupled (unit curvature): they never move,
    so their curvature must not decide between the Newton step and the fallback."""
    if not pinned.any():
        return b
    b = b.copy()
    top = max(float(np.max(np.abs(np.diag(b)))), 1e-300)
    b[pinned, :] = 0.0
    b[:, pinned] = 0.0
    b[pinned, pinned] = top
    return b


def _reduced_pd(b: np.ndarray, zsc: np.ndarray, min_eig_ratio: float) -> bool:
    zs = zsc.T @ b @ zsc
    eig = np.linalg.eigvalsh(0.5 * (zs + zs.T))
    return bool(eig.size == 0 or eig[0] > min_eig_ratio * max(abs(eig[-1]), 1e-300))


def _shifted(b: np.ndarray, cy: np.ndarray, min_eig_ratio: float) -> np.ndarray:
    """``b + tau I`` with ``tau`` making it positive definite (for the KKT test only)."""
    eig = np.linalg.eigvalsh(b)
    top = max(abs(eig[-1]), 1e-300)
    tau = max(0.0, -eig[0]) + 1e3 * min_eig_ratio * top
    out = augment_equality(b + tau * np.eye(b.shape[0]), cy)
    return out if out is not None else b + (tau + top) * np.eye(b.shape[0])


def _model(b: np.ndarray, gy: np.ndarray, cy: np.ndarray, lo: np.ndarray,
           hi: np.ndarray) -> Optional[Tuple[np.ndarray, float, np.ndarray]]:
    """(step, model decrease, the augmented curvature it used) or None."""
    aug = augment_equality(b, cy)
    if aug is None:
        return None
    step = box_qp_step(gy, aug, cy, lo, hi)
    return None if step is None else (step.d, step.decrease, aug)


def _bounds(x: np.ndarray, s: np.ndarray, lb: np.ndarray, ub: np.ndarray):
    """Scaled point and the step's box ``lo <= 0 <= hi`` (scaled coordinates)."""
    y = x / s
    return y, np.minimum(lb / s - y, 0.0), np.maximum(ub / s - y, 0.0)


def newton_solve(fun: Callable, x0: np.ndarray, c: np.ndarray, total: float,
                 lb: np.ndarray, ub: np.ndarray, eps: float = 1e-4, alpha: float = 1.0,
                 max_iter: int = 300, min_eig_ratio: float = 1e-10,
                 raise_on_failure: bool = False, scales=None,
                 fallback: str = 'descent', ftol: float = 1e-12) -> NewtonResult:
    """Minimise ``fun`` subject to ``c . x = total`` and ``lb <= x <= ub``.

    Args:
        fun: ``fun(x, derivatives=True)`` returning an object with ``e``, ``grad``, ``hess``
            (and optionally ``gauss_newton``); ``derivatives=False`` needs only ``e``;
            ``derivatives='gradient'`` may leave ``hess`` None (the test after a Newton step
            then uses that step's curvature, see the loop).
        x0: Start point (projected on the plane and box first, as the paper requires, when
            it is not on them already: an online warm start is used as given).
        c: Mass row (non-negative entries).
        total: Mass the row must sum to [kg].
        lb, ub: Box bounds (``lb == ub`` pins a variable).
        eps: The paper's step tolerance [SI]: the iteration also ends after a step shorter
            than ``eps`` once the KKT test holds with ``1e3 ftol`` (a short step alone
            proves nothing).
        alpha: Steepest-descent step length (scaled coordinates).
        max_iter: Iteration limit.
        min_eig_ratio: The model Hessian counts as singular below this eigenvalue ratio.
        fallback: 'descent' (the paper: steepest descent when the Hessian is not positive
            definite on the mass plane) or 'gauss_newton' (the model with the Gauss-Newton
            part of the Hessian, when ``fun`` provides ``gauss_newton``; far faster on
            ill-conditioned problems; steepest descent if that is singular too).
        scales: Typical magnitudes of ``x`` (default ones, the paper's plain SI units).
        raise_on_failure: Raise :class:`SolverError` (carrying the last iterate) if the KKT
            test does not hold at the end.
        ftol: KKT tolerance: the local model's available decrease relative to ``|f|``
            (or to ``1e-10`` of the start cost, whichever is larger).

    Returns:
        :class:`NewtonResult` (``converged`` only when the KKT test holds).
    """
    s = np.ones(len(x0)) if scales is None else np.asarray(scales, float)
    lb, ub = np.asarray(lb, float), np.asarray(ub, float)
    c = np.asarray(c, float)
    x = np.asarray(x0, float)
    if not _is_feasible(x, c, total, lb, ub):
        x = project_mass_box(x, c, total, lb, ub)
    cy = c * s
    zsc = _plane_basis(cy)
    pinned = lb >= ub
    val = fun(x)
    hist = [val.e]
    f_start = abs(val.e)
    counts = {'newton': 0, 'descent': 0, 'gauss_newton': 0}
    status, pred, moved, curv = MAX_ITERATIONS, np.inf, np.inf, None
    it = 0
    for it in range(max_iter + 1):
        tol = ftol * max(abs(val.e), 1e-10 * f_start, 1e-300)
        if getattr(val, 'hess', None) is None:
            # gradient only, after a Newton step: test with that step's curvature (the Hessian
            # one step back; the decrease it predicts differs from the new Hessian's by a
            # relative O(|step|)); the new Hessian only when the test fails
            y, lo, hi = _bounds(x, s, lb, ub)
            test = box_qp_step(s * val.grad, curv, cy, lo, hi)
            pred = test.decrease if test is not None else np.inf
            if pred <= tol or (moved <= eps and pred <= 1e3 * tol):
                status = CONVERGED
                break
            val = fun(x)
        y, lo, hi = _bounds(x, s, lb, ub)
        gy = s * val.grad
        hy = s[:, None] * val.hess * s[None, :]
        hy = _unpin(0.5 * (hy + hy.T), pinned)
        newton_ok = _reduced_pd(hy, zsc, min_eig_ratio)
        model = _model(hy, gy, cy, lo, hi) if newton_ok else None
        test = model if model is not None else _model(_shifted(hy, cy, min_eig_ratio), gy, cy,
                                                      lo, hi)
        pred = test[1] if test is not None else np.inf
        if pred <= tol or (moved <= eps and pred <= 1e3 * tol):
            status = CONVERGED
            break
        if it == max_iter:
            break
        if model is not None:
            dy, kind, curv = model[0], 'newton', model[2]
        else:
            dy, kind = None, 'descent'
            gn = getattr(val, 'gauss_newton', None)
            if fallback == 'gauss_newton' and gn is not None:
                gny = _unpin(s[:, None] * gn * s[None, :], pinned)
                top = max(float(np.max(np.abs(np.diag(gny)))), 1e-300)
                gmod = _model(0.5 * (gny + gny.T) + 1e-13 * top * np.eye(s.size), gy, cy,
                              lo, hi)
                if gmod is not None:
                    dy, kind = gmod[0], 'gauss_newton'
            if dy is None:
                dy = project_mass_box(y - alpha * gy, cy, float(cy @ y), lb / s, ub / s) - y
        counts[kind] += 1
        slope = float(gy @ dy)
        step, accepted = 1.0, False
        for _ in range(40):
            x_new = _feasible(s * (y + step * dy), c, total, lb, ub)
            # a full Newton step is nearly always taken: evaluate it with the gradient the
            # next test needs (a fallback step's first trial is often halved)
            new = fun(x_new, derivatives='gradient' if kind == 'newton' and step == 1.0
                      else False)
            if new.e <= val.e + 1e-4 * step * min(slope, 0.0) and new.e <= val.e:
                accepted = True
                break
            step *= 0.5
        if not accepted:
            status = STALLED
            break
        moved = float(np.linalg.norm(x_new - x))
        x = x_new
        val = new if getattr(new, 'grad', None) is not None else fun(x)
        hist.append(val.e)
    # infinity norm of the projected gradient at the last iterate (the KKT residual reported)
    y, gy = x / s, s * val.grad
    kkt = float(np.max(np.abs(project_mass_box(y - gy, cy, float(cy @ y), lb / s, ub / s) - y),
                       initial=0.0))
    converged = status == CONVERGED
    if raise_on_failure and not converged:
        raise SolverError('Newton iteration did not converge', status, it, x)
    return NewtonResult(x=x, iterations=it, converged=converged,
                        newton_steps=counts['newton'], descent_steps=counts['descent'],
                        gauss_newton_steps=counts['gauss_newton'], cost_history=hist,
                        status=status, predicted_decrease=float(pred), kkt_residual=kkt)


def _feasible(x: np.ndarray, c: np.ndarray, total: float, lb: np.ndarray,
              ub: np.ndarray) -> np.ndarray:
    """Remove the round-off of a step: clip to the box, re-project if the mass drifted."""
    x = np.clip(x, lb, ub)
    if abs(float(c @ x) - total) > 1e-12 * max(abs(total), 1.0):
        x = project_mass_box(x, c, total, lb, ub)
    return x
