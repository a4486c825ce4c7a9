"""Floating-base state from any set of stance feet: point feet, flat soles, one or several.

:func:`legid_ros.core.identification.rows.regressors.support_base_state` places one flat
support sole at the origin (Wu & Gao 2021's single support). A quadruped on point feet has no
sole whose orientation is fixed, and stands on three or four feet at once; this module gives
its base state per sample:

- orientation: the IMU's (mapped to the base through the model's IMU placement); the heading
  is whatever the IMU says: the ZMP rows do not change when the world turns about z, as long as
  the model and measured ZMP are computed in the same frame (they are, per sample);
- position: the stance contact points' mean on the ground at the origin (z = 0 is the ground);
- twist and acceleration: every stance contact still (a point foot's contact point: 3 linear
  rows, from pinocchio's frame Jacobian and classical acceleration; a flat sole: 6 rows, as in
  :func:`support_base_state`), solved in least squares for the base; when the stance rows have
  rank < 6 (one point foot), the gyro fills the base's angular velocity and its derivative.
"""

from __future__ import annotations

from typing import Dict, Optional, Sequence

import numpy as np
import pinocchio as pin

from legid_ros.core import signals
from legid_ros.core.errors import BadInputError
from legid_ros.core.identification.rows.regressors import quat_matrices
from legid_ros.core.robot import Robot


def is_point_foot(robot: Robot, foot: str) -> bool:
    """Whether a foot touches the ground at a point (3-D force, no moment)."""
    ft = robot.feet[foot]
    return ft.contact == 'point' or ft.sole_size is None


def _rows(robot: Robot, data, q, feet, fids, kind: str, points_only: bool = False):
    """Stacked contact Jacobians (or drifts) of the stance feet (flat soles as points too)."""
    model = robot.model
    out = []
    for f in feet:
        if points_only or is_point_foot(robot, f):
            if kind == 'jac':
                out.append(pin.getFrameJacobian(model, data, fids[f],
                                                pin.LOCAL_WORLD_ALIGNED)[:3])
            else:
                out.append(pin.getFrameClassicalAcceleration(
                    model, data, fids[f], pin.LOCAL_WORLD_ALIGNED).linear)
        else:
            if kind == 'jac':
                out.append(pin.getFrameJacobian(model, data, fids[f], pin.LOCAL))
            else:
                out.append(pin.getFrameAcceleration(model, data, fids[f], pin.LOCAL).vector)
    return np.vstack(out) if kind == 'jac' else np.concatenate(out)


