"""Contact wrench distribution over the stance feet: a small OSQP QP.

The base rows of the floating-base equation of motion say what the feet must carry:
``sum_i J_i,base^T w_i = (M a + h)_base``, with ``w_i`` the ground-on-foot wrench of stance
foot ``i`` at its sole frame, sole axes ``[f, n]`` [N, N.m] and ``J_i`` the sole frame's LOCAL
Jacobian. With one foot the equality fixes the wrench; with two, the QP picks the smallest
weighted wrench norm under, per foot:

- unilateral contact ``f_z >= f_z_min``;
- a linearised friction cone (inner pyramid) ``|f_x|, |f_y| <= mu / sqrt(2) f_z``;
- the centre of pressure inside the sole with a margin: ``|n_x| <= (b/2 - margin) f_z``,
  ``|n_y| <= (a/2 - margin) f_z`` (a = sole length, b = width);
- a torsion bound ``|n_z| <= mu_t f_z``.

:func:`build_contact_qp` sets the problem up once per stance set (the constraint rows are
constant; only the equality's coefficients and right-hand side change);
:meth:`ContactQp.solve` updates and solves it and checks OSQP's status (typed errors). Two
exact shortcuts come first: with one stance foot the equality alone fixes the wrench (a 6 x 6
system, checked against the same rows); with more, the equality-constrained minimiser is
computed in closed form and, when no cone or CoP row is active at it, it is the QP's optimum.
OSQP runs only when an inequality is active.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

import numpy as np
import osqp
import scipy.sparse as sp

from legid_ros.core.errors import BadInputError, InfeasibleProblemError, SolverError

#: OSQP status values that mean infeasible constraints, and the one that means solved.
INFEASIBLE_VAL = (int(osqp.SolverStatus.OSQP_PRIMAL_INFEASIBLE),
                  int(osqp.SolverStatus.OSQP_PRIMAL_INFEASIBLE_INACCURATE))
SOLVED_VAL = int(osqp.SolverStatus.OSQP_SOLVED)
ROWS_PER_FOOT = 11


@dataclass(frozen=True)
class SoleContact:
    """Contact model of one foot's sole.

    Attributes:
        name: Foot name.
        half_length_m: Half sole length along the sole's x axis [m].
        half_width_m: Half sole width along its y axis [m].
        mu: Coulomb friction coefficient [-].
        cop_margin_m: Smallest distance of the centre of pressure to the sole edge [m].
        fz_min_n: Smallest normal force of a stance foot [N].
    """

    name: str
    half_length_m: float
    half_width_m: float
    mu: float = 0.6
    cop_margin_m: float = 0.005
    fz_min_n: float = 1.0

    def rows(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(C, l, u)``: the foot's constant constraint rows ``l <= C w <= u``, (11, 6)."""
        mu = self.mu / np.sqrt(2.0)
        cx = max(self.half_width_m - self.cop_margin_m, 0.0)  # bounds n_x (CoP y)
        cy = max(self.half_length_m - self.cop_margin_m, 0.0)  # bounds n_y (CoP x)
        mu_t = self.mu * min(self.half_length_m, self.half_width_m) / 2
        c = np.zeros((ROWS_PER_FOOT, 6))
        c[0, 2] = 1.0  # f_z >= f_z_min
        for k, (axis, lim) in enumerate(((0, mu), (1, mu), (3, cx), (4, cy), (5, mu_t))):
            c[1 + 2 * k, axis], c[1 + 2 * k, 2] = 1.0, -lim  # w_axis - lim f_z <= 0
            c[2 + 2 * k, axis], c[2 + 2 * k, 2] = -1.0, -lim  # -w_axis - lim f_z <= 0
        lo = np.full(ROWS_PER_FOOT, -np.inf)
        lo[0] = self.fz_min_n
        up = np.zeros(ROWS_PER_FOOT)
        up[0] = np.inf
        return c, lo, up


