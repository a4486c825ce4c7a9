"""A recording in the bag's conventions -> the internal convention (one place, at reading).

The internal convention is :class:`legid_ros.core.recording.Recording`'s: the IMU's
orientation, angular velocity and specific force in the axes of the description's IMU frame
(``imu.frame``), its world the force world (z up); every foot's wrench in the axes of its
F/T frame (``ft_frame``, else the link), moments about that frame's origin. A bag whose IMU
is mounted rotated (``imu.rpy``), whose IMU reference is yawed (``imu.heading_rad``) or
whose foot forces are in world or foot-link axes (``feet.<foot>.expressed_in``) is brought
to it by :func:`to_internal`, which :func:`legid_ros.bag.align.assemble` calls: rows never
see another convention.

World-axes forces are rotated with the base orientation the IMU gives (as a robot without
motion capture would): an IMU tilt error of d [rad] turns a force of norm F by about d F.

The per-sample math is a function of arrays (:func:`imu_to_internal`, :func:`wrench_rotation`,
:func:`rotate_wrench`), so the live buffer (:mod:`legid_ros.core.buffer`) converts its streams
with the same code: :func:`to_internal` on a recording, the buffer per batch of samples.
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

import numpy as np
import pinocchio as pin
from scipy.spatial.transform import Rotation

from legid_ros.core.conventions.spec import ImuSpec
from legid_ros.core.recording import Recording


def quat_matrices(quat: np.ndarray) -> np.ndarray:
    """Rotations (n, 3, 3) of quaternions [x, y, z, w] (n, 4) (normalised; NaN where a
    quaternion is not finite or of zero norm)."""
    quat = np.asarray(quat, float)
    out = np.full((len(quat), 3, 3), np.nan)
    norm = np.linalg.norm(quat, axis=1)
    ok = np.isfinite(quat).all(axis=1) & (norm > 0)
    if ok.any():
        out[ok] = Rotation.from_quat(quat[ok] / norm[ok, None]).as_matrix()
    return out


def matrix_quat(rot: np.ndarray) -> np.ndarray:
    """Quaternion [x, y, z, w] of a rotation matrix (3, 3) (pinocchio's conversion).

    The matrix goes to ``pin.Quaternion`` in column-major order: given a row-major (C-order)
    array, eigenpy copies it in the constructor and never frees the copy (80 bytes per call
    with pinocchio 4.1 / eigenpy 3; at the estimator's rate, 0.5 MB of RSS per minute).
    """
    return pin.Quaternion(np.asfortranarray(rot, dtype=float)).coeffs().copy()


def imu_to_internal(quat: np.ndarray, gyro: np.ndarray, acc: np.ndarray, imu: ImuSpec,
                    canonical: bool = True, t_s: Optional[np.ndarray] = None
                    ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """IMU readings of a sensor mounted ``imu.rpy`` in ``imu.frame`` with its reference yawed
    by ``imu.heading_rad`` -> in the axes of ``imu.frame`` and the force world (new arrays).

    Args:
        quat: Sensor orientation in its reference [x, y, z, w] (n, 4) (rows not finite or of
            zero norm are left as they are).
        gyro: Angular velocity in the sensor axes (n, 3) [rad/s].
        acc: Specific force in the sensor axes (n, 3) [m/s^2].
        imu: The description's IMU stream.
        canonical: Quaternions with w >= 0; False keeps the input's sign (a fixed rotation on
            either side is linear in the quaternion), so a sign-continuous stream stays
            continuous for the buffer's interpolation between samples.
        t_s: Sample times after the stream's first sample (n,) [s], for a drifting heading
            (``imu.heading_drift_rad_s``); None takes the heading at the first sample.
    """
    quat = np.array(quat, float)
    r_fs = imu.rotation  # sensor axes in the IMU frame
    norm = np.linalg.norm(quat, axis=1)
    ok = np.isfinite(quat).all(axis=1) & (norm > 0)
    if ok.any():
        r_ws = Rotation.from_quat(quat[ok])
        heading = imu.heading(None if t_s is None else np.asarray(t_s, float)[ok])
        heading = Rotation.from_euler('z', np.reshape(heading, (-1, 1)) if np.ndim(heading)
                                      else heading)
        q = (heading * r_ws * Rotation.from_matrix(r_fs).inv()).as_quat()
        if canonical:
            q *= np.sign(q[:, 3:4] + 1e-12)
        quat[ok] = q
    return quat, np.asarray(gyro, float) @ r_fs.T, np.asarray(acc, float) @ r_fs.T


def wrench_rotation(expressed_in: str, r_bt: np.ndarray, r_bl: Optional[np.ndarray] = None,
                    r_bf: Optional[np.ndarray] = None,
                    r_wf: Optional[np.ndarray] = None) -> np.ndarray:
    """Per sample, the rotation (n, 3, 3) taking a foot's wrench axes to its F/T frame's.

    Args:
        expressed_in: 'sensor', 'foot' or 'world' (the description's ``expressed_in``).
        r_bt: The F/T frame's rotation in the base (n, 3, 3).
        r_bl: The foot link's rotation in the base (n, 3, 3) ('foot').
        r_bf: The IMU frame's rotation in the base (3, 3) or (n, 3, 3) ('world').
        r_wf: The IMU frame's rotation in the force world (n, 3, 3), internal convention
            (heading removed); NaN where unknown gives NaN ('world').
    """
    r_tb = np.swapaxes(r_bt, -1, -2)
    if expressed_in == 'sensor':
        return np.broadcast_to(np.eye(3), r_bt.shape).copy()
    if expressed_in == 'foot':
        return r_tb @ r_bl
    # world: R_tw = R_tb R_bw, R_bw = R_bf R_wf^T
    return r_tb @ r_bf @ np.swapaxes(r_wf, -1, -2)


def rotate_wrench(w: np.ndarray, rot: np.ndarray) -> np.ndarray:
    """Wrenches (n, 6) [N, N.m] (force, moment) turned by ``rot`` (n, 3, 3) (a new array;
    the moments stay about the same point)."""
    return np.hstack([np.einsum('nij,nj->ni', rot, w[:, :3]),
                      np.einsum('nij,nj->ni', rot, w[:, 3:])])


def _frame_rotations(rec: Recording, robot, feet) -> Dict[str, np.ndarray]:
    """Per foot in ``feet``, per sample, the rotation that takes its bag axes to its F/T
    frame's axes, (N, 3, 3) (NaN where the IMU is missing for world axes)."""
    model = robot.model
    data = model.createData()
    imu_id = robot.frame_id(robot.imu_frame)
    ids = {f: (robot.frame_id(robot.feet[f].wrench_frame),
               robot.frame_id(robot.feet[f].link)) for f in feet}
    q0 = pin.neutral(model)
    nb = model.nq - len(rec.joint_names) if robot.has_only_scalar_joints else None
    r_bf = np.empty((rec.n, 3, 3))
    r_bt = {f: np.empty((rec.n, 3, 3)) for f in feet}
    r_bl = {f: np.empty((rec.n, 3, 3)) for f in feet}
    for k in range(rec.n):
        if nb is not None:
            q = q0.copy()
            q[nb:] = rec.q[k]
        else:
            q = robot.configuration(rec.q[k])
        pin.framesForwardKinematics(model, data, q)
        r_bf[k] = data.oMf[imu_id].rotation
        for f, (ft, link) in ids.items():
            r_bt[f][k] = data.oMf[ft].rotation
            r_bl[f][k] = data.oMf[link].rotation
    r_wf = quat_matrices(rec.imu_quat)
    return {f: wrench_rotation(robot.feet[f].expressed_in, r_bt[f], r_bl[f], r_bf, r_wf)
            for f in feet}


def to_internal(rec: Recording, robot) -> Recording:
    """``rec`` (read from a bag in the description's conventions) in the internal one.

    Modifies and returns ``rec``; notes what was converted in ``rec.meta['conventions']``.
    """
    done = []
    if not robot.imu.is_internal:
        rec.imu_quat, rec.imu_gyro, rec.imu_acc = imu_to_internal(
            rec.imu_quat, rec.imu_gyro, rec.imu_acc, robot.imu, t_s=rec.t - rec.t[0])
        done.append(f'imu rpy {list(robot.imu.rpy)} heading {robot.imu.heading_rad} rad'
                    + (f' drifting {robot.imu.heading_drift_rad_s} rad/s'
                       if robot.imu.heading_drift_rad_s else ''))
    feet = [f for f, foot in robot.feet.items()
            if foot.expressed_in != 'sensor' and f in rec.foot_wrench]
    if feet:
        rot = _frame_rotations(rec, robot, feet)
        for f in feet:
            rec.foot_wrench[f] = rotate_wrench(rec.foot_wrench[f], rot[f])
            done.append(f'foot {f} wrench from {robot.feet[f].expressed_in} axes')
    if done:
        rec.meta['conventions'] = done
    return rec