def contact_base_state(robot: Robot, q_j: np.ndarray, qd_j: np.ndarray, qdd_j: np.ndarray,
                       stance: np.ndarray, imu_quat: np.ndarray,
                       gyro: Optional[np.ndarray] = None,
                       gyro_dot: Optional[np.ndarray] = None,
                       rates_from_imu: bool = False,
                       frames: Sequence[int] = ()) -> Dict[str, np.ndarray]:
    """Floating-base configuration, velocity and acceleration from the stance contacts.

    Args:
        robot: Floating-base robot (scalar joints).
        q_j, qd_j, qdd_j: Joint positions, velocities, accelerations (N, nj) [rad, /s, /s^2].
        stance: (N, n_feet) bool, feet in the robot's order: the feet standing still.
        imu_quat: IMU orientation in the world ``[x, y, z, w]`` (N, 4).
        gyro: IMU angular velocity in the IMU frame (N, 3) [rad/s]; used only when the stance
            rows cannot fix the base rotation (one point foot).
        gyro_dot: Its time derivative (N, 3) [rad/s^2] (same use).
        rates_from_imu: Take the base's angular velocity and acceleration from the gyro (and
            ``gyro_dot``) always, and only the contact points' translation from the stance
            feet (a flat sole as its centre point): for tall robots whose soles rock on their
            soft contacts (a sole's angular acceleration of 0.05 rad/s^2 moves the model ZMP of
            a 1 m high COM by ~5 mm).
        frames: Frame ids whose world placements to return (at the returned ``q``).

    Whenever the gyro is used, the base's angular rates are the gyro's (mapped into the base
    frame) and only the base's linear velocity and acceleration are solved, in least squares,
    from the stance contacts (the contact rows are never mixed with the gyro's: m/s against
    rad/s).

    Returns:
        ``{'q': (N, nq), 'v': (N, nv), 'a': (N, nv)}``; samples without a stance foot are NaN.
        With ``frames``, also ``'placements'``: ``{frame id: (N, 3, 4)}`` rotation and
        translation [m] of each frame in the world (NaN without a stance foot).
    """
    model = robot.model
    if not robot.floating:
        raise BadInputError('contact_base_state needs a floating-base robot')
    q_j = np.atleast_2d(np.asarray(q_j, float))
    n, nj = q_j.shape
    if nj != model.nv - 6 or model.nq != model.nv + 1:
        raise BadInputError(f'{nj} joint columns for a model with {model.nv - 6} scalar joints')
    feet = list(robot.feet)
    stance = np.asarray(stance, bool)
    if stance.shape != (n, len(feet)):
        raise BadInputError(f'stance has shape {stance.shape}, expected ({n}, {len(feet)})')
    data = model.createData()
    fids = {f: robot.frame_id(robot.feet[f].sole_frame) for f in feet}
    imu_fid = robot.frame_id(robot.imu_frame)
    q = pin.neutral(model)
    pin.framesForwardKinematics(model, data, q)
    r_bi = data.oMf[imu_fid].rotation.copy()  # IMU axes in the base frame
    out = {k: np.full((n, d), np.nan) for k, d in (('q', model.nq), ('v', model.nv),
                                                   ('a', model.nv))}
    place = {f: np.full((n, 3, 4), np.nan) for f in frames}
    quat = np.asarray(imu_quat, float)
    quat = quat / np.linalg.norm(quat, axis=1, keepdims=True)
    # base orientation in the world: the IMU's, through the IMU's placement on the base
    r_wb = quat_matrices(quat) @ r_bi.T
    base_quat = _matrix_quats(r_wb)
    w_base = None if gyro is None else np.asarray(gyro, float) @ r_bi.T  # [rad/s] base axes
    wd_base = None if gyro is None else (np.zeros_like(w_base) if gyro_dot is None else
                                         np.asarray(gyro_dot, float) @ r_bi.T)
    v = np.zeros(model.nv)
    a = np.zeros(model.nv)
    for k in np.flatnonzero(stance.any(axis=1)):
        on = [f for f, s in zip(feet, stance[k]) if s]
        q[:3] = 0.0
        q[3:7] = base_quat[k]
        q[7:] = q_j[k]
        # Jacobians and contact points do not depend on the base translation: one pass
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        contacts = np.array([data.oMf[fids[f]].translation for f in on])
        q[:3] = -contacts.mean(axis=0)
        jac = _rows(robot, data, q, on, fids, 'jac', rates_from_imu)
        jb, jj = jac[:, :6], jac[:, 6:]
        use_gyro = rates_from_imu or np.linalg.matrix_rank(jb, tol=1e-9) < 6
        if use_gyro and gyro is None:
            raise BadInputError(f'sample {k}: stance {on} cannot fix the base rotation; '
                                'pass the gyro')
        v[6:] = qd_j[k]
        v[:6] = _base_solve(jb, -jj @ qd_j[k], w_base[k] if use_gyro else None)
        a[:6] = 0.0
        a[6:] = qdd_j[k]
        pin.forwardKinematics(model, data, q, v, a)
        pin.updateFramePlacements(model, data)
        drift = _rows(robot, data, q, on, fids, 'acc', rates_from_imu)
        a[:6] = _base_solve(jb, -drift, wd_base[k] if use_gyro else None)
        out['q'][k], out['v'][k], out['a'][k] = q, v, a
        for f, arr in place.items():
            m = data.oMf[f]
            arr[k, :, :3], arr[k, :, 3] = m.rotation, m.translation
    if frames:
        out['placements'] = place
    return out


