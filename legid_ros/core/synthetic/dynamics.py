"""Exact floating-base dynamics of a biped standing on its flat right foot.

The support sole frame is the world frame at every instant. Given the joint trajectory
``(q, qd, qdd)`` the base motion follows from the contact constraint (sole velocity and
spatial acceleration zero), the contact wrench from the base rows of the inverse dynamics
(``tau[:6] = J_b^T f``) and the motor torques from the joint rows (``tau_m = tau[6:] -
J_j^T f``). Everything is computed by pinocchio.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import pinocchio as pin

from legid_ros.core import signals
from legid_ros.core.conventions.convert import matrix_quat

LOCAL = pin.ReferenceFrame.LOCAL


@dataclass
class ContactDynamics:
    """Per-sample exact quantities, each an array over samples.

    Attributes:
        q: Full configurations (base XYZ + quaternion [x, y, z, w], joints), (N, nq).
        v: Full velocities (base twist in the base frame, joints), (N, nv).
        a: Full accelerations, (N, nv).
        wrench: Ground-on-foot wrench at the support sole origin, in world = sole axes,
            ``[fx, fy, fz, nx, ny, nz]`` [N, N.m], (N, 6).
        tau_motor: Torques the joint motors deliver (no friction) [N.m], (N, nj).
        tau_full: Inverse dynamics ``M a + h`` (base rows = base wrench), (N, nv).
        zmp: ZMP on the ground [m], (N, 2).
        imu_quat: IMU orientation [x, y, z, w], (N, 4), if computed.
        imu_gyro: IMU angular velocity in the IMU frame [rad/s], (N, 3), if computed.
        imu_acc: IMU specific force in the IMU frame [m/s^2], (N, 3), if computed.
    """

    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    wrench: np.ndarray
    tau_motor: np.ndarray
    tau_full: np.ndarray
    zmp: np.ndarray
    imu_quat: Optional[np.ndarray] = None
    imu_gyro: Optional[np.ndarray] = None
    imu_acc: Optional[np.ndarray] = None


def zmp_from_wrench(wrench: np.ndarray) -> np.ndarray:
    """ZMP [m] on the ground plane z = 0 of a wrench at the world origin, (N, 2).

    Exact data: no threshold on the vertical force (see :func:`signals.zmp_from_wrench`).
    """
    return signals.zmp_from_wrench(wrench, min_fz=-np.inf)[0]


def base_pose_from_joints(model: pin.Model, data: pin.Data, qj: np.ndarray,
                          sole_id: int) -> np.ndarray:
    """Full configuration with the base placed so that the support sole is the world frame."""
    q = np.concatenate([[0, 0, 0, 0, 0, 0, 1.0], qj])
    pin.framesForwardKinematics(model, data, q)
    o_m_b = data.oMf[sole_id].inverse()
    q[:7] = pin.SE3ToXYZQUAT(o_m_b)
    return q


def contact_dynamics(model: pin.Model, data: pin.Data, qj: np.ndarray, qdj: np.ndarray,
                     qddj: np.ndarray, sole_id: int, imu_id: Optional[int] = None,
                     progress: bool = False) -> ContactDynamics:
    """Base motion, contact wrench, motor torques, ZMP (and IMU) for a joint trajectory.

    Args:
        model: Floating-base model holding the true parameters.
        data: Its data.
        qj: Joint positions [rad], (N, nj).
        qdj: Joint velocities [rad/s], (N, nj).
        qddj: Joint accelerations [rad/s^2], (N, nj).
        sole_id: Frame id of the support sole (held at the world origin).
        imu_id: Frame id of the IMU, or None to skip the IMU signals.
        progress: Show a tqdm bar on stderr.
    """
    from tqdm import tqdm

    n, nj = qj.shape
    q_all = np.zeros((n, model.nq))
    v_all = np.zeros((n, model.nv))
    a_all = np.zeros((n, model.nv))
    tau_all = np.zeros((n, model.nv))
    wrench = np.zeros((n, 6))
    tau_m = np.zeros((n, nj))
    do_imu = imu_id is not None
    quat = np.zeros((n, 4)) if do_imu else None
    gyro = np.zeros((n, 3)) if do_imu else None
    acc = np.zeros((n, 3)) if do_imu else None
    g = model.gravity.linear
    zeros = np.zeros(model.nv)
    for k in tqdm(range(n), desc='dynamics', unit='sample', unit_scale=True, disable=not progress,
                  mininterval=0.5):
        q = base_pose_from_joints(model, data, qj[k], sole_id)
        jac = pin.computeFrameJacobian(model, data, q, sole_id, LOCAL)
        jb, jj = jac[:, :6], jac[:, 6:]
        v = np.concatenate([-np.linalg.solve(jb, jj @ qdj[k]), qdj[k]])
        pin.forwardKinematics(model, data, q, v, zeros)
        gamma = pin.getFrameAcceleration(model, data, sole_id, LOCAL).vector
        a = np.concatenate([-np.linalg.solve(jb, jj @ qddj[k] + gamma), qddj[k]])
        if do_imu:
            pin.forwardKinematics(model, data, q, v, a)
            o_m_i = pin.updateFramePlacement(model, data, imu_id)
            rot = o_m_i.rotation
            quat[k] = matrix_quat(rot)
            gyro[k] = pin.getFrameVelocity(model, data, imu_id, LOCAL).angular
            acc[k] = (pin.getFrameClassicalAcceleration(model, data, imu_id, LOCAL).linear
                      - rot.T @ g)
        tau = pin.rnea(model, data, q, v, a)
        f = np.linalg.solve(jb.T, tau[:6])
        q_all[k], v_all[k], a_all[k], tau_all[k] = q, v, a, tau
        wrench[k] = f
        tau_m[k] = tau[6:] - jj.T @ f
    return ContactDynamics(q=q_all, v=v_all, a=a_all, wrench=wrench, tau_motor=tau_m,
                           tau_full=tau_all, zmp=zmp_from_wrench(wrench), imu_quat=quat,
                           imu_gyro=gyro, imu_acc=acc)


def corner_forces(wrench: np.ndarray, corners_xy: np.ndarray) -> np.ndarray:
    """Split ``(fz, nx, ny)`` of a sole wrench over 4 rectangle corners, bilinearly.

    With the ZMP ``p`` and half sizes ``(a, b)``, corner ``(sx a, sy b)`` gets
    ``fz (1 + sx px / a) (1 + sy py / b) / 4``: the forces sum to ``fz`` and their moments
    about the sole origin reproduce ``nx`` and ``ny`` exactly, and all are >= 0 while the ZMP
    is inside the sole (a minimum-norm split would go negative near the edges).

    Args:
        wrench: Ground-on-foot wrench at the sole origin in sole axes, (N, 6).
        corners_xy: Sensor positions in the sole frame [m], (4, 2), a centred rectangle.

    Returns:
        Normal force per corner [N], (N, 4).
    """
    half = np.abs(corners_xy).max(axis=0)
    signs = np.sign(corners_xy)
    p = zmp_from_wrench(wrench)
    fz = wrench[:, 2:3]
    wx = 1 + signs[None, :, 0] * p[:, 0:1] / half[0]
    wy = 1 + signs[None, :, 1] * p[:, 1:2] / half[1]
    return fz * wx * wy / 4
