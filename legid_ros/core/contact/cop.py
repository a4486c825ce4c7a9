"""Measured ZMP / centre of pressure from the feet in contact (one computation for all users).

The feet that count are those in contact by :mod:`legid_ros.core.contact.rule`; a foot off the
ground adds nothing, whatever its sensor reads (a lifting foot keeping 1-2 N would otherwise pull
the CoP toward its moving contact point). Sensing supported, per foot:

- 6-axis wrench of a flat foot: the wrench ``[f, n]`` in its F/T frame (``ft_frame``, else its
  link); the CoP is the point of the ground where the summed wrenches have no horizontal moment;
- force of a point foot (``contact: point`` or no sole size): the force of its wrench message
  (torques ignored) acts at its contact point on the ground: the origin of its sole frame, or,
  for a foot with a sphere of radius ``r`` (``radius_m``), the sphere's lowest point, the
  origin plus ``r`` times (the sole's z axis less the vertical): it rolls with the leg (its
  height, zero up to the kinematics' error, is dropped);
- sole sensors ('fsr'): normal forces at the sensor frames, ``sum f_k s_k / sum f_k`` (a point
  foot measured by one normal force has one sensor at its contact point).

Flat ground at z = 0 of the frame the placements are given in.
"""

from __future__ import annotations

from typing import Dict, Optional

import numpy as np
import pinocchio as pin

from legid_ros.core import signals
from legid_ros.core.robot import Robot


def is_point_foot(robot: Robot, foot: str) -> bool:
    """Whether a foot touches the ground at a point (3-D force, no moment)."""
    ft = robot.feet[foot]
    return ft.contact == 'point' or ft.sole_size is None


def cop_frames(robot: Robot, feet, src: str) -> Dict[str, list]:
    """Per foot, the frame ids :func:`measured_cop` places its forces at: the sole sensors'
    ('fsr'), else ``[F/T frame]`` plus, for a point foot, its contact point (sole frame)."""
    out = {}
    for f in feet:
        foot = robot.feet[f]
        if src == 'fsr':
            out[f] = [robot.frame_id(s) for s in foot.sensor_frames]
        else:
            out[f] = [robot.frame_id(foot.wrench_frame)]
            if is_point_foot(robot, f):
                out[f].append(robot.frame_id(foot.sole_frame))
    return out


def frame_placements(robot: Robot, q: np.ndarray, frames) -> Dict[int, np.ndarray]:
    """World placements ``{frame id: (N, 3, 4)}`` (rotation, translation [m]) of ``frames`` at
    the configurations ``q`` (N, nq); NaN where ``q`` is not finite."""
    model = robot.model
    data = model.createData()
    out = {f: np.full((q.shape[0], 3, 4), np.nan) for f in frames}
    for k in np.flatnonzero(np.isfinite(q).all(axis=1)):
        pin.forwardKinematics(model, data, q[k])
        for f, arr in out.items():
            m = pin.updateFramePlacement(model, data, f)
            arr[k, :, :3], arr[k, :, 3] = m.rotation, m.translation
    return out


def measured_cop(robot: Robot, src: str, force: Dict[str, np.ndarray], contact: np.ndarray,
                 placements: Optional[Dict[int, np.ndarray]] = None,
                 q: Optional[np.ndarray] = None, frames: Optional[Dict[str, list]] = None):
    """Measured ZMP/CoP on the ground [m] (N, 2) and vertical force [N] (N,) of the feet in
    contact.

    Args:
        robot: The robot.
        src: 'wrench' or 'fsr'.
        force: Per foot, (N, 6) wrenches [N, N.m] in the F/T frame or (N, k) sensor normal
            forces [N].
        contact: (N, n_feet) bool in the robot's foot order: the feet in contact (the rule's).
        placements: World placements ``{frame id: (N, 3, 4)}`` of :func:`cop_frames`' frames
            (the rotation is read only for a wrench's F/T frame, the first of its foot's, and
            for the contact frame of a point foot with a radius); computed at ``q`` when not
            given.
        q: Floating-base configurations (N, nq), in the frame the CoP is wanted in (needed
            without ``placements``).
        frames: :func:`cop_frames` of the robot (computed if not given; the buffer keeps it).

    Samples with no foot in contact, non-finite placements of a foot in contact, or a vertical
    force under :data:`legid_ros.core.signals.MIN_FZ` have a NaN CoP (and no force when no foot
    is in contact).
    """
    feet = list(force)
    fids = frames if frames is not None else cop_frames(robot, feet, src)
    if placements is None:
        placements = frame_placements(robot, q, sorted({i for ids in fids.values()
                                                         for i in ids}))
    n = len(contact)
    order = list(robot.feet)
    on = {f: np.asarray(contact[:, order.index(f)], bool) for f in feet}
    bad = np.zeros(n, bool)
    for f in feet:
        ok = np.isfinite(force[f]).all(axis=1)
        for i in fids[f]:
            ok &= np.isfinite(placements[i][:, :, 3]).all(axis=1)
        bad |= on[f] & ~ok
        on[f] = on[f] & ok
    if src == 'fsr':
        pos = np.stack([np.where(on[f][:, None], placements[i][:, :, 3], 0.0)
                        for f in feet for i in fids[f]], axis=1)
        frc = np.concatenate([np.where(on[f][:, None], force[f], 0.0) for f in feet], axis=1)
        cop, fz = signals.zmp_from_sensors(frc, pos)
    else:
        w = np.zeros((n, 6))  # ground-on-robot wrench in the world about its origin
        for f in feet:
            m = placements[fids[f][0]]
            x = np.asarray(force[f], float)
            f_w = np.einsum('nij,nj->ni', m[:, :, :3], x[:, :3])
            if len(fids[f]) > 1:
                # a point foot: the force at its contact point on the ground, no torque (its
                # CoP is the point itself: sum f_z p / sum f_z over point feet)
                pos = contact_point(robot, f, placements[fids[f][1]]) * [1.0, 1.0, 0.0]
                n_w = _cross(pos, f_w)
            else:
                n_w = np.einsum('nij,nj->ni', m[:, :, :3], x[:, 3:]) + _cross(m[:, :, 3], f_w)
            w[:, :3] += np.where(on[f][:, None], f_w, 0.0)
            w[:, 3:] += np.where(on[f][:, None], n_w, 0.0)
        cop, fz = signals.zmp_from_wrench(w)
    none = ~np.any([on[f] for f in feet], axis=0) if feet else np.ones(n, bool)
    cop[none | bad] = np.nan
    fz[none] = 0.0
    return cop, fz


