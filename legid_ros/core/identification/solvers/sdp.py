"""Physically consistent least squares: pseudo-inertia LMIs in a cvxpy SDP (CLARABEL, SCS).

One LMI builder (:func:`pseudo_inertia_lmi`, the affine twin of
:func:`legid_ros.core.inertial.pseudo_inertia`: ``J(pi_i) >> eps I`` means mass > 0 and an
inertia about the COM that is positive and satisfies the triangle inequalities) and one
solve routine (:func:`solve_with_fallback`, CLARABEL then SCS) serve two problems:

- **floating-base robots** (:func:`identify_sdp`, the ``sdp`` method of
  :func:`legid_ros.core.identification.api.identify`): ``min (S z)^T (H / n) (S z) ... +
  reg |z|^2`` on the standard parameters ``pi = pi_cad + s * z`` (the cost of
  :class:`legid_ros.core.identification.solvers.qp.ParameterQP`), with mass bounds, the
  total-mass equality and optional COM boxes ``m c_min <= h <= m c_max``; rows weighted per
  group by their RMS at CAD (first pass) and at the first solution (second pass);
- **fixed-base geared legs** (:func:`build_consistent_ls`, used by
  :mod:`legid_ros.core.identification.fixed_base` and :mod:`.robust`): ``min |A_b B theta +
  A_x x - b|`` over ``theta = [pi, J]`` (links, rotor inertias) and free extra columns ``x``
  (friction), with mass bounds ``(1 - d) m_cad <= m <= (1 + d) m_cad`` and ``J >= J_min > 0``.
  The pseudo-inertia LMI implies the spatial-inertia LMI of the two-step identification of a
  geared leg (Xiao, Qian & Luo 2025). The data enter only through the triangular factor of
  ``[A_b A_x]``, so the size does not grow with the samples; the problem is compiled once
  per shape and re-solved with new data (cvxpy parameters), which the robust loops (Zhu &
  Zhang) rely on. A tiny pull towards CAD picks one point of the unidentifiable null space.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Dict, Optional, Sequence, Tuple

import cvxpy as cp
import numpy as np
import scipy.linalg

from legid_ros.core.errors import (BadInputError, InfeasibleProblemError, SolverError,
                                   SolverNotConvergedError)
from legid_ros.core.identification.identifiability import DEFAULT_MAX_COND, excitation
from legid_ros.core.identification.parameters.base import BaseParameters
from legid_ros.core.identification.parameters.sets import StandardSet
from legid_ros.core.identification.result import IdentResult
from legid_ros.core.identification.rows.linear import Rows, fold_rows, group_weights
from legid_ros.core.identification.solvers.qp import scaled_cost
from legid_ros.core.identification.solvers.standard import DEFAULT_REG, standard_bounds
from legid_ros.core.inertial import PARAMS_PER_LINK, check_consistency, pseudo_inertia_layout
from legid_ros.core.robot import Robot

EPS_LMI = 1e-7  # [kg.m^2] margin of the pseudo-inertia LMIs
OPTIMAL = ('optimal',)
INACCURATE = ('optimal_inaccurate',)  # short of the tolerance: never a solution by itself
INFEASIBLE = ('infeasible', 'infeasible_inaccurate')


def pseudo_inertia_lmi(p, eps: float = EPS_LMI) -> cp.Constraint:
    """``J(p) >> eps I`` for one link's 10 parameters ``p`` (affine cvxpy expression)."""
    return cp.bmat(pseudo_inertia_layout(p)) >> eps * np.eye(4)


