"""Parameter-space QP solved by OSQP, and Euclidean projection on the mass plane and box.

The QP every linear method ends in (the linear ZMP rows and joint-torque rows of Wu & Gao
2021, the floating-base rows of the Tencent patent application 2022, online)::

    min_x  (x^T H x - 2 h^T x) / n + reg * sum_k ((x_k - x_cad_k) / s_k)^2
    s.t.   c . x = M_free,   lb <= x <= ub

``H = sum A^T A``, ``h = sum A^T b`` (sufficient statistics), ``n`` the (effective) number of
samples, so the data term is the mean squared residual and ``reg`` [residual units^2] does not
depend on the amount of data. OSQP works in scaled variables ``z = (x - x_cad) / s``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import osqp
import scipy.sparse as sp

from legid_ros.core.errors import InfeasibleProblemError, SolverError, SolverNotConvergedError

INF = 1e20
# OSQP statuses short of the tolerance: never a solution by themselves
NOT_CONVERGED = ('solved inaccurate', 'solved_inaccurate', 'maximum iterations reached')


def check_bounds(lb: np.ndarray, ub: np.ndarray, c: Optional[np.ndarray], total: Optional[float],
                 names=None) -> None:
    """Raise :class:`InfeasibleProblemError` if the box (and the mass plane) is empty."""
    bad = np.flatnonzero(lb > ub)
    if bad.size:
        which = ', '.join((names[i] if names else str(i)) for i in bad[:5])
        raise InfeasibleProblemError('lower bound above upper bound', which)
    if c is not None and total is not None:
        nz = c != 0
        c, lb, ub = c[nz], lb[nz], ub[nz]
        lo = float(np.sum(np.where(c > 0, c * lb, c * ub)))
        hi = float(np.sum(np.where(c > 0, c * ub, c * lb)))
        if not lo - 1e-9 <= total <= hi + 1e-9:
            raise InfeasibleProblemError(
                'total-mass equality outside the bounds',
                f'mass {total:.4g} kg must lie in [{lo:.4g}, {hi:.4g}] kg')


def project_mass_box(y: np.ndarray, c: np.ndarray, total: float, lb: np.ndarray,
                     ub: np.ndarray, iters: int = 200) -> np.ndarray:
    """Euclidean projection of ``y`` on ``{c.x = total, lb <= x <= ub}`` (``c >= 0``).

    The solution is ``clip(y - lam c, lb, ub)`` with ``lam`` found by bisection.
    """
    check_bounds(lb, ub, c, total)

    def g(lam):
        return float(c @ np.clip(y - lam * c, lb, ub)) - total
    lo, hi = -1.0, 1.0
    while g(lo) < 0:
        lo *= 2
    while g(hi) > 0:
        hi *= 2
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if g(mid) > 0:
            lo = mid
        else:
            hi = mid
    return np.clip(y - 0.5 * (lo + hi) * c, lb, ub)


@dataclass
class QPSolution:
    """Result of :class:`ParameterQP`.

    Attributes:
        x: Solution.
        status: OSQP status string.
        iterations: OSQP iterations.
        solve_time_s: OSQP setup + solve time [s].
    """

    x: np.ndarray
    status: str
    iterations: int
    solve_time_s: float


class ParameterQP:
    """The regularised, constrained least-squares QP in parameter space (OSQP, warm-started).

    Build once per problem shape; call :meth:`solve` with new statistics. The Hessian's
    sparsity pattern is the full upper triangle, so later solves only update values.

    Args:
        x_cad: Prior (CAD) parameters.
        scales: Parameter scales ``s`` (regularisation and OSQP scaling).
        lb, ub: Bounds (use +-inf for none).
        c: Mass row, or None for no equality.
        total: Right-hand side of the mass equality [kg].
        reg: Regularisation weight.
        eps: OSQP absolute/relative tolerance.
        names: Parameter names (for error messages).
        polish: OSQP solution polishing (one more factorisation per solve).
    """

    def __init__(self, x_cad, scales, lb, ub, c=None, total=None, reg=1e-6, eps=1e-7,
                 names=None, polish=True):
        self.x_cad = np.asarray(x_cad, float)
        self.s = np.asarray(scales, float)
        self.n = self.x_cad.size
        lb = np.asarray(lb, float)
        ub = np.asarray(ub, float)
        check_bounds(lb, ub, c, total, names)
        self.reg = float(reg)
        rows = [sp.identity(self.n, format='csc')]
        lo = [np.maximum((lb - self.x_cad) / self.s, -INF)]
        hi = [np.minimum((ub - self.x_cad) / self.s, INF)]
        if c is not None:
            cz = np.asarray(c, float) * self.s
            rows.insert(0, sp.csc_matrix(cz[None, :]))
            rhs = float(total - c @ self.x_cad)
            lo.insert(0, [rhs])
            hi.insert(0, [rhs])
        self._cz = np.asarray(c, float) * self.s if c is not None else None
        self.A = sp.vstack(rows, format='csc')
        self.l = np.concatenate(lo)
        self.u = np.concatenate(hi)
        self.eps = eps
        self.polish = polish
        self._prob = None
        self._z = None
        iu = np.triu_indices(self.n)
        self._iu = iu

    def _pq(self, H, h, n_eff):
        s = self.s
        p = (s[:, None] * H * s[None, :]) / n_eff
        p[np.diag_indices(self.n)] += self.reg
        q = s * (H @ self.x_cad - h) / n_eff
        return 2.0 * p, 2.0 * q

    def set_total(self, total: float) -> None:
        """Change the right-hand side of the mass equality (keeps OSQP's factorisation)."""
        if self._cz is None:
            return
        rhs = float(total - (self._cz / self.s) @ self.x_cad)
        self.l[0] = self.u[0] = rhs
        if self._prob is not None:
            self._prob.update(l=self.l, u=self.u)

    def _kkt(self, p, q, max_iter: int = 60):
        """Primal active-set solve on the box, warm-started from the last active set.

        Each iteration solves the equality-constrained problem in the free variables (one
        KKT system); violated bounds join the active set, bounds whose multiplier has the
        wrong sign leave it. Returns None (caller falls back to OSQP) if it does not settle.
        """
        n = self.n
        lo, hi = self.l[-n:], self.u[-n:]
        cz = self._cz
        fixed = dict(self._active) if getattr(self, '_active', None) else {}
        for _ in range(max_iter):
            free = np.array([i for i in range(n) if i not in fixed], dtype=int)
            z = np.zeros(n)
            for i, side in fixed.items():
                z[i] = lo[i] if side < 0 else hi[i]
            fz = np.array(list(fixed), dtype=int)
            rhs = -q[free] - (p[np.ix_(free, fz)] @ z[fz] if fz.size else 0.0)
            m = free.size
            if cz is not None:
                kkt = np.zeros((m + 1, m + 1))
                kkt[:m, :m] = p[np.ix_(free, free)]
                kkt[:m, m] = cz[free]
                kkt[m, :m] = cz[free]
                rhs = np.concatenate([rhs, [self.l[0] - (cz[fz] @ z[fz] if fz.size else 0.0)]])
            else:
                kkt = p[np.ix_(free, free)]
            try:
                sol = np.linalg.solve(kkt, rhs)
            except np.linalg.LinAlgError:
                return None
            if not np.all(np.isfinite(sol)):
                return None
            z[free] = sol[:m]
            lam = sol[m] if cz is not None else 0.0
            viol_lo = free[z[free] < lo[free] - 1e-9]
            viol_hi = free[z[free] > hi[free] + 1e-9]
            if viol_lo.size or viol_hi.size:
                for i in viol_lo:
                    fixed[int(i)] = -1
                for i in viol_hi:
                    fixed[int(i)] = 1
                continue
            if not fixed:
                self._active = {}
                return z
            grad = p @ z + q + (lam * cz if cz is not None else 0.0)
            # at a lower bound the cost must not decrease upward: grad >= 0; upper: grad <= 0
            wrong = {i: -side * grad[i] for i, side in fixed.items() if -side * grad[i] < -1e-9}
            if not wrong:
                self._active = dict(fixed)
                return z
            del fixed[min(wrong, key=wrong.get)]
        return None

    def solve(self, H: np.ndarray, h: np.ndarray, n_eff: float,
              warm: Optional[np.ndarray] = None, fast: bool = False) -> QPSolution:
        """Solve for statistics ``H``, ``h`` over ``n_eff`` samples.

        Args:
            H: ``sum A^T A`` (n, n).
            h: ``sum A^T b`` (n,).
            n_eff: Effective number of samples (> 0).
            warm: Warm start ``x`` (default: last solution).
            fast: Solve by a primal active-set method on the box (a few KKT solves,
                warm-started from the last active set; status 'solved (active set)'); OSQP,
                warm-started, only if that does not settle.

        Status ``'solved'`` only: when OSQP stops short of its tolerance (iteration limit,
        'solved inaccurate') the QP is solved by the exact active-set method instead (status
        ``'solved (active set after OSQP ...)'``).

        Raises:
            InfeasibleProblemError: OSQP proves the constraints infeasible.
            SolverNotConvergedError: OSQP stopped short of its tolerance and the active-set
                solve did not settle (``last_state``: OSQP's last iterate ``x``).
            SolverError: Other failures.
        """
        import time

        t0 = time.perf_counter()
        p, q = self._pq(np.asarray(H, float), np.asarray(h, float), max(n_eff, 1e-12))
        if fast:
            z = self._kkt(p, q)
            if z is not None:
                self._z = z
                return QPSolution(self.x_cad + self.s * z, 'solved (active set)', 0,
                                  time.perf_counter() - t0)
        pu = sp.csc_matrix((p[self._iu], self._iu), shape=(self.n, self.n))
        if self._prob is None:
            self._prob = osqp.OSQP()
            self._prob.setup(pu, q, self.A, self.l, self.u, eps_abs=self.eps,
                             eps_rel=self.eps, max_iter=20000, polishing=self.polish,
                             verbose=False, adaptive_rho=True)
        else:
            self._prob.update(Px=pu.data, q=q)
        if warm is not None:
            self._z = (np.asarray(warm, float) - self.x_cad) / self.s
        if self._z is not None:
            self._prob.warm_start(x=self._z)
        res = self._prob.solve(raise_error=False)
        status = str(res.info.status)
        if 'infeasible' in status.lower():
            raise InfeasibleProblemError('parameter QP is infeasible', status)
        finite = res.x is not None and np.all(np.isfinite(res.x))
        if finite and status.lower() == 'solved':
            self._z = np.array(res.x)
            return QPSolution(self.x_cad + self.s * self._z, status, int(res.info.iter),
                              time.perf_counter() - t0)
        if status.lower() not in NOT_CONVERGED or not finite:
            raise SolverError('OSQP failed on the parameter QP', status, res.info.iter)
        # stopped short of the tolerance: the exact active-set solve, else a typed error
        self._active = None
        z = self._kkt(p, q)
        if z is None or not self._feasible(z):
            raise SolverNotConvergedError('OSQP stopped short of its tolerance on the '
                                          'parameter QP', status, int(res.info.iter),
                                          self.x_cad + self.s * np.asarray(res.x))
        self._z = z
        return QPSolution(self.x_cad + self.s * z, f'solved (active set after OSQP {status})',
                          int(res.info.iter), time.perf_counter() - t0)

    def _feasible(self, z: np.ndarray, tol: float = 1e-9) -> bool:
        """Whether scaled ``z`` satisfies the mass equality and the box (to ``tol``)."""
        n = self.n
        ok = bool(np.all(z >= self.l[-n:] - tol) and np.all(z <= self.u[-n:] + tol))
        if self._cz is not None:
            ok = ok and abs(float(self._cz @ z) - self.l[0]) <= tol * max(1.0, abs(self.l[0]))
        return ok
