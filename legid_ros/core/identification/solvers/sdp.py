"""Physically consistent identification: LMI-constrained least squares (cvxpy SDP).

``min (S z)^T (H / n) (S z) ... + reg |z|^2`` (the same cost as
:class:`legid_ros.core.identification.solvers.qp.ParameterQP`, ``pi = pi_cad + s * z``) subject to, per link,
the pseudo-inertia ``J(pi_i) >= eps_lmi I`` (mass > 0, inertia about the COM positive and
satisfying the triangle inequalities), mass bounds, the total-mass equality and optional COM
boxes ``m c_min <= h <= m c_max``. Solver CLARABEL, SCS as fallback. Rows are weighted per
group by their RMS at CAD (first pass) and at the first solution (second pass).
"""

from __future__ import annotations

import time
from typing import Dict, Optional, Tuple

import cvxpy as cp
import numpy as np

from legid_ros.core.errors import InfeasibleProblemError, SolverError
from legid_ros.core.identification.identifiability import DEFAULT_MAX_COND, excitation
from legid_ros.core.identification.rows.linear import Rows, fold_rows, group_weights
from legid_ros.core.identification.parameters.sets import StandardSet
from legid_ros.core.identification.result import IdentResult
from legid_ros.core.identification.solvers.standard import DEFAULT_REG, standard_bounds
from legid_ros.core.inertial import PARAMS_PER_LINK, check_consistency
from legid_ros.core.robot import Robot

EPS_LMI = 1e-7  # [kg.m^2] margin of the pseudo-inertia LMIs


def pseudo_inertia_expr(p) -> cp.Expression:
    """4x4 pseudo-inertia of one link's 10 parameters (affine cvxpy expression)."""
    m, hx, hy, hz, ixx, ixy, iyy, ixz, iyz, izz = [p[k] for k in range(10)]
    half = 0.5 * (ixx + iyy + izz)
    return cp.bmat([[half - ixx, -ixy, -ixz, hx],
                    [-ixy, half - iyy, -iyz, hy],
                    [-ixz, -iyz, half - izz, hz],
                    [hx, hy, hz, m]])


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


def solve_sdp(H: np.ndarray, h: np.ndarray, n: float, param: StandardSet, total_mass: float,
              lb: np.ndarray, ub: np.ndarray, reg: float, com_boxes=None,
              solver: str = 'CLARABEL') -> Tuple[np.ndarray, str]:
    """Solve the SDP for statistics ``H, h`` (``pi`` only); returns (pi, solver used)."""
    s = param.scales()
    cad = param.cad()
    p = (s[:, None] * H * s[None, :]) / max(n, 1e-12)
    p[np.diag_indices_from(p)] += reg + 1e-12
    q = s * (H @ cad - h) / max(n, 1e-12)
    lchol = np.linalg.cholesky(0.5 * (p + p.T))
    z = cp.Variable(param.size)
    pi = cad + cp.multiply(s, z)
    cons = [param.mass_row() @ pi == total_mass]
    fin_lb, fin_ub = np.isfinite(lb), np.isfinite(ub)
    if fin_lb.any():
        cons.append(pi[np.flatnonzero(fin_lb)] >= lb[fin_lb])
    if fin_ub.any():
        cons.append(pi[np.flatnonzero(fin_ub)] <= ub[fin_ub])
    for i, link in enumerate(param.link_names):
        seg = pi[PARAMS_PER_LINK * i:PARAMS_PER_LINK * (i + 1)]
        cons.append(pseudo_inertia_expr(seg) >> EPS_LMI * np.eye(4))
        if com_boxes and link in com_boxes:
            lo, hi = com_boxes[link]
            cons += [seg[1:4] >= seg[0] * lo, seg[1:4] <= seg[0] * hi]
    obj = cp.Minimize(cp.sum_squares(lchol.T @ z) + 2 * q @ z)
    prob = cp.Problem(obj, cons)
    tried = []
    for name in (solver, 'SCS') if solver != 'SCS' else ('SCS',):
        try:
            prob.solve(solver=name)
        except (cp.error.SolverError, ValueError) as exc:
            tried.append(f'{name}: {exc}')
            continue
        if prob.status in ('optimal', 'optimal_inaccurate'):
            return np.asarray(cad + s * z.value), name
        if prob.status in ('infeasible', 'infeasible_inaccurate'):
            raise InfeasibleProblemError('consistency SDP is infeasible',
                                         'check mass bounds, total mass and COM boxes')
        tried.append(f'{name}: {prob.status}')
    raise SolverError('consistency SDP failed', '; '.join(tried))


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
    rep = excitation(robot, hs, rows.n_samples, pi, sigma_res=float(np.sqrt(np.mean(w * r ** 2))),
                     raise_error=False)
    return IdentResult(
        method='sdp', pi=pi, x=pi, names=param.names, param_names=param.names,
        total_mass=total_mass, condition_number=rep.condition_number,
        residual_rms=float(np.sqrt(np.mean(r ** 2))), solve_time_s=time.perf_counter() - t0,
        iterations=2, consistency=check_consistency(pi, param.link_names, tol=1e-9),
        identifiable=rep.lines, friction=x[npi:] if rows.nf else None,
        n_samples=rows.n_samples, info={'rows': rows.kind, 'reg': reg, 'solver': used,
                                        'eps_lmi': EPS_LMI})