def _inverse_motion(x: np.ndarray) -> np.ndarray:
    """Inverse of a 6 x 6 motion transform ``[[R, B], [0, R]]`` (``B = [p]x R``):
    ``[[R^T, -R^T B R^T], [0, R^T]]`` (the base block of a free flyer's LOCAL frame Jacobian
    has this form)."""
    rt = x[:3, :3].T
    out = np.zeros((6, 6))
    out[:3, :3] = rt
    out[3:, 3:] = rt
    out[:3, 3:] = -rt @ x[:3, 3:] @ rt
    return out


@dataclass
class ContactSolution:
    """Wrenches of one QP solve.

    Attributes:
        wrenches: Ground-on-foot wrench per stance foot at its sole frame ``[f, n]``,
            (k, 6) [N, N.m], in the problem's foot order.
        status: OSQP's status string.
        iterations: OSQP iterations.
        base_residual: Largest |base-row residual| [N or N.m].
    """

    wrenches: np.ndarray
    status: str
    iterations: int
    base_residual: float


class ContactQp:
    """The set-up QP of one stance set (see :func:`build_contact_qp`)."""

    def __init__(self, feet: Sequence[SoleContact], weights: np.ndarray, eps: float):
        self.feet = tuple(feet)
        k = len(self.feet)
        self.nx = 6 * k
        rows = [f.rows() for f in self.feet]
        a = np.zeros((6 + ROWS_PER_FOOT * k, self.nx))
        lo = np.concatenate([np.zeros(6)] + [r[1] for r in rows])
        up = np.concatenate([np.zeros(6)] + [r[2] for r in rows])
        mask = np.zeros(a.shape, bool)
        mask[:6] = True  # the equality rows change every cycle: keep them dense
        for i, (c, _, _) in enumerate(rows):
            r0 = 6 + ROWS_PER_FOOT * i
            a[r0:r0 + ROWS_PER_FOOT, 6 * i:6 * i + 6] = c
            mask[r0:r0 + ROWS_PER_FOOT, 6 * i:6 * i + 6] = c != 0
        # column-major order of the mask = OSQP's CSC data order
        cols, rws = np.nonzero(mask.T)
        self._rows, self._cols = rws, cols
        self._eq = rws < 6
        self._a = a
        a_csc = sp.csc_matrix((a[rws, cols], (rws, cols)), shape=a.shape)
        a_csc.sort_indices()
        # the inequality rows as one ``C2 w <= b2`` for the shortcuts' feasibility test
        self._c2 = np.vstack([a[6:], -a[6:]])
        self._b2 = np.concatenate([up[6:], -lo[6:]])
        big = float(osqp.constant('OSQP_INFTY'))
        self._lo, self._up = np.clip(lo, -big, big), np.clip(up, -big, big)
        self._eq_idx = np.flatnonzero(self._eq).astype(np.int64)
        self._eq_rows, self._eq_cols = rws[self._eq], cols[self._eq]
        w = np.tile(np.asarray(weights, float), k)
        self._w_inv = 1.0 / w
        self._prob = osqp.OSQP()
        self._prob.setup(sp.diags(w).tocsc(), np.zeros(self.nx), a_csc, self._lo, self._up,
                         eps_abs=eps, eps_rel=eps, max_iter=4000, polishing=False,
                         verbose=False, adaptive_rho=True, warm_starting=True,
                         check_termination=5)
        # the compiled solver object: its update/solve skip the Python wrapper's per-call
        # bookkeeping (about 40 us of the 1 kHz budget); the public API otherwise
        self._solver = getattr(self._prob, '_solver', None)

    def solve(self, base_jacobians: np.ndarray, base_need: np.ndarray) -> ContactSolution:
        """Distribute ``base_need`` over the feet.

        Args:
            base_jacobians: Base block of each stance sole's LOCAL Jacobian (a free flyer's:
                a motion transform), k arrays (6, 6).
            base_need: Base rows of ``M a + h`` [N, N.m], (6,).

        Raises:
            InfeasibleProblemError: the cones and CoP bounds cannot carry ``base_need``.
            SolverError: any other status than solved.
        """
        jb = base_jacobians
        if len(jb) != len(self.feet) or any(np.shape(j) != (6, 6) for j in jb):
            raise BadInputError(f'expected {len(self.feet)} base Jacobians of shape (6, 6)')
        if len(self.feet) == 1:
            return self._solve_unique(jb[0], base_need)
        a_eq = self._a[:6]
        for i, j in enumerate(jb):
            a_eq[:, 6 * i:6 * i + 6] = j.T
        sol = self._solve_interior(a_eq, base_need)
        if sol is not None:
            return sol
        lo, up = self._lo, self._up
        lo[:6] = base_need
        up[:6] = base_need
        ax = a_eq[self._eq_rows, self._eq_cols]
        if self._solver is not None:
            s = self._solver
            s.update_data_vec(q=None, l=lo, u=up)
            s.update_data_mat(P_x=None, P_i=None, A_x=ax, A_i=self._eq_idx)
            s.solve()
            status_val, iters, x = s.info.status_val, s.info.iter, s.solution.x
            status = str(s.info.status).lower()
        else:
            self._prob.update(Ax=ax, Ax_idx=self._eq_idx, l=lo, u=up)
            res = self._prob.solve(raise_error=False)
            status_val, iters, x = res.info.status_val, res.info.iter, res.x
            status = str(res.info.status).lower()
        if status_val in INFEASIBLE_VAL:
            raise InfeasibleProblemError('contact QP is infeasible: the stance feet cannot '
                                         'carry the base wrench', f'{status}, need {base_need}')
        if status_val != SOLVED_VAL or x is None or not np.all(np.isfinite(x)):
            raise SolverError('OSQP failed on the contact QP', status, int(iters))
        x = np.array(x)
        resid = float(np.abs(self._a[:6] @ x - base_need).max())
        return ContactSolution(x.reshape(-1, 6), status, int(iters), resid)

    def _solve_interior(self, a_eq: np.ndarray, base_need: np.ndarray
                        ) -> Optional[ContactSolution]:
        """The equality-constrained minimiser ``w = W^-1 A^T (A W^-1 A^T)^-1 b``; when it meets
        every cone and CoP row it is the QP's optimum (no inequality active) and OSQP is not
        needed; ``None`` otherwise."""
        aw = a_eq * self._w_inv
        w = aw.T @ np.linalg.solve(aw @ a_eq.T, base_need)
        if (self._c2 @ w - self._b2).max() > -1e-9 * (1.0 + abs(base_need[2])):
            return None  # an inequality is (nearly) active: OSQP decides
        resid = float(np.abs(a_eq @ w - base_need).max())
        return ContactSolution(w.reshape(-1, 6), 'solved (no inequality active)', 0, resid)

    def _solve_unique(self, jb: np.ndarray, base_need: np.ndarray) -> ContactSolution:
        """One stance foot: the equality fixes the wrench (the QP's feasible set is a point);
        it is checked against the cone and CoP rows instead of iterating OSQP."""
        w = _inverse_motion(jb).T @ base_need
        if (self._c2 @ w - self._b2).max() > 1e-9 * (1.0 + abs(base_need[2])):
            raise InfeasibleProblemError('contact QP is infeasible: the stance foot cannot '
                                         'carry the base wrench',
                                         f'{self.feet[0].name} wrench {np.round(w, 2)} outside '
                                         'its friction cone or sole')
        resid = float(np.abs(jb.T @ w - base_need).max())
        return ContactSolution(w[None, :], 'solved (unique)', 0, resid)


def build_contact_qp(feet: Sequence[SoleContact], force_weight: float = 1.0,
                     moment_weight: float = 100.0, eps: float = 1e-6) -> ContactQp:
    """Set up the contact QP of one stance set.

    Args:
        feet: The stance feet's contact models (one or more).
        force_weight: Cost weight of each force component [1/N^2].
        moment_weight: Cost weight of each moment component [1/(N.m)^2] (large: CoP near
            the sole centre when the feet share the load).
        eps: OSQP absolute and relative tolerance.

    Raises:
        BadInputError: no feet, or non-positive weights.
    """
    if not feet:
        raise BadInputError('the contact QP needs at least one stance foot')
    if force_weight <= 0 or moment_weight <= 0:
        raise BadInputError('contact QP weights must be > 0')
    weights = np.array([force_weight] * 3 + [moment_weight] * 3)
    return ContactQp(feet, weights, eps)
