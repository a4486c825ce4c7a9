"""Gradient-projection baseline (Chen et al. 2021): ``thd = J+ Xd + k (I - J+ J) grad(phi)``.

``J+ = J^T (J J^T + lambda^2 I)^-1`` with the damping switched on near singularities
(manipulability ``w = sqrt(det J J^T)`` below ``w0``: ``lambda^2 = lambda_max^2 (1 - (w/w0)^2)``).
The paper's objective is a simple hip-joint function, ``phi = (th2 - th20)^2 / 2``, with
``k = -1``. Integration is explicit Euler without position correction unless ``kp > 0``, as in
the paper, so joint angles drift over many cycles.
"""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from legid_ros.core.ik.ejm import DifferentialResult
from legid_ros.core.ik.leg import LegGeometry, planar_fk, planar_jacobian


def damped_pinv(jac: np.ndarray, w0: float = 1e-3, lambda_max: float = 1e-2) -> np.ndarray:
    """Damped right pseudo-inverse of (..., 2, 3) Jacobians, shape (..., 3, 2).

    Args:
        jac: Jacobians.
        w0: Manipulability below which damping starts [m^2].
        lambda_max: Damping at a singularity [m].
    """
    jjt = jac @ np.swapaxes(jac, -1, -2)
    w = np.sqrt(np.maximum(np.linalg.det(jjt), 0.0))
    lam2 = np.where(w < w0, lambda_max ** 2 * (1.0 - (w / w0) ** 2), 0.0)
    eye = np.eye(jac.shape[-2])
    inv = np.linalg.inv(jjt + lam2[..., None, None] * eye)
    return np.swapaxes(jac, -1, -2) @ inv


def hip_objective_gradient(th20: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Gradient of ``phi = (th2 - th20)^2 / 2`` (the paper's hip-joint objective)."""
    th20 = np.asarray(th20, float)

    def grad(th: np.ndarray) -> np.ndarray:
        g = np.zeros_like(th)
        g[..., 0] = th[..., 0] - th20
        return g

    return grad


def solve_gpm(geo: LegGeometry, times: np.ndarray, xz: np.ndarray, xz_dot: np.ndarray,
              th0: np.ndarray, k: float = -1.0,
              grad: Optional[Callable[[np.ndarray], np.ndarray]] = None, kp: float = 0.0,
              w0: float = 1e-3, lambda_max: float = 1e-2) -> DifferentialResult:
    """Integrate the gradient-projection IK along a foot trajectory.

    Args:
        geo: Leg geometry.
        times: Sample times, shape (N,) [s].
        xz: Planar foot targets (N, ..., 2) [m] (for the error and optional correction).
        xz_dot: Foot velocities (N, ..., 2) [m/s].
        th0: Initial joints (..., 3) [rad].
        k: Self-motion gain (Chen et al. 2021 use -1).
        grad: Gradient of the objective; the hip objective around th0's th2 if None.
        kp: Position-correction gain [1/s]; 0 (the paper's form) by default.
        w0: Manipulability threshold of the damping [m^2].
        lambda_max: Damping at a singularity [m].

    Returns:
        A :class:`DifferentialResult` (det_je holds the manipulability sqrt(det J J^T)).
    """
    times = np.asarray(times, float)
    xz, xz_dot = np.asarray(xz, float), np.asarray(xz_dot, float)
    th0 = np.asarray(th0, float)
    grad = grad or hip_objective_gradient(th0[..., 0])
    n = times.size
    th = np.empty(xz.shape[:-1] + (3,))
    th[0] = th0
    man = np.empty(xz.shape[:-1])
    err = np.empty(xz.shape[:-1])
    eye = np.eye(3)
    for i in range(n):
        jac = planar_jacobian(th[i], geo)
        e_x = xz[i] - planar_fk(th[i], geo)
        err[i] = np.linalg.norm(e_x, axis=-1)
        man[i] = np.sqrt(np.maximum(np.linalg.det(jac @ np.swapaxes(jac, -1, -2)), 0.0))
        if i == n - 1:
            break
        jp = damped_pinv(jac, w0, lambda_max)
        xd = xz_dot[i] + kp * e_x
        null = (eye - jp @ jac) @ grad(th[i])[..., None]
        thd = (jp @ xd[..., None])[..., 0] + k * null[..., 0]
        th[i + 1] = th[i] + (times[i + 1] - times[i]) * thd
    return DifferentialResult(th=th, det_je=man, foot_err=err)
