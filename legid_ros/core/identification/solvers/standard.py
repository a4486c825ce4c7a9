"""Common solve of the linear methods on the standard set (ZMP QP, torque LS, floating QP).

The linear ZMP rows and the joint-torque baseline of Wu & Gao 2021 and the floating-base rows
of the Tencent patent application 2022 end here.

Two passes of weighted least squares: the rows of each group (x/y for ZMP, one per joint for
torques, one per generalised coordinate for the floating base) are divided by the group's RMS
residual, first at CAD, then at the first solution, so every group counts by its noise and
the regularisation weight is dimensionless: ``reg`` is the weight of
``sum_k ((pi_k - pi_cad_k) / s_k)^2`` against the mean normalised squared residual of one
sample (``s_k`` from :meth:`StandardSet.scales`). Default ``DEFAULT_REG``.
"""

from __future__ import annotations

import time
from typing import Optional, Tuple

import numpy as np

from legid_ros.core.identification.identifiability import DEFAULT_MAX_COND, excitation
from legid_ros.core.identification.rows.linear import (Normal, Rows, group_rms,
                                                        group_weights)
from legid_ros.core.identification.parameters.sets import StandardSet
from legid_ros.core.identification.solvers.qp import ParameterQP
from legid_ros.core.identification.result import IdentResult
from legid_ros.core.inertial import check_consistency
from legid_ros.core.robot import Robot

DEFAULT_REG = 1e-2
REL_FLOOR = 1e-6  # [-] least group RMS for the WLS weights, of the largest group's


def standard_bounds(param: StandardSet, mass_lo: float = 0.2, mass_hi: float = 3.0
                    ) -> Tuple[np.ndarray, np.ndarray]:
    """Bounds on the standard set: each mass in [mass_lo, mass_hi] x CAD, others free."""
    lb = np.full(param.size, -np.inf)
    ub = np.full(param.size, np.inf)
    m = param.pi_cad[::10]
    lb[::10] = mass_lo * m
    ub[::10] = mass_hi * m + 0.1
    return lb, ub


def solve_standard(rows: Rows, robot: Robot, method: str, total_mass: float,
                   pi_cad: Optional[np.ndarray] = None, reg: float = DEFAULT_REG,
                   bounds=None, wls: bool = True, max_cond: float = DEFAULT_MAX_COND,
                   check: bool = True) -> IdentResult:
    """Identify the standard parameters from linear rows (see the module docstring).

    Args:
        rows: Rows from :func:`legid_ros.core.identification.rows.linear.build_rows`.
        robot: Robot.
        method: Name stored in the result.
        total_mass: Total-mass equality [kg].
        pi_cad: Prior (default: the model's parameters).
        reg: Regularisation weight toward CAD (dimensionless, see the module docstring).
        bounds: ``(lb, ub)`` (default :func:`standard_bounds`).
        wls: Second pass with per-group weights from the first solution.
        max_cond: Excitation threshold (:mod:`legid_ros.core.identification.identifiability`).
        check: Run the excitation check (raises NotIdentifiableError).
    """
    t0 = time.perf_counter()
    param = StandardSet(robot, pi_cad)
    npi = param.size
    lb, ub = bounds if bounds is not None else standard_bounds(param)
    qp = ParameterQP(param.cad(), param.scales(), lb, ub, param.mass_row(), total_mass, reg,
                     names=param.names)
    x = np.concatenate([param.cad(), np.zeros(rows.nf)])
    if rows.nf:
        normal = Normal(rows.A.shape[1])
        normal.fold(rows.A, rows.b, rows.n_samples)
        x[npi:] = normal.eliminate(npi)[2](param.cad())
    iters = 0
    report = None
    for _ in range(2 if wls else 1):
        w = group_weights(rows, x, rel_floor=REL_FLOOR)
        normal = Normal(rows.A.shape[1])
        normal.fold(rows.A, rows.b, rows.n_samples, weights=w)
        hs, gs, recover = normal.eliminate(npi)
        if report is None and check:
            report = excitation(robot, hs, rows.n_samples, param.cad(), max_cond=max_cond)
        sol = qp.solve(hs, gs, rows.n_samples, warm=x[:npi])
        iters += sol.iterations
        fr = recover(sol.x)
        x = np.concatenate([sol.x, fr if fr is not None else []])
    pi = x[:npi]
    r = rows.A @ x - rows.b
    rms = float(np.sqrt(np.mean(r ** 2)))
    sigma = float(np.sqrt(np.mean(w * r ** 2)))
    rep = excitation(robot, hs, rows.n_samples, pi, sigma_res=sigma, raise_error=False)
    return IdentResult(
        method=method, pi=pi, x=pi, names=param.names, param_names=param.names,
        total_mass=total_mass, condition_number=rep.condition_number, residual_rms=rms,
        solve_time_s=time.perf_counter() - t0, iterations=iters,
        consistency=check_consistency(pi, param.link_names), identifiable=rep.lines,
        friction=x[npi:] if rows.nf else None, n_samples=rows.n_samples,
        info={'rows': rows.kind, 'reg': reg, 'status': sol.status, 'converged': True,
              'group_rms': group_rms(rows, x).tolist()})