def solve_with_fallback(problem: cp.Problem, solvers: Sequence[str], what: str,
                        hint: str = '', last: Optional[cp.Variable] = None) -> Tuple[str, str]:
    """Solve with each solver in turn until one reaches the status 'optimal'.

    An 'optimal_inaccurate' solve (short of the solver's tolerance) is no solution: the next
    solver is tried, and if none is optimal a :class:`SolverNotConvergedError` carries the
    inaccurate iterate.

    Args:
        problem: The cvxpy problem.
        solvers: Solver names, tried in order (e.g. CLARABEL then SCS).
        what: The problem's name, for the error messages.
        hint: What to check when infeasible (default: the solver status).
        last: Variable whose value a :class:`SolverError` carries.

    Returns:
        ``(solver, 'solver: status')`` of the first optimal solve.

    Raises:
        InfeasibleProblemError: A solver found the constraints infeasible.
        SolverNotConvergedError: Solvers stopped short of their tolerance (inaccurate).
        SolverError: No solver reached an optimal status.
    """
    tried, inaccurate = [], None
    for name in solvers:
        try:
            problem.solve(solver=name)
        except (cp.error.SolverError, ValueError) as exc:
            tried.append(f'{name}: {exc}')
            continue
        status = f'{name}: {problem.status}'
        if problem.status in INFEASIBLE:
            raise InfeasibleProblemError(f'{what} is infeasible', hint or status)
        if all(v.value is not None for v in problem.variables()):
            if problem.status in OPTIMAL:
                return name, status
            if problem.status in INACCURATE and last is not None and inaccurate is None:
                inaccurate = np.asarray(last.value)
        tried.append(status)
    stats = problem.solver_stats
    iterations = int(getattr(stats, 'num_iters', 0) or 0) if stats else 0
    if inaccurate is not None:
        raise SolverNotConvergedError(f'{what}: solvers stopped short of their tolerance',
                                      status='; '.join(tried), iterations=iterations,
                                      last_state=inaccurate)
    raise SolverError(f'{what} did not converge', status='; '.join(tried),
                      iterations=iterations,
                      last_state=None if last is None or last.value is None
                      else np.asarray(last.value))


# ---- floating-base robots: standard parameters, weighted rows ----

def com_boxes_from_primitives(robot: Robot, margin: float = 0.01
                              ) -> Dict[str, Tuple[np.ndarray, np.ndarray]]:
    """Per link, the axis-aligned box [m] around its primitive bodies (description YAML)."""
    from legid_ros.core.identification.parameters.primitives import parse_primitives
    out = {}
    for link, bodies in parse_primitives(robot).items():
        lo = np.min([b.box_min for b in bodies], axis=0) - margin
        hi = np.max([b.box_max for b in bodies], axis=0) + margin
        out[link] = (lo, hi)
    return out


def _consistency_constraints(param: StandardSet, pi, total, lb: np.ndarray, ub: np.ndarray,
                             com_boxes=None) -> list:
    """Mass equality, box, a pseudo-inertia LMI per link and optional COM boxes on ``pi``."""
    cons = [param.mass_row() @ pi == total]
    fin_lb, fin_ub = np.isfinite(lb), np.isfinite(ub)
    if fin_lb.any():
        cons.append(pi[np.flatnonzero(fin_lb)] >= lb[fin_lb])
    if fin_ub.any():
        cons.append(pi[np.flatnonzero(fin_ub)] <= ub[fin_ub])
    for i, link in enumerate(param.link_names):
        seg = pi[PARAMS_PER_LINK * i:PARAMS_PER_LINK * (i + 1)]
        cons.append(pseudo_inertia_lmi(seg))
        if com_boxes and link in com_boxes:
            lo, hi = com_boxes[link]
            cons += [seg[1:4] >= seg[0] * lo, seg[1:4] <= seg[0] * hi]
    return cons


def _solve(problem: cp.Problem, z: cp.Variable, solver: str) -> str:
    used, _ = solve_with_fallback(problem, (solver, 'SCS') if solver != 'SCS' else ('SCS',),
                                  'consistency SDP',
                                  'check mass bounds, total mass and COM boxes', last=z)
    return used


