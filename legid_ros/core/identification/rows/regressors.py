"""Regressors linear in the standard inertial parameters, and the floating-base state.

All dynamics come from pinocchio (``computeJointTorqueRegressor``, frame Jacobians and
accelerations). The floating base is the root free flyer; pinocchio's base twist and
acceleration are expressed in the base frame.

- :func:`support_base_state`: base pose, twist and acceleration from the joint states with the
  support sole flat on the ground and not slipping (optionally roll/pitch from the IMU).
- :func:`compute_regressors`: per sample, the whole-body contact wrench regressor in the world
  (``W pi = [f, n]`` of the ground on the robot, about the world origin), the joint-torque
  regressor with the support foot as the fixed base, and the full floating-base regressor.
- :func:`zmp_rows`: the linear ZMP rows (our rebuild of the ZMP-feedback identification of
  Wu & Gao 2021).
- :func:`coulomb_viscous_columns`: the joints' viscous and smoothed Coulomb friction columns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Sequence

import numpy as np
import pinocchio as pin

from legid_ros.core.errors import BadInputError
from legid_ros.core.friction.models import V_COULOMB, smooth_sign
from legid_ros.core.robot import Robot


def _quat_to_rot(quat_xyzw: np.ndarray) -> np.ndarray:
    x, y, z, w = quat_xyzw / np.linalg.norm(quat_xyzw)
    return pin.Quaternion(w, x, y, z).toRotationMatrix()


def _support_list(support, n: int) -> np.ndarray:
    if isinstance(support, str):
        return np.array([support] * n, dtype=object)
    sup = np.asarray(support, dtype=object)
    if sup.shape != (n,):
        raise BadInputError(f'support has shape {sup.shape}, expected ({n},)')
    return sup


def support_base_state(robot: Robot, q_j: np.ndarray, qd_j: np.ndarray, qdd_j: np.ndarray,
                       support='right', imu_quat: Optional[np.ndarray] = None
                       ) -> Dict[str, np.ndarray]:
    """Floating-base configuration, velocity and acceleration from the support foot.

    The support sole frame is at the world origin, flat (z up, its yaw = world yaw) and still:
    its spatial velocity and acceleration are zero, which fixes the base twist and
    acceleration through the sole's frame Jacobian. With ``imu_quat`` the base roll and pitch
    come from the IMU instead (yaw still from the kinematics) and the base is placed so the
    sole centre stays at the origin: the soft contact tilts the sole by ~1 mrad, which the
    flat-sole model of Wu & Gao 2021 ignores. In double support pass either foot.

    Args:
        robot: Floating-base robot.
        q_j, qd_j, qdd_j: Joint positions, velocities, accelerations, (N, nj) [rad, /s, /s^2].
        support: Support foot name per sample, (N,), or one name for all.
        imu_quat: IMU orientation in the world ``[x, y, z, w]``, (N, 4), or None.

    Returns:
        ``{'q': (N, nq), 'v': (N, nv), 'a': (N, nv)}`` in pinocchio's conventions.
    """
    model = robot.model
    if not robot.floating:
        raise BadInputError('support_base_state needs a floating-base robot')
    q_j = np.atleast_2d(np.asarray(q_j, float))
    n, nj = q_j.shape
    if nj != model.nv - 6:
        raise BadInputError(f'{nj} joint columns, the model has {model.nv - 6} joints')
    sup = _support_list(support, n)
    data = model.createData()
    fids = {name: robot.frame_id(f.sole_frame) for name, f in robot.feet.items()}
    imu_fid = robot.frame_id(robot.imu_frame) if imu_quat is not None else None
    r_bi = None
    out_q = np.zeros((n, model.nq))
    out_v = np.zeros((n, model.nv))
    out_a = np.zeros((n, model.nv))
    q = pin.neutral(model)
    v = np.zeros(model.nv)
    a = np.zeros(model.nv)
    for k in range(n):
        try:
            fid = fids[sup[k]]
        except KeyError:
            raise BadInputError(f'unknown support foot {sup[k]!r}; feet: {list(fids)}')
        q[:7] = [0, 0, 0, 0, 0, 0, 1]
        q[7:] = q_j[k]
        pin.framesForwardKinematics(model, data, q)
        t_bs = data.oMf[fid].copy()
        t_wb = t_bs.inverse()
        if imu_fid is not None:
            if r_bi is None:
                r_bi = data.oMf[imu_fid].rotation.copy()
            r_imu = _quat_to_rot(np.asarray(imu_quat[k], float)) @ r_bi.T
            rpy_imu = pin.rpy.matrixToRpy(r_imu)
            rpy_kin = pin.rpy.matrixToRpy(t_wb.rotation)
            rot = pin.rpy.rpyToMatrix(rpy_imu[0], rpy_imu[1], rpy_kin[2])
            t_wb = pin.SE3(rot, -rot @ t_bs.translation)
        q[:3] = t_wb.translation
        q[3:7] = pin.Quaternion(t_wb.rotation).coeffs()
        jac = pin.computeFrameJacobian(model, data, q, fid, pin.LOCAL)
        jb = jac[:, :6]
        v[6:] = qd_j[k]
        v[:6] = -np.linalg.solve(jb, jac[:, 6:] @ qd_j[k])
        a[:6] = 0.0
        a[6:] = qdd_j[k]
        pin.forwardKinematics(model, data, q, v, a)
        acc = pin.getFrameAcceleration(model, data, fid, pin.LOCAL).vector
        a[:6] = -np.linalg.solve(jb, acc)
        out_q[k], out_v[k], out_a[k] = q, v, a
    return {'q': out_q, 'v': out_v, 'a': out_a}


def base_to_world(q_base: np.ndarray) -> np.ndarray:
    """6x6 map of a wrench ``[f, n]`` in base axes at the base origin to world axes at origin."""
    rot = _quat_to_rot(q_base[3:7])
    p = q_base[:3]
    x = np.zeros((6, 6))
    x[:3, :3] = rot
    x[3:, 3:] = rot
    x[3:, :3] = pin.skew(p) @ rot
    return x


def coulomb_viscous_columns(qd: np.ndarray, v_coulomb: float = V_COULOMB) -> np.ndarray:
    """Per joint viscous and (smoothed) Coulomb regressor ``[diag(qd), diag(tanh(qd/vc))]``.

    Args:
        qd: Joint velocities, (nj,) [rad/s].

    Returns:
        (nj, 2 nj): friction torque ``tau_f = F [fv; fc]`` [N.m].
    """
    nj = qd.size
    out = np.zeros((nj, 2 * nj))
    out[np.arange(nj), np.arange(nj)] = qd
    out[np.arange(nj), nj + np.arange(nj)] = smooth_sign(qd, v_scale=v_coulomb)
    return out


@dataclass
class Regressors:
    """Stacked regressors of N samples (P standard parameters, nj joints).

    Attributes:
        wrench: Whole-body ground-on-robot wrench in the world about the origin,
            ``W pi = [fx, fy, fz, nx, ny, nz]``, (N, 6, P).
        torque: Joint torques with the support foot as the fixed base, ``tau = T pi``,
            (N, nj, P); NaN for double-support samples (contact not determined).
        floating: Full floating-base regressor ``Y`` (N, nv, P) and the matching right-hand
            side ``S^T tau + J_ft^T f_ft`` in ``floating_rhs`` (N, nv), if F/T data was given.
    """

    wrench: np.ndarray
    torque: Optional[np.ndarray] = None
    floating: Optional[np.ndarray] = None
    floating_rhs: Optional[np.ndarray] = None


def compute_regressors(robot: Robot, q: np.ndarray, v: np.ndarray, a: np.ndarray,
                       support=None, kinds: Sequence[str] = ('wrench',),
                       tau: Optional[np.ndarray] = None,
                       foot_wrench: Optional[Dict[str, np.ndarray]] = None,
                       double_support: Optional[np.ndarray] = None) -> Regressors:
    """Regressors of N floating-base samples.

    Args:
        robot: Floating-base robot.
        q, v, a: Full configuration, velocity and acceleration, (N, nq), (N, nv), (N, nv).
        support: Support foot per sample (for 'torque'), or one name.
        kinds: Any of 'wrench', 'torque', 'floating'.
        tau: Measured joint efforts (N, nj) (for 'floating').
        foot_wrench: Per foot, ground-on-foot wrench in its F/T frame (N, 6) (for 'floating').
        double_support: Boolean (N,) marking double-support samples (torque rows are NaN).

    Returns:
        :class:`Regressors`.
    """
    model = robot.model
    data = model.createData()
    n = q.shape[0]
    npar = 10 * (model.njoints - 1)
    nj = model.nv - 6
    kinds = set(kinds)
    wrench = np.zeros((n, 6, npar))
    torque = np.full((n, nj, npar), np.nan) if 'torque' in kinds else None
    floating = np.zeros((n, model.nv, npar)) if 'floating' in kinds else None
    rhs = np.zeros((n, model.nv)) if 'floating' in kinds else None
    if 'torque' in kinds:
        sup = _support_list(support if support is not None else 'right', n)
        sole = {name: robot.frame_id(f.sole_frame) for name, f in robot.feet.items()}
    if 'floating' in kinds:
        if tau is None or foot_wrench is None:
            raise BadInputError('floating-base rows need joint efforts and foot wrenches')
        ft = {name: robot.frame_id(robot.feet[name].ft_frame) for name in foot_wrench}
    ds = np.zeros(n, bool) if double_support is None else np.asarray(double_support, bool)
    for k in range(n):
        y = pin.computeJointTorqueRegressor(model, data, q[k], v[k], a[k])
        wrench[k] = base_to_world(q[k]) @ y[:6]
        if torque is not None and not ds[k]:
            jac = pin.computeFrameJacobian(model, data, q[k], sole[sup[k]], pin.LOCAL)
            lam = np.linalg.solve(jac[:, :6].T, y[:6])
            torque[k] = y[6:] - jac[:, 6:].T @ lam
        if floating is not None:
            floating[k] = y
            b = np.zeros(model.nv)
            b[6:] = tau[k]
            for name, fid in ft.items():
                w = foot_wrench[name][k]
                if np.any(w):
                    jac = pin.computeFrameJacobian(model, data, q[k], fid, pin.LOCAL)
                    b += jac.T @ w
            rhs[k] = b
    return Regressors(wrench=wrench, torque=torque, floating=floating, floating_rhs=rhs)


def zmp_rows(wrench: np.ndarray, zmp: np.ndarray, fz: np.ndarray) -> np.ndarray:
    """Linear ZMP rows (Wu & Gao 2021, rebuilt): the moment about the measured ZMP is vertical.

    ``r_x = (W_ny + px W_fz) / fz`` and ``r_y = (py W_fz - W_nx) / fz``; ``r pi`` equals
    ``p_measured - p_model(pi)`` [m] when ``fz = W_fz pi``.

    Args:
        wrench: (N, 6, P) world wrench regressors.
        zmp: Measured ZMP (N, 2) [m].
        fz: Row scale, normally the measured vertical force (N,) [N].

    Returns:
        (2N, P) rows, samples interleaved (x, y).
    """
    px, py = zmp[:, 0:1], zmp[:, 1:2]
    wfz, wnx, wny = wrench[:, 2], wrench[:, 3], wrench[:, 4]
    rx = (wny + px * wfz) / fz[:, None]
    ry = (py * wfz - wnx) / fz[:, None]
    return np.stack([rx, ry], axis=1).reshape(-1, wrench.shape[2])
