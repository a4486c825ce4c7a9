"""Robust three-loop identification with the exponential-viscous friction law (Zhu & Zhang).

Runs on the fixed-base geared leg (:mod:`legid_ros.core.identification.fixed_base`); every
solve is the leg SDP of :mod:`legid_ros.core.identification.solvers.sdp`, and the final
unconstrained WLS state feeds the F-test of :mod:`legid_ros.core.identification.identifiability`.

- inner loop: estimate the ``nj x nj`` joint-noise covariance from the residuals, whiten
  every sample with it, solve the consistent LS (SDP), repeat until the covariance settles;
- middle loop: Talwar hard weights, a sample whose whitened residual reaches
  ``phi = 2.795`` (in units of its standard deviation) on any joint gets weight 0 and stays
  rejected; repeat the inner loop until no new sample is rejected;
- outer loop: refit the friction exponent ``delta`` of every joint (bounded scalar nonlinear
  LS with the linear friction parameters solved inside), rebuild the regressor, repeat.

``whiten=False, talwar=False`` gives the plain LS baseline with the same model and outer loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
from scipy.optimize import minimize_scalar

from legid_ros.core.errors import BadInputError, SolverError
from legid_ros.core.friction.models import ExponentialViscous, JointFriction
from legid_ros.core.identification.fixed_base import LegContext, _result, consistent_fit
from legid_ros.core.identification.rows.drive import friction_columns
from legid_ros.core.identification.solvers.least_squares import solve_ls

TALWAR_PHI = 2.795


@dataclass
class RobustSettings:
    """Loop settings.

    Attributes:
        phi: Talwar threshold on the normalised residual.
        whiten: Use the estimated joint-noise covariance (inner loop).
        talwar: Reject outliers (middle loop).
        refit_delta: Refit the friction exponent (outer loop).
        delta0: Initial exponent per joint.
        delta_bounds: Search interval of the exponent.
        max_inner, max_middle, max_outer: Iteration caps.
        tol: Relative tolerance of the covariance / exponent changes.
        k_v: Gain of the continuous sign [s/rad].
    """

    phi: float = TALWAR_PHI
    whiten: bool = True
    talwar: bool = True
    refit_delta: bool = True
    delta0: float = 1.0
    delta_bounds: Sequence[float] = (0.2, 3.0)
    max_inner: int = 5
    max_middle: int = 8
    max_outer: int = 4
    tol: float = 1e-3
    k_v: float = 200.0


@dataclass
class RobustState:
    """Final internal state, used by the F-test and diagnostics.

    Attributes:
        a: Whitened regressor of kept samples ``[base | friction]``, (M, b).
        y: Whitened torques of kept samples, (M,).
        x: Unconstrained WLS solution on ``(a, y)``.
        names: Parameter names (base then friction).
        kept: Per-sample keep mask, (N,).
        sigma: Joint-noise covariance [N.m^2].
    """

    a: np.ndarray
    y: np.ndarray
    x: np.ndarray
    names: list
    kept: np.ndarray
    sigma: np.ndarray


def _whiten(rows: np.ndarray, sigma: np.ndarray, nj: int) -> np.ndarray:
    """Apply ``L^-1`` (``sigma = L L^T``) to each sample's ``nj`` rows."""
    lmat = np.linalg.cholesky(sigma)
    linv = np.linalg.inv(lmat)
    shaped = rows.reshape(-1, nj, *rows.shape[1:])
    return np.einsum('ij,nj...->ni...', linv, shaped).reshape(rows.shape)


def _refit_delta(models, qd, target, keep, bounds):
    """Per joint: exponent minimising the friction residual of ``target`` on kept samples."""
    for j, m in enumerate(models):
        v, y = qd[keep, j], target[keep, j]

        def cost(d, m=m, v=v, y=y):
            m.delta = float(d)
            phi = m.regressor(v)
            th = solve_ls(phi, y)
            return float(np.sum((phi @ th - y) ** 2))
        res = minimize_scalar(cost, bounds=tuple(bounds), method='bounded',
                              options={'xatol': 1e-4})
        if not res.success:
            raise SolverError(f'exponent refit of joint {j} did not converge: {res.message}',
                              status=str(res.status), iterations=int(res.nfev),
                              last_state=float(res.x))
        m.delta = float(res.x)