class ConsistencySDP:
    """The consistent least squares of one standard set, built and canonicalised once.

    ``min z^T P z + 2 q^T z`` over ``pi = pi_cad + s * z`` under :func:`_consistency_constraints`.
    The data (``P`` through its Cholesky factor, ``q``, the total mass) are cvxpy parameters,
    so a new solve only refills them: cvxpy canonicalises the problem on the first solve and
    reuses it (DPP). The objective then reaches the solver as a second-order cone rather than
    a quadratic (``P`` is not affine in a parameter), which costs some accuracy in directions
    the data barely see: the online fallback of the cutting planes uses it; the batch methods
    use :func:`solve_sdp`.

    Args:
        param: The standard set (its CAD values and scales).
        lb, ub: Bounds on the standard parameters (+-inf for none).
        com_boxes: None or a dict link -> (c_min, c_max) [m].
    """

    def __init__(self, param: StandardSet, lb: np.ndarray, ub: np.ndarray, com_boxes=None):
        self.s = param.scales()
        self.cad = param.cad()
        n = param.size
        self.z = cp.Variable(n)
        self.lt = cp.Parameter((n, n))
        self.q = cp.Parameter(n)
        self.total = cp.Parameter()
        pi = self.cad + cp.multiply(self.s, self.z)
        obj = cp.Minimize(cp.sum_squares(self.lt @ self.z) + 2 * self.q @ self.z)
        self.problem = cp.Problem(obj, _consistency_constraints(param, pi, self.total, lb, ub,
                                                                com_boxes))

    def solve(self, H: np.ndarray, h: np.ndarray, n: float, total_mass: float, reg: float,
              solver: str = 'CLARABEL') -> Tuple[np.ndarray, str]:
        """Solve for statistics ``H, h`` over ``n`` samples; returns ``(pi, solver used)``."""
        p, q = scaled_cost(H, h, n, self.cad, self.s, reg + 1e-12)
        self.lt.value = np.linalg.cholesky(0.5 * (p + p.T)).T
        self.q.value = q
        self.total.value = float(total_mass)
        used = _solve(self.problem, self.z, solver)
        return np.asarray(self.cad + self.s * self.z.value), used


def solve_sdp(H: np.ndarray, h: np.ndarray, n: float, param: StandardSet, total_mass: float,
              lb: np.ndarray, ub: np.ndarray, reg: float, com_boxes=None,
              solver: str = 'CLARABEL') -> Tuple[np.ndarray, str]:
    """Solve the SDP for statistics ``H, h`` (``pi`` only); returns (pi, solver used).

    Built with the data as constants (the objective reaches the solver as a quadratic: the
    accurate form for one solve); for repeated solves on one set see :class:`ConsistencySDP`.
    """
    s = param.scales()
    cad = param.cad()
    p, q = scaled_cost(H, h, n, cad, s, reg + 1e-12)
    lchol = np.linalg.cholesky(0.5 * (p + p.T))
    z = cp.Variable(param.size)
    pi = cad + cp.multiply(s, z)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(lchol.T @ z) + 2 * q @ z),
                      _consistency_constraints(param, pi, total_mass, lb, ub, com_boxes))
    used = _solve(prob, z, solver)
    return np.asarray(cad + s * z.value), used


