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
from typing import Optional, Tuple

import numpy as np
import osqp
import scipy.sparse as sp

from legid_ros.core.errors import InfeasibleProblemError, SolverError, SolverNotConvergedError
from legid_ros.core.identification.solvers.box_qp import augment_equality, box_qp_step

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
                     ub: np.ndarray) -> np.ndarray:
    """Euclidean projection of ``y`` on ``{c.x = total, lb <= x <= ub}`` (``c >= 0``).

    The solution is ``clip(y - lam c, lb, ub)``; ``g(lam) = c . clip(y - lam c) - total``
    falls piecewise linearly in ``lam``, with kinks where an entry meets a bound, so the root
    is found exactly between the two kinks that bracket it. A total that :func:`check_bounds`
    accepts within its tolerance but that the box cannot reach exactly is taken at the
    nearest reachable value (the box corner).
    """
    y, c = np.asarray(y, float), np.asarray(c, float)
    lb, ub = np.asarray(lb, float), np.asarray(ub, float)
    cc = float(c @ c)
    if cc > 0.0:  # the plane's nearest point, when the box does not cut it, is the answer
        x = y - ((float(c @ y) - float(total)) / cc) * c
        if np.all(x >= lb) and np.all(x <= ub):
            return x
    check_bounds(lb, ub, c, total)
    nz = c != 0
    total = min(max(float(total), float(np.sum(c[nz] * lb[nz]))), float(np.sum(c[nz] * ub[nz])))
    with np.errstate(invalid='ignore', divide='ignore'):
        kinks = np.concatenate([(y[nz] - ub[nz]) / c[nz], (y[nz] - lb[nz]) / c[nz]])
    kinks = np.unique(kinks[np.isfinite(kinks)])
    if kinks.size == 0:  # no finite bound on the plane's variables: g is linear
        cc = float(c @ c)
        lam = 0.0 if cc == 0.0 else (float(c @ np.clip(y, lb, ub)) - total) / cc
        return np.clip(y - lam * c, lb, ub)
    # g at each kink (rows: kinks), and one unit beyond either end (g is linear out there)
    lams = np.concatenate([[kinks[0] - 1.0], kinks, [kinks[-1] + 1.0]])
    gv = np.clip(y[None, :] - lams[:, None] * c[None, :], lb, ub) @ c - total
    k = int(np.searchsorted(-gv, 0.0))  # first index with g <= 0 (g falls with lam)
    if k == 0:
        lo, hi = 0, 1  # root left of the first kink: extrapolate the first segment
    elif k == lams.size:
        lo, hi = lams.size - 2, lams.size - 1
    else:
        lo, hi = k - 1, k
    slope = (gv[hi] - gv[lo]) / (lams[hi] - lams[lo])
    lam = lams[lo] if slope == 0.0 else lams[lo] - gv[lo] / slope
    return np.clip(y - lam * c, lb, ub)


def scaled_cost(h_mat: np.ndarray, h_vec: np.ndarray, n: float, pi_cad: np.ndarray,
                scales: np.ndarray, reg: float) -> Tuple[np.ndarray, np.ndarray]:
    """``(P, q)`` of ``(pi^T H pi - 2 h^T pi) / n + reg |z|^2 = z^T P z + 2 q^T z + const``.

    In the scaled coordinates ``z = (pi - pi_cad) / s`` every standard-set solver works in
    (:class:`ParameterQP`, :func:`.sdp.solve_sdp`, :class:`.lmi_cuts.LmiCutQP`). ``P`` is as
    symmetric as ``H`` (up to rounding): solvers that need it exactly symmetric take
    ``(P + P^T) / 2``.
    """
    n = max(float(n), 1e-12)
    s = np.asarray(scales, float)
    p = (s[:, None] * h_mat * s[None, :]) / n
    p[np.diag_indices_from(p)] += reg
    q = s * (h_mat @ np.asarray(pi_cad, float) - h_vec) / n
    return p, q


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
        p, q = scaled_cost(H, h, n_eff, self.x_cad, self.s, self.reg)
        return 2.0 * p, 2.0 * q

    def set_total(self, total: float) -> None:
        """Change the right-hand side of the mass equality (keeps OSQP's factorisation)."""
        if self._cz is None:
            return
        rhs = float(total - (self._cz / self.s) @ self.x_cad)
        self.l[0] = self.u[0] = rhs
        if self._prob is not None:
            self._prob.update(l=self.l, u=self.u)

    def _active_set(self, p, q):
        """Exact solve on the equality and the box (:func:`.box_qp.box_qp_step`).

        Starts from the last solution (or CAD) projected on the feasible set; returns the
        scaled solution, or None if the active-set iteration does not settle.
        """
        n = self.n
        lo, hi = self.l[-n:], self.u[-n:]
        z0 = np.zeros(n) if self._z is None else np.asarray(self._z, float)
        if self._cz is not None:
            z0 = project_mass_box(z0, self._cz, self.l[0], lo, hi)
        else:
            z0 = np.clip(z0, lo, hi)
        b = p if self._cz is None else augment_equality(p, self._cz)
        if b is None:
            return None
        step = box_qp_step(p @ z0 + q, b, self._cz, lo - z0, hi - z0)
        return None if step is None else z0 + step.d

    def solve(self, H: np.ndarray, h: np.ndarray, n_eff: float,
              warm: Optional[np.ndarray] = None, fast: bool = False) -> QPSolution:
        """Solve for statistics ``H``, ``h`` over ``n_eff`` samples.

        Args:
            H: ``sum A^T A`` (n, n).
            h: ``sum A^T b`` (n,).
            n_eff: Effective number of samples (> 0).
            warm: Warm start ``x`` (default: last solution).
            fast: Solve by the primal active-set method on the box (a few KKT solves from the
                last solution; status 'solved (active set)'); OSQP, warm-started, only if that
                does not settle.

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
        if warm is not None:
            self._z = (np.asarray(warm, float) - self.x_cad) / self.s
        if fast:
            z = self._active_set(p, q)
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
        z = self._active_set(p, q)
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
