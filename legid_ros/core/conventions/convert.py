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
"""

from __future__ import annotations

from typing import Dict

import numpy as np
import pinocchio as pin
from scipy.spatial.transform import Rotation

from legid_ros.core.recording import Recording


def _imu_internal(rec: Recording, robot) -> None:
    """IMU readings in the IMU frame's axes and the force world (in place)."""
    imu = robot.imu
    if imu.is_internal:
        return
    r_fs = imu.rotation  # sensor axes in the IMU frame
    ok = np.all(np.isfinite(rec.imu_quat), axis=1)
    if ok.any():
        r_ws = Rotation.from_quat(rec.imu_quat[ok])
        heading = Rotation.from_euler('z', imu.heading_rad)
        quat = (heading * r_ws * Rotation.from_matrix(r_fs).inv()).as_quat()
        quat *= np.sign(quat[:, 3:4] + 1e-12)
        rec.imu_quat[ok] = quat
    rec.imu_gyro[:] = rec.imu_gyro @ r_fs.T
    rec.imu_acc[:] = rec.imu_acc @ r_fs.T


def _frame_rotations(rec: Recording, robot, feet) -> Dict[str, np.ndarray]:
    """Per foot in ``feet``, per sample, the rotation that takes its bag axes to its F/T
    frame's axes, (N, 3, 3) (NaN where the IMU is missing for world axes)."""
    model = robot.model
    data = model.createData()
    imu_id = robot.frame_id(robot.imu_frame)
    ids = {f: (robot.frame_id(robot.feet[f].ft_frame or robot.feet[f].link),
               robot.frame_id(robot.feet[f].link)) for f in feet}
    q0 = pin.neutral(model)
    nb = model.nq - len(rec.joint_names) if robot.has_only_scalar_joints else None
    out = {f: np.full((rec.n, 3, 3), np.nan) for f in feet}
    r_wf = Rotation.from_quat(np.where(np.isfinite(rec.imu_quat), rec.imu_quat,
                                       [0, 0, 0, 1])).as_matrix()
    imu_ok = np.all(np.isfinite(rec.imu_quat), axis=1)
    for k in range(rec.n):
        if nb is not None:
            q = q0.copy()
            q[nb:] = rec.q[k]
        else:
            q = robot.configuration(rec.q[k])
        pin.framesForwardKinematics(model, data, q)
        r_bf = data.oMf[imu_id].rotation
        for f, (ft, link) in ids.items():
            r_bt = data.oMf[ft].rotation
            if robot.feet[f].expressed_in == 'foot':
                out[f][k] = r_bt.T @ data.oMf[link].rotation
            elif imu_ok[k]:  # world: R_tw = R_bt^T R_bw, R_wb = R_wf R_bf^T
                out[f][k] = r_bt.T @ r_bf @ r_wf[k].T
    return out


def to_internal(rec: Recording, robot) -> Recording:
    """``rec`` (read from a bag in the description's conventions) in the internal one.

    Modifies and returns ``rec``; notes what was converted in ``rec.meta['conventions']``.
    """
    done = []
    if not robot.imu.is_internal:
        _imu_internal(rec, robot)
        done.append(f'imu rpy {list(robot.imu.rpy)} heading {robot.imu.heading_rad} rad')
    feet = [f for f, foot in robot.feet.items()
            if foot.expressed_in != 'sensor' and f in rec.foot_wrench]
    if feet:
        rot = _frame_rotations(rec, robot, feet)
        for f in feet:
            w = rec.foot_wrench[f]
            rec.foot_wrench[f] = np.hstack([np.einsum('nij,nj->ni', rot[f], w[:, :3]),
                                            np.einsum('nij,nj->ni', rot[f], w[:, 3:])])
            done.append(f'foot {f} wrench from {robot.feet[f].expressed_in} axes')
    if done:
        rec.meta['conventions'] = done
    return rec