def identify_sdp(rows: Rows, robot: Robot, total_mass: float,
                 pi_cad: Optional[np.ndarray] = None, reg: float = DEFAULT_REG,
                 bounds=None, com_boxes=None, solver: str = 'CLARABEL',
                 max_cond: float = DEFAULT_MAX_COND, check: bool = True) -> IdentResult:
    """Physically consistent identification from linear rows (see the module docstring).

    Args:
        com_boxes: None, 'primitives' (boxes around the description's primitive bodies) or
            a dict link -> (c_min, c_max) [m].
    """
    t0 = time.perf_counter()
    param = StandardSet(robot, pi_cad)
    npi = param.size
    lb, ub = bounds if bounds is not None else standard_bounds(param)
    if com_boxes == 'primitives':
        com_boxes = com_boxes_from_primitives(robot)
    x = np.concatenate([param.cad(), np.zeros(rows.nf)])
    if rows.nf:
        x[npi:] = fold_rows(rows).eliminate(npi)[2](param.cad())
    used = ''
    for k in range(2):
        w = group_weights(rows, x)
        hs, gs, recover = fold_rows(rows, w).eliminate(npi)
        if k == 0 and check:
            excitation(robot, hs, rows.n_samples, param.cad(), max_cond=max_cond)
        pi, used = solve_sdp(hs, gs, rows.n_samples, param, total_mass, lb, ub, reg, com_boxes,
                             solver)
        fr = recover(pi)
        x = np.concatenate([pi, fr if fr is not None else []])
    r = rows.A @ x - rows.b
    rep = excitation(robot, hs, rows.n_samples, pi,
                     sigma_res=float(np.sqrt(np.mean(w * r ** 2))), raise_error=False)
    return IdentResult(
        method='sdp', pi=pi, x=pi, names=param.names, param_names=param.names,
        total_mass=total_mass, condition_number=rep.condition_number,
        residual_rms=float(np.sqrt(np.mean(r ** 2))), solve_time_s=time.perf_counter() - t0,
        iterations=2, consistency=check_consistency(pi, param.link_names, tol=1e-9),
        identifiable=rep.lines, friction=x[npi:] if rows.nf else None,
        n_samples=rows.n_samples, info={'rows': rows.kind, 'reg': reg, 'solver': used,
                                        'status': 'optimal', 'converged': True,
                                        'eps_lmi': EPS_LMI})


# ---- fixed-base geared legs: base parameters, data as cvxpy parameters ----

@dataclass
class ConsistentLSProblem:
    """A built leg SDP (compiled once, re-solved with new data through cvxpy parameters).

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


def build_consistent_ls(n_base: int, base: BaseParameters, theta_cad: np.ndarray,
                        n_links: int, mass_tol: float = 0.2, rotor_min: float = 1e-7,
                        n_extra: int = 0, reg: float = 1e-8, lmi_eps: float = EPS_LMI
                        ) -> ConsistentLSProblem:
    """Build the leg SDP; load data with :meth:`ConsistentLSProblem.set_data`.

    Args:
        n_base: Base parameters (columns of the base regressor).
        base: Base parameter map ``beta = B theta``.
        theta_cad: CAD ``[pi, J]`` (for mass bounds and the null-space pull).
        n_links: Links (10 parameters each, first in theta).
        mass_tol: ``d`` of the mass bounds.
        rotor_min: Lower bound of every rotor inertia [kg.m^2] (> 0).
        n_extra: Extra free columns (friction).
        reg: Weight of the pull towards CAD, relative to the data term.
        lmi_eps: Margin of the pseudo-inertia LMI [kg.m^2].
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
        cons.append(pseudo_inertia_lmi(theta[PARAMS_PER_LINK * i:PARAMS_PER_LINK * (i + 1)],
                                       lmi_eps))
        m_cad = theta_cad[10 * i]
        cons += [theta[10 * i] >= (1 - mass_tol) * m_cad, theta[10 * i] <= (1 + mass_tol) * m_cad]
    cons.append(theta[10 * n_links:] >= rotor_min)
    return ConsistentLSProblem(cp.Problem(cp.Minimize(obj), cons), theta, extra, r, c, n_links)


def solve_consistent_ls(prob: ConsistentLSProblem):
    """Solve the leg SDP with CLARABEL (SCS as fallback).

    Returns:
        ``(theta, extra, status)`` with ``status`` like ``'CLARABEL: optimal'``.

    Raises:
        InfeasibleProblemError: The constraints admit no solution.
        SolverError: Neither solver reached an optimal status (with the last iterate).
    """
    _, status = solve_with_fallback(prob.problem, ('CLARABEL', 'SCS'), 'consistent LS (SDP)',
                                    last=prob.theta)
    extra = None if prob.extra is None else np.asarray(prob.extra.value)
    return np.asarray(prob.theta.value), extra, status
