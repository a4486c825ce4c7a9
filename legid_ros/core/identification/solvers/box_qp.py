"""Exact step of a convex quadratic model on one equality and a box (primal active set).

The step problem of the bound-constrained Newton of Wu & Gao 2021 (:mod:`.newton`)::

    min_d  g . d + d^T B d / 2    s.t.  c . d = 0,   lo <= d <= hi   (lo <= 0 <= hi)

``d = 0`` is feasible, so the primal active-set method starts there: each iteration solves
the equality-constrained problem on the free variables (one KKT system), walks towards its
solution until a bound blocks (that bound joins the working set) and, at a point where the
free problem is solved, releases the bound whose multiplier has the wrong sign. Variables with
``lo == hi`` (pinned) never leave the working set. For ``B`` positive definite on ``c . d = 0``
the method ends at the exact minimiser in finitely many steps; ``B`` is augmented by
``rho c c^T`` (same model on the feasible set) so that every KKT system is regular.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional

import numpy as np


@dataclass
class BoxStep:
    """Outcome of :func:`box_qp_step`.

    Attributes:
        d: The step (feasible: ``c . d = 0`` up to round-off, inside ``[lo, hi]``).
        decrease: Model decrease ``-(g . d + d^T B d / 2)`` (>= 0).
        active: Working set at the end: index -> -1 (lower bound) or +1 (upper bound).
        iterations: Active-set iterations.
    """

    d: np.ndarray
    decrease: float
    active: Dict[int, int]
    iterations: int


def augment_equality(b: np.ndarray, c: np.ndarray) -> Optional[np.ndarray]:
    """``B + rho c c^T`` positive definite, or None if ``B`` is not PD on ``c . d = 0``.

    The added term vanishes on the feasible set, so the model there is unchanged.
    """
    top = max(float(np.max(np.abs(np.diag(b)))), 1e-300)
    cc = float(c @ c)
    rho = 0.0 if cc == 0.0 else top / cc
    for _ in range(12):
        a = b + rho * np.outer(c, c)
        try:
            np.linalg.cholesky(a)
            return a
        except np.linalg.LinAlgError:
            if cc == 0.0:
                return None
            rho *= 10.0
    return None


def _equality_multiplier(r0: np.ndarray, c: np.ndarray, active: Dict[int, int],
                         pinned: np.ndarray) -> float:
    """Multiplier of ``c . d = 0`` when no free variable carries it (best sign pattern)."""
    lo, hi = -np.inf, np.inf
    for i, side in active.items():
        if pinned[i] or c[i] == 0.0:
            continue
        # lower bound: r0_i + nu c_i >= 0; upper bound: r0_i + nu c_i <= 0
        bound = -r0[i] / c[i]
        if (side < 0) == (c[i] > 0):
            lo = max(lo, bound)
        else:
            hi = min(hi, bound)
    if lo <= hi:
        return float(np.clip(0.0, lo, hi))
    return 0.5 * (lo + hi)


def _interior_step(g: np.ndarray, b: np.ndarray, c: np.ndarray, lo: np.ndarray,
                   hi: np.ndarray) -> Optional[BoxStep]:
    """The minimiser on the plane alone, when it lies strictly inside the box (then it is the
    minimiser on the plane and the box: no bound is active), else None."""
    n = g.size
    if float(c @ c) > 0.0:
        kkt = np.zeros((n + 1, n + 1))
        kkt[:n, :n] = b
        kkt[:n, n] = c
        kkt[n, :n] = c
        rhs = np.zeros(n + 1)
        rhs[:n] = -g
    else:
        kkt, rhs = b, -g
    try:
        d = np.linalg.solve(kkt, rhs)[:n]
    except np.linalg.LinAlgError:
        return None
    if not ((d > lo) & (d < hi)).all():  # NaN and inf fail this too
        return None
    dec = -float(g @ d + 0.5 * d @ b @ d)
    return BoxStep(d=d, decrease=max(dec, 0.0), active={}, iterations=1)


def box_qp_step(g: np.ndarray, b: np.ndarray, c: Optional[np.ndarray], lo: np.ndarray,
                hi: np.ndarray, max_iter: Optional[int] = None) -> Optional[BoxStep]:
    """Minimise the quadratic model over the box and the plane (see the module docstring).

    Args:
        g: Gradient (n,).
        b: Model Hessian (n, n), positive definite (use :func:`augment_equality`).
        c: Equality row (n,) or None.
        lo, hi: Bounds of the step (``lo <= 0 <= hi``; ``lo == hi`` pins a variable).
        max_iter: Iteration limit (default ``10 n + 50``).

    Returns:
        :class:`BoxStep`, or None if the iteration did not settle.
    """
    n = g.size
    c = np.zeros(n) if c is None else np.asarray(c, float)
    pinned = lo >= hi
    d = np.zeros(n)
    active: Dict[int, int] = {}
    for i in range(n):
        if pinned[i] or lo[i] >= 0.0:
            active[i] = -1
        elif hi[i] <= 0.0:
            active[i] = 1
    if not active:
        interior = _interior_step(g, b, c, lo, hi)
        if interior is not None:
            return interior
    limit = 10 * n + 50 if max_iter is None else max_iter
    face_solved, nu = False, None
    for it in range(1, limit + 1):
        free = np.array([i for i in range(n) if i not in active], dtype=int)
        r0 = g + b @ d
        p = np.zeros(n)
        cf = c[free]
        if face_solved:
            # a full step reached the face's minimiser: re-solving would only return the
            # round-off of an ill-conditioned B as a new step
            face_solved = False
        elif free.size:
            nu = None
            m = free.size
            if np.any(cf != 0.0):
                kkt = np.zeros((m + 1, m + 1))
                kkt[:m, :m] = b[np.ix_(free, free)]
                kkt[:m, m] = cf
                kkt[m, :m] = cf
                rhs = np.concatenate([-r0[free], [0.0]])
            else:
                kkt, rhs = b[np.ix_(free, free)], -r0[free]
            try:
                sol = np.linalg.solve(kkt, rhs)
            except np.linalg.LinAlgError:
                return None
            if not np.all(np.isfinite(sol)):
                return None
            p[free] = sol[:m]
            if sol.size > m:
                nu = float(sol[m])
        scale = 1.0 + float(np.max(np.abs(d)))
        if float(np.max(np.abs(p), initial=0.0)) > 1e-13 * scale:
            step, block = 1.0, None
            for i in free:
                if p[i] < 0.0 and d[i] + p[i] < lo[i]:
                    t = (lo[i] - d[i]) / p[i]
                    if t < step:
                        step, block = t, (int(i), -1)
                elif p[i] > 0.0 and d[i] + p[i] > hi[i]:
                    t = (hi[i] - d[i]) / p[i]
                    if t < step:
                        step, block = t, (int(i), 1)
            d = d + max(step, 0.0) * p
            if block is not None:
                i, side = block
                d[i] = lo[i] if side < 0 else hi[i]
                active[i] = side
            else:
                face_solved = True
            continue
        if nu is None or not np.any(cf != 0.0):
            nu = _equality_multiplier(r0, c, active, pinned)
        r = r0 + nu * c
        tol = 1e-12 * (float(np.max(np.abs(g))) + float(np.max(np.abs(b @ d)))) + 1e-300
        wrong = {i: -side * r[i] for i, side in active.items()
                 if not pinned[i] and -side * r[i] < -tol}
        if not wrong:
            dec = -float(g @ d + 0.5 * d @ b @ d)
            return BoxStep(d=d, decrease=max(dec, 0.0), active=dict(active), iterations=it)
        del active[min(wrong, key=wrong.get)]
    return None
