"""Physically consistent least squares on base parameters (SDP, cvxpy with CLARABEL/SCS).

``min || A_b B theta + A_x x - b ||`` over the standard parameters ``theta = [pi, J]`` and
free extra columns ``x`` (friction), subject to, per link, the pseudo-inertia LMI
``[[tr(I)/2 E - I, h], [h^T, m]] >> eps`` (which implies seed 001's spatial-inertia LMI and the
triangle inequalities), mass bounds ``(1 - d) m_cad <= m <= (1 + d) m_cad`` and rotor inertia
``J >= J_min > 0``. The data enter only through the triangular factor of ``[A_b A_x]``,
so the SDP size does not grow with the number of samples; it is compiled once per shape and
re-solved with new data (cvxpy parameters), which the robust loops rely on. A tiny pull
towards CAD picks one point of the (unidentifiable) null space; it does not change the base
parameters noticeably.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import cvxpy as cp
import numpy as np
import scipy.linalg

from legid_ros.core.errors import BadInputError, InfeasibleProblemError, SolverError
from legid_ros.core.identification.rows.drive import BaseParameters


@dataclass
class ConsistentLSProblem:
    """A built SDP (compiled once, re-solved with new data through cvxpy parameters).

    Attributes:
        problem: The cvxpy problem.
        theta: Standard-parameter variable ``[pi, J]``.
        extra: Extra-column variable (None if no extra columns).
        r: Parameter: triangular factor of the scaled data matrix.
        c: Parameter: matching right-hand side.
        n_links: Links.
    """

    problem: cp.Problem
    theta: cp.Variable
    extra: Optional[cp.Variable]
    r: cp.Parameter
    c: cp.Parameter
    n_links: int

    def set_data(self, a_base: np.ndarray, b: np.ndarray,
                 a_extra: Optional[np.ndarray] = None) -> None:
        """Load weighted data rows: ``min |[a_base a_extra] [beta; x] - b|^2``.

        Uses the normal equations (Cholesky of ``A^T A``) rather than a QR of the tall
        matrix: same triangular factor, far cheaper on a loaded machine.
        """
        a = a_base if a_extra is None else np.hstack([a_base, a_extra])
        if a.shape[1] != self.r.shape[0]:
            raise BadInputError(f'data has {a.shape[1]} columns, problem {self.r.shape[0]}')
        if a.shape[0] < a.shape[1]:
            raise BadInputError(f'{a.shape[0]} rows are too few for {a.shape[1]} unknowns')
        ata = a.T @ a
        jitter = 1e-12 * np.trace(ata) / ata.shape[0]
        lmat = np.linalg.cholesky(ata + jitter * np.eye(ata.shape[0]))
        rhs = scipy.linalg.solve_triangular(lmat, a.T @ b, lower=True)
        rnorm = max(float(np.linalg.norm(lmat)), 1e-12)
        self.r.value = lmat.T / rnorm
        self.c.value = rhs / rnorm


def _link_lmi(th, i, eps):
    p = th[10 * i:10 * (i + 1)]
    m, hx, hy, hz = p[0], p[1], p[2], p[3]
    ixx, ixy, iyy, ixz, iyz, izz = p[4], p[5], p[6], p[7], p[8], p[9]
    tr = 0.5 * (ixx + iyy + izz)
    mat = cp.bmat([[tr - ixx, -ixy, -ixz, hx],
                   [-ixy, tr - iyy, -iyz, hy],
                   [-ixz, -iyz, tr - izz, hz],
                   [hx, hy, hz, m]])
    return 0.5 * (mat + mat.T) >> eps * np.eye(4)


def build_consistent_ls(n_base: int, base: BaseParameters, theta_cad: np.ndarray,
                        n_links: int, mass_tol: float = 0.2, rotor_min: float = 1e-7,
                        n_extra: int = 0, reg: float = 1e-8, lmi_eps: float = 1e-7
                        ) -> ConsistentLSProblem:
    """Build the SDP; load data with :meth:`ConsistentLSProblem.set_data`.

    Args:
        n_base: Base parameters (columns of the base regressor).
        base: Base parameter map ``beta = B theta``.
        theta_cad: CAD ``[pi, J]`` (for mass bounds and the null-space pull).
        n_links: Links (10 parameters each, first in theta).
        mass_tol: ``d`` of the mass bounds.
        rotor_min: Lower bound of every rotor inertia [kg.m^2] (> 0).
        n_extra: Extra free columns (friction).
        reg: Weight of the pull towards CAD, relative to the data term.
        lmi_eps: Margin of the pseudo-inertia LMI.
    """
    k = n_base + n_extra
    p = base.B.shape[1]
    theta = cp.Variable(p)
    extra = cp.Variable(n_extra) if n_extra else None
    r = cp.Parameter((k, k))
    c = cp.Parameter(k)
    beta = base.B @ theta
    x = beta if extra is None else cp.hstack([beta, extra])
    scale = np.maximum(np.abs(theta_cad), 1e-3)
    # the residual norm (one second-order cone), not its square: with the square the solver's
    # relative accuracy swamps weakly excited directions (a 2 % bias on noise-free data)
    obj = cp.norm(r @ x - c, 2) + reg * cp.sum_squares(
        cp.multiply(1.0 / scale, theta - theta_cad)) / p
    cons = []
    for i in range(n_links):
        cons.append(_link_lmi(theta, i, lmi_eps))
        m_cad = theta_cad[10 * i]
        cons += [theta[10 * i] >= (1 - mass_tol) * m_cad, theta[10 * i] <= (1 + mass_tol) * m_cad]
    cons.append(theta[10 * n_links:] >= rotor_min)
    return ConsistentLSProblem(cp.Problem(cp.Minimize(obj), cons), theta, extra, r, c, n_links)


def solve_consistent_ls(prob: ConsistentLSProblem):
    """Solve with CLARABEL (SCS as fallback).

    Returns:
        ``(theta, extra, status)``.

    Raises:
        InfeasibleProblemError: The constraints admit no solution.
        SolverError: Neither solver reached an optimal status (with the last iterate).
    """
    status = ''
    for solver in ('CLARABEL', 'SCS'):
        try:
            prob.problem.solve(solver=solver)
        except cp.error.SolverError as exc:
            status = f'{solver}: {exc}'
            continue
        status = f'{solver}: {prob.problem.status}'
        if prob.problem.status in ('infeasible', 'infeasible_inaccurate'):
            raise InfeasibleProblemError('consistent LS has no feasible point', status)
        if prob.problem.status in ('optimal', 'optimal_inaccurate') and \
                prob.theta.value is not None:
            extra = None if prob.extra is None else np.asarray(prob.extra.value)
            return np.asarray(prob.theta.value), extra, status
    last = None if prob.theta.value is None else np.asarray(prob.theta.value)
    raise SolverError('consistent LS (SDP) did not converge', status=status,
                      iterations=int(getattr(prob.problem.solver_stats, 'num_iters', 0) or 0)
                      if prob.problem.solver_stats else 0, last_state=last)