def robust_identify(ctx: LegContext, q, qd, qdd, tau,
                    settings: Optional[RobustSettings] = None):
    """Three-loop robust identification.

    Args:
        ctx: Leg context.
        q, qd, qdd: Filtered states, (N, nj).
        tau: Unfiltered measured torques, (N, nj) [N.m].
        settings: Loop settings (default: the full robust method).

    Returns:
        ``(LegIdentResult, RobustState)``.
    """
    s = settings or RobustSettings()
    q, qd, qdd, tau = (np.asarray(a, float) for a in (q, qd, qdd, tau))
    n, nj = tau.shape
    if n < 50:
        raise BadInputError(f'{n} samples are too few for robust identification')
    models = [ExponentialViscous(delta=s.delta0, k_v=s.k_v) for _ in range(nj)]
    a_b = ctx.base_regressor(q, qd, qdd)
    b = tau.reshape(-1)
    keep = np.ones(n, bool)
    sigma = np.eye(nj)
    loops = {'outer': 0, 'middle': 0, 'inner': 0}
    for _ in range(s.max_outer):
        loops['outer'] += 1
        phi = friction_columns(models, qd)
        a_full = np.hstack([a_b, phi])
        for _ in range(s.max_middle):
            loops['middle'] += 1
            for _ in range(s.max_inner):
                loops['inner'] += 1
                aw, bw = (_whiten(a_full, sigma, nj), _whiten(b, sigma, nj)) if s.whiten \
                    else (a_full, b)
                rows = np.repeat(keep, nj)
                theta, extra, status = consistent_fit(ctx, aw[rows][:, :a_b.shape[1]],
                                                      bw[rows], aw[rows][:, a_b.shape[1]:])
                x = np.r_[ctx.base.B @ theta, extra]
                resid = (b - a_full @ x).reshape(n, nj)
                if not s.whiten:
                    break
                new = np.cov(resid[keep].T) + 1e-12 * np.eye(nj)
                change = np.linalg.norm(new - sigma) / np.linalg.norm(new)
                sigma = new
                if change < s.tol:
                    break
            if not s.talwar:
                break
            e = (_whiten(resid.reshape(-1), sigma, nj) if s.whiten else resid.reshape(-1))
            e = e.reshape(n, nj)
            scale = e[keep].std(axis=0)
            new_rej = keep & np.any(np.abs(e) >= s.phi * scale, axis=1)
            if not np.any(new_rej):
                break
            keep &= ~new_rej
        if not s.refit_delta:
            break
        old = np.array([m.delta for m in models])
        target = tau - (a_b @ (ctx.base.B @ theta)).reshape(n, nj)
        _refit_delta(models, qd, target, keep, s.delta_bounds)
        if np.max(np.abs(np.array([m.delta for m in models]) - old)) < s.tol:
            break
    col = 0
    for m in models:
        m.set_params(extra[col:col + 3])
        col += 3
    phi = friction_columns(models, qd)
    a_full = np.hstack([a_b, phi])
    aw, bw = (_whiten(a_full, sigma, nj), _whiten(b, sigma, nj)) if s.whiten else (a_full, b)
    rows = np.repeat(keep, nj)
    x_ls = solve_ls(aw[rows], bw[rows])
    names = list(ctx.base.names) + [f'{j}.{p}' for j in ctx.drive.joint_names
                                     for p in ExponentialViscous.names]
    state = RobustState(aw[rows], bw[rows], x_ls, names, keep, sigma)
    method = 'robust' if (s.whiten or s.talwar) else 'plain_ls'
    meta = {'solver': status, 'rejected_samples': int(n - keep.sum()), 'samples': int(n),
            'delta': [float(m.delta) for m in models], 'loops': dict(loops),
            'residual_rms_nm': float(np.sqrt(np.mean(resid[keep] ** 2)))}
    return _result(ctx, method, theta, JointFriction(list(ctx.drive.joint_names), models),
                   meta), state