def _base_solve(jb: np.ndarray, rhs: np.ndarray, angular=None) -> np.ndarray:
    """Base twist (or acceleration) ``[linear, angular]`` from ``jb x = rhs`` in least
    squares; with ``angular`` given (base axes), that part is fixed and only the linear part
    is solved from the rows."""
    if angular is None:
        return np.linalg.lstsq(jb, rhs, rcond=None)[0]
    lin = np.linalg.lstsq(jb[:, :3], rhs - jb[:, 3:] @ angular, rcond=None)[0]
    return np.concatenate([lin, angular])


def _matrix_quats(rot: np.ndarray) -> np.ndarray:
    """Unit quaternions ``[x, y, z, w]`` (N, 4) of rotation matrices (N, 3, 3)."""
    out = np.empty((rot.shape[0], 4))
    for k, r in enumerate(rot):
        out[k] = pin.Quaternion(r).coeffs()
    return out


def zmp_frames(robot: Robot, feet, src: str) -> Dict[str, list]:
    """Per foot, the frame ids :func:`measured_zmp` places its forces at: the sole sensors'
    ('fsr'), else ``[F/T frame]`` plus, for a point foot, its contact point (sole frame)."""
    out = {}
    for f in feet:
        foot = robot.feet[f]
        if src == 'fsr':
            out[f] = [robot.frame_id(s) for s in foot.sensor_frames]
        else:
            out[f] = [robot.frame_id(foot.ft_frame or foot.link)]
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


def measured_zmp(robot: Robot, q: np.ndarray, src: str, force: Dict[str, np.ndarray],
                 loaded: np.ndarray, placements: Optional[Dict[int, np.ndarray]] = None):
    """Measured ZMP on the ground [m] (N, 2) and vertical force [N] (N,) of the loaded feet.

    A flat foot's wrench acts at its F/T frame (``ft_frame``, else its link); a point foot's
    force (its torques ignored) at its contact point, the origin of its sole frame; sole
    sensors ('fsr') at their frames.

    Args:
        robot: The robot.
        q: Floating-base configurations (N, nq), in the frame the ZMP is wanted in.
        src: 'wrench' or 'fsr'.
        force: Per foot, (N, 6) wrenches in the F/T frame or (N, k) sensor normal forces.
        loaded: (N, n_feet) bool in the robot's foot order: the feet that count.
        placements: The world placements of :func:`zmp_frames`' frames at ``q`` if already
            computed (``{frame id: (N, 3, 4)}``, as the base-state functions return them).

    Samples with a non-finite ``q`` or no loaded foot have a NaN ZMP and no force.
    """
    n = q.shape[0]
    feet = list(force)
    fids = zmp_frames(robot, feet, src)
    if placements is None:
        placements = frame_placements(robot, q, sorted({i for ids in fids.values()
                                                         for i in ids}))
    order = list(robot.feet)
    ok = np.isfinite(q).all(axis=1)
    on = {f: np.asarray(loaded[:, order.index(f)], bool) & ok for f in feet}
    if src == 'fsr':
        pos = np.stack([np.where(on[f][:, None], placements[i][:, :, 3], 0.0)
                        for f in feet for i in fids[f]], axis=1)
        frc = np.concatenate([np.where(on[f][:, None], force[f], 0.0) for f in feet], axis=1)
        zmp, fz = signals.zmp_from_sensors(frc, pos)
    else:
        w = np.zeros((n, 6))
        for f in feet:
            m = placements[fids[f][0]]
            wf, pos = np.asarray(force[f], float), m[:, :, 3]
            if len(fids[f]) > 1:  # a point foot: the force at the contact point, no torque
                wf = np.concatenate([wf[:, :3], np.zeros((n, 3))], axis=1)
                pos = placements[fids[f][1]][:, :, 3]
            w += np.where(on[f][:, None], signals.wrench_to_world(wf, m[:, :, :3], pos), 0.0)
        zmp, fz = signals.zmp_from_wrench(w)
    none = ~np.any([on[f] for f in feet], axis=0) if feet else np.ones(n, bool)
    zmp[none], fz[none] = np.nan, 0.0
    return zmp, fz