def solve_base(rows: Rows, robot: Robot, method: str, total_mass: float,
               pi_cad: Optional[np.ndarray] = None, tol: float = 1e-8) -> IdentResult:
    """Plain weighted LS on the base parameters, standard parameters back with the CAD prior.

    Columns (standard parameters and friction, scaled) are reduced to the base parameters by QR
    with column pivoting (:mod:`legid_ros.core.identification.parameters.base`); the base
    parameters are the unconstrained LS solution (rows weighted by their group's RMS at CAD); the
    standard parameters are the ones closest to CAD (scaled norm) that reproduce them. No mass
    equality, no bounds, no regularisation: the classic baseline, not necessarily physically
    consistent.
    """
    from legid_ros.core.errors import BadInputError
    from legid_ros.core.identification.parameters.base import base_parameters

    if not np.any(rows.b):
        raise BadInputError(f'{rows.kind} rows are homogeneous (b = 0): plain LS on base '
                            'parameters needs a right-hand side; use the QP (mass equality)')
    t0 = time.perf_counter()
    param = StandardSet(robot, pi_cad)
    npi = param.size
    scales = np.concatenate([param.scales(), np.ones(rows.nf)])
    names = param.names + [f'friction{k}' for k in range(rows.nf)]
    prior = np.concatenate([param.cad(), np.zeros(rows.nf)])
    w = np.sqrt(group_weights(rows, prior, rel_floor=REL_FLOOR))
    aw, bw = rows.A * w[:, None], rows.b * w
    bp = base_parameters(aw, names, scales, tol)
    beta, *_ = np.linalg.lstsq(bp.regressor(aw), bw, rcond=None)
    x = bp.to_standard(beta, prior, scales)
    pi = x[:npi]
    r = rows.A @ x - rows.b
    normal = Normal(rows.A.shape[1])
    normal.fold(rows.A, rows.b, rows.n_samples, weights=w ** 2)
    hs = normal.eliminate(npi)[0]
    rep = excitation(robot, hs, rows.n_samples, pi, sigma_res=float(np.sqrt(np.mean(
        (w * r) ** 2))), raise_error=False)
    return IdentResult(
        method=method, pi=pi, x=beta, names=bp.names, param_names=param.names,
        total_mass=float(np.sum(pi[::10])), condition_number=rep.condition_number,
        residual_rms=float(np.sqrt(np.mean(r ** 2))), solve_time_s=time.perf_counter() - t0,
        iterations=1, consistency=check_consistency(pi, param.link_names),
        identifiable=[f'{bp.rank} base parameters'] + rep.lines,
        friction=x[npi:] if rows.nf else None, n_samples=rows.n_samples,
        info={'rows': rows.kind, 'base_rank': bp.rank, 'total_mass_requested': total_mass})
