"""Model ZMP from the whole-body wrench regressor, with derivatives in the parameters.

The model ZMP of the ZMP-feedback identification of Wu & Gao 2021. With ``W`` the world wrench
regressor of a sample (:func:`legid_ros.core.identification.rows.regressors.compute_regressors`),
the ground-on-robot wrench is ``W pi = [f, n]`` about the world origin, and the ZMP on the ground
``z = 0`` is::

    x = -(W_ny pi) / (W_fz pi),    y = (W_nx pi) / (W_fz pi)

This is the full rigid-body form (each link's ``I w' + w x I w`` is inside ``W``). The
paper's point-mass form (eqs. 5-8) is the same expression evaluated at
:func:`legid_ros.core.identification.parameters.sets.point_mass_parameters` (zero inertia
about every COM).

For ``x = -u / w`` with ``u = a.pi``, ``w = b.pi``: ``grad = -(a + x b) / w`` and
``Hess = -(b grad^T + grad b^T) / w`` (exact; checked against finite differences in the tests).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from legid_ros.core.errors import BadInputError
from legid_ros.core.identification.parameters.sets import point_mass_parameters
from legid_ros.core.robot import Robot

FZ, NX, NY = 2, 3, 4


def model_zmp(wrench: np.ndarray, pi: np.ndarray, form: str = 'rigid'
              ) -> Tuple[np.ndarray, np.ndarray]:
    """Model ZMP of N samples.

    Args:
        wrench: World wrench regressors (N, 6, P).
        pi: Standard parameters (P,).
        form: 'rigid' (full) or 'point_mass' (Wu & Gao's eq. 8).

    Returns:
        ZMP (N, 2) [m] and vertical contact force (N,) [N].
    """
    if form == 'point_mass':
        pi = point_mass_parameters(pi)
    elif form != 'rigid':
        raise BadInputError(f'unknown ZMP form {form!r} (rigid, point_mass)')
    w = wrench @ pi
    fz = w[:, FZ]
    return np.column_stack([-w[:, NY] / fz, w[:, NX] / fz]), fz


def model_zmp_from_state(robot: Robot, q: np.ndarray, v: np.ndarray, a: np.ndarray,
                         pi: Optional[np.ndarray] = None) -> np.ndarray:
    """Model ZMP [m] of one floating-base state by pinocchio's RNEA (parameters in the model).

    Args:
        robot: Floating-base robot; ``pi`` (if given) replaces its inertials temporarily.
        q, v, a: Configuration, velocity, acceleration of the floating-base model.
    """
    from legid_ros.core.inertial import get_parameters, set_parameters
    from legid_ros.core.identification.rows.regressors import base_to_world

    model = robot.model
    saved = None
    if pi is not None:
        saved = get_parameters(model)
        set_parameters(model, pi)
    try:
        tau = pin.rnea(model, model.createData(), q, v, a)
    finally:
        if saved is not None:
            set_parameters(model, saved)
    w = base_to_world(q) @ tau[:6]
    return np.array([-w[NY] / w[FZ], w[NX] / w[FZ]])


def zmp_derivatives(wrench: np.ndarray, pi: np.ndarray, hessian: bool = True):
    """Per-sample model ZMP, gradient and Hessian with respect to ``pi`` (rigid form).

    Args:
        wrench: (N, 6, P) regressors.
        pi: (P,) parameters.
        hessian: Also return the (N, 2, P, P) Hessians (memory: keep N small).

    Returns:
        ``(zmp (N, 2), grad (N, 2, P)[, hess (N, 2, P, P)])``.
    """
    b = wrench[:, FZ]
    a_x = -wrench[:, NY]  # x = a_x.pi / b.pi
    a_y = wrench[:, NX]
    w = b @ pi
    out_z = np.zeros((len(w), 2))
    grads = np.zeros((len(w), 2, pi.size))
    hess = np.zeros((len(w), 2, pi.size, pi.size)) if hessian else None
    for i, a in enumerate((a_x, a_y)):
        z = (a @ pi) / w
        g = (a - z[:, None] * b) / w[:, None]
        out_z[:, i] = z
        grads[:, i] = g
        if hessian:
            hess[:, i] = -(b[:, :, None] * g[:, None, :] + g[:, :, None] * b[:, None, :]) \
                / w[:, None, None]
    return (out_z, grads, hess) if hessian else (out_z, grads)


@dataclass
class ZmpObjectiveValue:
    """Value of Wu & Gao's cost ``e = sum_j w_j |p_model_j - p_meas_j|^2`` [m^2].

    Attributes:
        e: Cost [m^2] (plus regularisation).
        grad: Gradient in the parameterisation's ``x``.
        hess: Full Newton Hessian in ``x``.
        rms: RMS ZMP residual [m] (without regularisation).
        gauss_newton: Gauss-Newton part of the Hessian (positive semi-definite), if computed.
    """

    e: float
    grad: np.ndarray
    hess: np.ndarray
    rms: float
    gauss_newton: Optional[np.ndarray] = None


class ZmpObjective:
    """Wu & Gao's eq. (9) in a parameterisation, with optional regularisation toward CAD.

    ``e(x) = sum_j w_j [(x'_j - x_j)^2 + (y'_j - y_j)^2]
    + N reg sum_k ((x_k - x_cad_k) / s_k)^2`` with ``s`` the parameterisation's scales and the
    weights normalised to mean 1: the paper's sum (so its step sizes and stop rule apply), and
    ``reg`` [m^2] weighs the prior against the *mean* squared ZMP error, independent of N.

    Args:
        wrench: (N, 6, P) world wrench regressors.
        zmp: Measured ZMP (N, 2) [m].
        param: Parameterisation (:mod:`legid_ros.core.identification.parameters.sets`).
        weights: Per-sample weights (N,), default ones.
        reg: Regularisation weight [m^2] (0 = none).
    """

    def __init__(self, wrench: np.ndarray, zmp: np.ndarray, param, weights=None,
                 reg: float = 0.0):
        self.wrench = wrench
        self.zmp = np.asarray(zmp, float)
        self.param = param
        n = len(self.zmp)
        self.weights = np.ones(n) if weights is None else np.asarray(weights, float)
        self.weights = self.weights / self.weights.mean()
        self.reg = reg
        self.x_cad = param.cad()
        self.scales = param.scales()
        self._b = np.ascontiguousarray(wrench[:, FZ])
        self._a = (np.ascontiguousarray(-wrench[:, NY]), np.ascontiguousarray(wrench[:, NX]))
        self._split = None  # (rows that move with x, [b; a_x; a_y] on them, the rest's sum)

    def _moving(self, pi: np.ndarray):
        """``(rows, M, const)``: the standard parameters the set can move (those whose
        Jacobian is nonzero at CAD or at two random points: every other entry of ``pi(x)`` is
        a constant), ``M = [b; a_x; a_y][:, rows]`` (3N, k) and ``const`` its rest times the
        constant entries. Built once: each evaluation then reads the N x k columns only
        (the products are memory-bound; a grouped set moves under half of the 130)."""
        if self._split is None:
            rng = np.random.default_rng(0)
            x0, s = self.param.cad(), self.scales
            moved = np.zeros(pi.size, bool)
            for x in (x0, x0 + 0.1 * s * rng.standard_normal(x0.size),
                      x0 + 0.1 * s * rng.standard_normal(x0.size)):
                moved |= np.any(self.param.jacobian(x) != 0.0, axis=1)
            rows = np.flatnonzero(moved)
            fixed = np.flatnonzero(~moved)
            stacked = (self._b, self._a[0], self._a[1])
            m = np.ascontiguousarray(np.concatenate([x[:, rows] for x in stacked]))
            const = np.concatenate([x[:, fixed] @ pi[fixed] for x in stacked])
            self._split = (rows, m, const, fixed, pi[fixed].copy())
        rows, m, const, fixed, held = self._split
        if not np.array_equal(pi[fixed], held):  # never for a set map: its rest is constant
            raise BadInputError('parameter set moved a standard parameter its Jacobian '
                                'says is constant')
        return rows, m, const

    def __call__(self, x: np.ndarray, derivatives: bool = True) -> ZmpObjectiveValue:
        """Cost, gradient and Hessian at ``x`` (products are formed in ``x`` space)."""
        x = np.asarray(x, float)
        pi = self.param.to_standard(x)
        rows, m, const = self._moving(pi)
        n = self._b.shape[0]
        prod = m @ pi[rows] + const  # [b.pi; a_x.pi; a_y.pi]
        w = prod[:n]
        wt = self.weights  # sum form (paper eq. 9): weights have mean 1
        e = 0.0
        if derivatives:
            jac = self.param.jacobian(x)
            pj = m @ jac[rows]  # (3N, size): d [b.pi; a_x.pi; a_y.pi] / dx
            bj = pj[:n]
            coef = np.zeros(3 * n)  # d e / d [b.pi; a_x.pi; a_y.pi]
            hess = np.zeros((x.size, x.size))
            gn = np.zeros((x.size, x.size))
        for i in range(2):
            z = prod[(i + 1) * n:(i + 2) * n] / w
            r = z - self.zmp[:, i]
            e += float(wt @ r ** 2)
            if derivatives:
                aj = pj[(i + 1) * n:(i + 2) * n]
                gj = (aj - z[:, None] * bj) / w[:, None]  # d z / d x
                wr = wt * r
                coef[(i + 1) * n:(i + 2) * n] = 2.0 * wr / w
                coef[:n] -= 2.0 * wr * z / w
                gn += 2.0 * gj.T @ (gj * wt[:, None])
                mm = (bj * (wr / w)[:, None]).T @ gj
                hess -= 2.0 * (mm + mm.T)
        rms = float(np.sqrt(e / n))
        d = (x - self.x_cad) / self.scales
        e_tot = e + n * self.reg * float(d @ d)
        if not derivatives:
            return ZmpObjectiveValue(e_tot, None, None, rms)
        g_pi = np.zeros(pi.size)  # d e / d pi: zero on the entries the set cannot move
        g_pi[rows] = m.T @ coef
        grad = jac.T @ g_pi + 2.0 * n * self.reg * d / self.scales
        gn += np.diag(2.0 * n * self.reg / self.scales ** 2)
        hess += gn
        if not self.param.linear:
            hess += self.param.curvature(x, g_pi)
        return ZmpObjectiveValue(e_tot, grad, 0.5 * (hess + hess.T), rms, 0.5 * (gn + gn.T))