def contact_point(robot: Robot, foot: str, sole: np.ndarray) -> np.ndarray:
    """Where a point foot touches the ground [m] (N, 3), from its sole frame's world placements
    ``sole`` (N, 3, 4): the frame's origin, plus ``radius * (z_sole - z_world)`` for a foot
    sphere of radius ``radius`` (the spec's ``Foot.radius``)."""
    r = robot.feet[foot].radius
    if r == 0.0:
        return sole[:, :, 3]
    return sole[:, :, 3] + r * (sole[:, :, 2] - np.array([0.0, 0.0, 1.0]))


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross products of (n, 3) arrays (cheaper than ``np.cross`` on short rows)."""
    out = np.empty_like(b)
    out[:, 0] = a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1]
    out[:, 1] = a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2]
    out[:, 2] = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
    return out


def normal_forces(robot: Robot, src: str, force: Dict[str, np.ndarray],
                  up: Optional[Dict[str, np.ndarray]] = None) -> np.ndarray:
    """Normal (world-vertical) force of each foot [N] (N, n_feet), the contact rule's input.

    Args:
        robot: The robot (its foot order).
        src: 'fsr' (the sole sensors' normal forces summed) or 'wrench'.
        force: Per foot, (N, k) sensor forces or (N, 6) wrenches in the F/T frame [N, N.m].
        up: Wrench mode: per foot, the world's vertical axis in the F/T frame (N, 3) (the third
            row of the frame's rotation in a level frame); None: the F/T frame's own z axis.
    """
    cols = []
    for f in robot.feet:
        x = np.asarray(force[f], float)
        if src == 'fsr':
            cols.append(x.sum(axis=1))
        elif up is None:
            cols.append(x[:, 2])
        else:
            cols.append(np.einsum('nj,nj->n', up[f], x[:, :3]))
    return np.column_stack(cols) if cols else np.zeros((0, 0))


def up_axes(robot: Robot, q_j: np.ndarray, imu_quat: np.ndarray) -> Dict[str, np.ndarray]:
    """Per foot, the world's vertical axis in its F/T frame (N, 3), from the joint positions
    (N, nj) [rad] and the IMU orientation ``[x, y, z, w]`` (N, 4) (its roll and pitch only)."""
    model = robot.model
    data = model.createData()
    q = pin.neutral(model)
    pin.framesForwardKinematics(model, data, q)
    imu = robot.frame_id(robot.imu_frame)
    r_bi = data.oMf[imu].rotation.copy()
    fids = {f: robot.frame_id(ft.wrench_frame) for f, ft in robot.feet.items()}
    quat = np.asarray(imu_quat, float)
    x, y, z, w = (quat / np.linalg.norm(quat, axis=1, keepdims=True)).T
    # third row of the IMU's rotation in the world: the world z axis in the IMU frame
    z_imu = np.column_stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)])
    z_base = z_imu @ r_bi.T
    out = {f: np.empty((len(q_j), 3)) for f in fids}
    for k in range(len(q_j)):
        q[7:] = q_j[k]
        pin.forwardKinematics(model, data, q)
        for f, i in fids.items():
            out[f][k] = z_base[k] @ pin.updateFramePlacement(model, data, i).rotation
    return out
