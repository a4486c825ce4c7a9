"""Regressors linear in the standard inertial parameters.

All dynamics come from pinocchio (``computeJointTorqueRegressor``, frame Jacobians and
accelerations). The floating base is the root free flyer; pinocchio's base twist and
acceleration are expressed in the base frame. The base state itself comes from the stance
contacts (:mod:`legid_ros.core.contact.base_state`).

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

from legid_ros.core.contact.base_state import support_list
from legid_ros.core.contact.cop import contact_point, is_point_foot
from legid_ros.core.errors import BadInputError
from legid_ros.core.friction.models import V_COULOMB, smooth_sign
from legid_ros.core.robot import Robot


def _quat_to_rot(quat_xyzw: np.ndarray) -> np.ndarray:
    x, y, z, w = quat_xyzw / np.linalg.norm(quat_xyzw)
    return pin.Quaternion(w, x, y, z).toRotationMatrix()


def quat_matrices(quat_xyzw: np.ndarray) -> np.ndarray:
    """Rotation matrices (N, 3, 3) of quaternions ``[x, y, z, w]`` (N, 4) (normalised here)."""
    quat = np.asarray(quat_xyzw, float)
    x, y, z, w = (quat / np.linalg.norm(quat, axis=1, keepdims=True)).T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1)],
        axis=1)


def base_to_world(q_base: np.ndarray) -> np.ndarray:
    """6x6 map of a wrench ``[f, n]`` in base axes at the base origin to world axes at origin."""
    rot = _quat_to_rot(q_base[3:7])
    p = q_base[:3]
    x = np.zeros((6, 6))
    x[:3, :3] = rot
    x[3:, 3:] = rot
    x[3:, :3] = pin.skew(p) @ rot
    return x


def bases_to_world(q: np.ndarray) -> np.ndarray:
    """:func:`base_to_world` of N configurations at once, (N, 6, 6)."""
    rot = quat_matrices(q[:, 3:7])
    p = q[:, :3]
    skew = np.zeros((q.shape[0], 3, 3))
    skew[:, 0, 1], skew[:, 0, 2], skew[:, 1, 2] = -p[:, 2], p[:, 1], -p[:, 0]
    skew[:, 1, 0], skew[:, 2, 0], skew[:, 2, 1] = p[:, 2], -p[:, 1], p[:, 0]
    x = np.zeros((q.shape[0], 6, 6))
    x[:, :3, :3] = rot
    x[:, 3:, 3:] = rot
    x[:, 3:, :3] = skew @ rot
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
        sup = support_list(support if support is not None else 'right', n)
        sole = {name: robot.frame_id(f.sole_frame) for name, f in robot.feet.items()}
    if 'floating' in kinds:
        if tau is None or foot_wrench is None:
            raise BadInputError('floating-base rows need joint efforts and foot wrenches')
        ft = {name: robot.frame_id(robot.feet[name].wrench_frame)
              for name in foot_wrench}  # wrenches in the F/T frame, else the link
        rolling = {name: robot.frame_id(robot.feet[name].sole_frame) for name in foot_wrench
                   if is_point_foot(robot, name)}
    ds = np.zeros(n, bool) if double_support is None else np.asarray(double_support, bool)
    for k in range(n):
        y = pin.computeJointTorqueRegressor(model, data, q[k], v[k], a[k])
        wrench[k] = y[:6]
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
                    if name in rolling:
                        w = point_foot_wrench(robot, data, name, fid, rolling[name], w)
                    b += jac.T @ w
            rhs[k] = b
    for s in range(0, n, 1024):  # base axes at the base origin -> world axes at the origin
        wrench[s:s + 1024] = bases_to_world(q[s:s + 1024]) @ wrench[s:s + 1024]
    return Regressors(wrench=wrench, torque=torque, floating=floating, floating_rhs=rhs)


def point_foot_wrench(robot: Robot, data, foot: str, frame: int, sole: int,
                      w: np.ndarray) -> np.ndarray:
    """A point foot's measured force as the wrench at its F/T frame ``frame`` (6,) [N, N.m].

    The force acts where the foot touches the ground, the sphere's lowest point that rolls with
    the leg (:func:`legid_ros.core.contact.cop.contact_point`, the measured CoP's point), and a
    point contact carries no moment: ``[f, d x f]`` with ``d`` that point from the frame's
    origin, in its axes (the sensor's moments ignored, as the CoP ignores them). Without it
    the force acts at a point fixed on the shank: on Solo12's bent knees (radius 16 mm) the
    true parameters left 0.15 N.m of mean pitch moment in the base rows, the whole-body COM
    6 mm off. ``data`` holds the kinematics of the sample (frame placements are updated).
    """
    pin.updateFramePlacement(robot.model, data, frame)
    pin.updateFramePlacement(robot.model, data, sole)
    m_f = data.oMf[frame]
    point = contact_point(robot, foot, data.oMf[sole].homogeneous[None, :3, :])[0]
    d = m_f.rotation.T @ (point - m_f.translation)
    f = np.asarray(w[:3], float)
    return np.concatenate([f, np.cross(d, f)])


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
