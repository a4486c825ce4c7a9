"""Floating-base state from the stance contacts: the one implementation for every caller.

Every stance foot is still on flat ground (z = 0). Per sample:

- orientation: ``'imu'`` the IMU's (through the model's IMU placement; heading included),
  ``'imu_tilt'`` the IMU's roll and pitch with the yaw that puts the first stance sole's heading
  along x (Wu & Gao 2021: roll/pitch from the IMU halve the ZMP error floor of a flat sole), or
  ``'sole'`` the first stance sole flat on the ground with its heading along x (no IMU);
- position: the stance contact points' mean at the world origin (one foot: its sole frame);
- twist and acceleration: every stance contact still (a flat sole: 6 rows of its LOCAL
  Jacobian and spatial acceleration; a point foot, or any foot with ``rates_from_imu``: 3 rows,
  its contact point's linear velocity and classical acceleration), solved in least squares for
  the base. With ``rates_from_imu`` (or when the rows have rank < 6: one point foot), the gyro
  gives the base's angular velocity and ``gyro_dot`` its derivative, and only the linear part is
  solved from the contact rows (m/s and rad/s never share a least-squares problem).

:class:`StanceBase` solves one sample (the feedforward's 1 kHz cycle);
:func:`stance_base_state` runs it over a recording (``prepare``, the online folding, the
estimator). :func:`imu_linear_acceleration` measures the base's linear acceleration with the
IMU's accelerometer instead (``prepare``'s ``base_acc='imu'``: fast motions such as a trot).
"""

from __future__ import annotations

from typing import Dict, Optional, Sequence

import numpy as np
import pinocchio as pin

from legid_ros.core.contact.cop import is_point_foot
from legid_ros.core.contact.rule import GRAVITY
from legid_ros.core.conventions.convert import matrix_quat
from legid_ros.core.errors import BadInputError
from legid_ros.core.robot import Robot

ORIENTATIONS = ('imu', 'imu_tilt', 'sole')


class StanceBase:
    """Per-sample base state from the stance feet (see the module docstring).

    Args:
        robot: Floating-base robot with scalar joints.
        model: Model to compute with (default the robot's; e.g. the feedforward's copy with
            other inertials: only its kinematics are used).
    """

    def __init__(self, robot: Robot, model: Optional[pin.Model] = None):
        self.robot = robot
        self.model = model if model is not None else robot.model
        if not robot.floating:
            raise BadInputError('the stance base state needs a floating-base robot')
        if self.model.nq != self.model.nv + 1:
            raise BadInputError('the stance base state needs scalar joints')
        self.data = self.model.createData()
        self.feet = list(robot.feet)
        self.fids = {f: self.model.getFrameId(robot.feet[f].sole_frame) for f in self.feet}
        self.point = {f: is_point_foot(robot, f) for f in self.feet}
        self._use_gyro = {}  # (stance feet, rates_from_imu) -> angular rates from the gyro
        self.q = pin.neutral(self.model)
        self.v = np.zeros(self.model.nv)
        self.a = np.zeros(self.model.nv)
        pin.framesForwardKinematics(self.model, self.data, self.q)
        imu = robot.imu_frame
        self.r_bi = (self.data.oMf[self.model.getFrameId(imu)].rotation.copy()
                     if self.model.existFrame(imu) else np.eye(3))  # IMU axes in the base

    def _rows(self, on: Sequence[str], kind: str, points_only: bool) -> np.ndarray:
        """Stacked contact Jacobians ('jac') or drifts ('acc') of the stance feet."""
        model, data, out = self.model, self.data, []
        for f in on:
            fid = self.fids[f]
            if points_only or self.point[f]:
                if kind == 'jac':
                    out.append(pin.getFrameJacobian(model, data, fid,
                                                    pin.LOCAL_WORLD_ALIGNED)[:3])
                else:
                    out.append(pin.getFrameClassicalAcceleration(
                        model, data, fid, pin.LOCAL_WORLD_ALIGNED).linear)
            elif kind == 'jac':
                out.append(pin.getFrameJacobian(model, data, fid, pin.LOCAL))
            else:
                out.append(pin.getFrameAcceleration(model, data, fid, pin.LOCAL).vector)
        return np.vstack(out) if kind == 'jac' else np.concatenate(out)

    def base_rotation(self, q_j: np.ndarray, on: Sequence[str], orientation: str,
                      imu_quat: Optional[np.ndarray] = None) -> np.ndarray:
        """Base orientation in the world (3, 3) for the joint positions ``q_j`` [rad]."""
        if orientation == 'imu':
            return _quat_matrix(imu_quat) @ self.r_bi.T
        model, data, q = self.model, self.data, self.q
        q[:7] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
        q[7:] = q_j
        pin.forwardKinematics(model, data, q)
        r_sole = pin.updateFramePlacement(model, data, self.fids[on[0]]).rotation
        rot = r_sole.T  # the base in the first stance sole's frame
        if orientation == 'imu_tilt':
            rpy_imu = pin.rpy.matrixToRpy(_quat_matrix(imu_quat) @ self.r_bi.T)
            rot = pin.rpy.rpyToMatrix(rpy_imu[0], rpy_imu[1], pin.rpy.matrixToRpy(rot)[2])
        elif orientation != 'sole':
            raise BadInputError(f'orientation must be one of {ORIENTATIONS}, not '
                                f'{orientation!r}')
        return rot

    def solve(self, q_j: np.ndarray, qd_j: np.ndarray, qdd_j: np.ndarray, on: Sequence[str],
              rot: np.ndarray, w_base: Optional[np.ndarray] = None,
              wd_base: Optional[np.ndarray] = None, rates_from_imu: bool = False):
        """Base configuration, velocity and acceleration of one sample (views of the solver's
        arrays, valid until the next call; ``self.data`` holds its kinematics).

        Args:
            q_j, qd_j, qdd_j: Joint positions, velocities, accelerations [rad, /s, /s^2].
            on: The stance feet (at least one).
            rot: Base orientation in the world (3, 3) (:meth:`base_rotation`).
            w_base, wd_base: Base angular velocity [rad/s] and acceleration [rad/s^2] in base
                axes (the gyro's), used with ``rates_from_imu`` or when the contacts cannot
                fix the base rotation.
            rates_from_imu: Angular rates from the gyro, contacts as points.

        Raises:
            BadInputError: no stance foot, or the contacts cannot fix the base rotation and no
                gyro is given.
        """
        if not len(on):
            raise BadInputError('no stance foot')
        model, data, q, v, a = self.model, self.data, self.q, self.v, self.a
        q[:3] = 0.0
        q[3:7] = matrix_quat(rot)
        q[7:] = q_j
        # Jacobians and contact points do not depend on the base translation: one pass
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        q[:3] = -np.mean([data.oMf[self.fids[f]].translation for f in on], axis=0)
        jac = self._rows(on, 'jac', rates_from_imu)
        jb, jj = jac[:, :6], jac[:, 6:]
        key = (tuple(on), bool(rates_from_imu))
        use_gyro = self._use_gyro.get(key)
        if use_gyro is None:  # whether the contacts fix the base rotation: their layout's
            use_gyro = rates_from_imu or jb.shape[0] < 6 or np.linalg.matrix_rank(jb, 1e-9) < 6
            self._use_gyro[key] = use_gyro
        if use_gyro and w_base is None:
            raise BadInputError(f'stance {list(on)} cannot fix the base rotation; pass the gyro')
        # one factorisation for the velocity and the acceleration solves (same rows)
        block = jb[:, :3] if use_gyro else jb
        inv = (np.linalg.inv(block) if block.shape[0] == block.shape[1]
               else np.linalg.pinv(block))
        v[6:] = qd_j
        rhs = -jj @ qd_j
        if use_gyro:
            v[:3], v[3:6] = inv @ (rhs - jb[:, 3:] @ w_base), w_base
        else:
            v[:6] = inv @ rhs
        a[:6] = 0.0
        a[6:] = qdd_j
        pin.forwardKinematics(model, data, q, v, a)
        pin.updateFramePlacements(model, data)
        drift = self._rows(on, 'acc', rates_from_imu)
        if use_gyro:
            wd = np.zeros(3) if wd_base is None else wd_base
            a[:3], a[3:6] = inv @ (-drift - jb[:, 3:] @ wd), wd
        else:
            a[:6] = inv @ -drift
        return q, v, a


def stance_base_state(robot: Robot, q_j: np.ndarray, qd_j: np.ndarray, qdd_j: np.ndarray,
                      stance: np.ndarray, imu_quat: Optional[np.ndarray] = None,
                      gyro: Optional[np.ndarray] = None, gyro_dot: Optional[np.ndarray] = None,
                      rates_from_imu: bool = False, orientation: str = 'imu',
                      frames: Sequence[int] = ()) -> Dict[str, np.ndarray]:
    """Floating-base configuration, velocity and acceleration of N samples (module docstring).

    Args:
        robot: Floating-base robot (scalar joints).
        q_j, qd_j, qdd_j: Joint positions, velocities, accelerations (N, nj) [rad, /s, /s^2].
        stance: (N, n_feet) bool, feet in the robot's order: the feet standing still (the
            first one of a sample gives the heading of 'imu_tilt' and 'sole').
        imu_quat: IMU orientation in the world ``[x, y, z, w]`` (N, 4) ('imu', 'imu_tilt').
        gyro: IMU angular velocity in the IMU frame (N, 3) [rad/s].
        gyro_dot: Its time derivative (N, 3) [rad/s^2] (default zero).
        rates_from_imu: The base's angular rates from the gyro always, the contacts as points
            (for tall robots whose soles rock on their soft contacts: a sole's angular
            acceleration of 0.05 rad/s^2 moves the model ZMP of a 1 m high COM by ~5 mm).
        orientation: 'imu', 'imu_tilt' or 'sole'.
        frames: Frame ids whose world placements to return (at the returned ``q``).

    Returns:
        ``{'q': (N, nq), 'v': (N, nv), 'a': (N, nv)}``; samples without a stance foot are NaN.
        With ``frames``, also ``'placements'``: ``{frame id: (N, 3, 4)}`` rotation and
        translation [m] of each frame in the world (NaN without a stance foot).
    """
    solver = StanceBase(robot)
    model = solver.model
    q_j = np.atleast_2d(np.asarray(q_j, float))
    n, nj = q_j.shape
    if nj != model.nv - 6:
        raise BadInputError(f'{nj} joint columns for a model with {model.nv - 6} scalar joints')
    stance = np.asarray(stance, bool)
    if stance.shape != (n, len(solver.feet)):
        raise BadInputError(f'stance has shape {stance.shape}, expected ({n}, '
                            f'{len(solver.feet)})')
    if orientation not in ORIENTATIONS:
        raise BadInputError(f'orientation must be one of {ORIENTATIONS}, not {orientation!r}')
    if orientation != 'sole' and imu_quat is None:
        raise BadInputError(f"orientation {orientation!r} needs the IMU's quaternions")
    out = {k: np.full((n, d), np.nan) for k, d in (('q', model.nq), ('v', model.nv),
                                                   ('a', model.nv))}
    place = {f: np.full((n, 3, 4), np.nan) for f in frames}
    w_base = None if gyro is None else np.asarray(gyro, float) @ solver.r_bi.T  # base axes
    wd_base = None if gyro_dot is None else np.asarray(gyro_dot, float) @ solver.r_bi.T
    for k in np.flatnonzero(stance.any(axis=1)):
        on = [f for f, s in zip(solver.feet, stance[k]) if s]
        rot = solver.base_rotation(q_j[k], on, orientation,
                                   None if imu_quat is None else imu_quat[k])
        try:
            q, v, a = solver.solve(q_j[k], qd_j[k], qdd_j[k], on, rot,
                                   None if w_base is None else w_base[k],
                                   None if wd_base is None else wd_base[k], rates_from_imu)
        except BadInputError as exc:
            raise BadInputError(f'sample {k}: {exc}') from exc
        out['q'][k], out['v'][k], out['a'][k] = q, v, a
        for f, arr in place.items():
            m = solver.data.oMf[f]
            arr[k, :, :3], arr[k, :, 3] = m.rotation, m.translation
    if frames:
        out['placements'] = place
    return out


def imu_linear_acceleration(robot: Robot, q: np.ndarray, v: np.ndarray, a: np.ndarray,
                            imu_acc: np.ndarray, gravity: float = GRAVITY) -> np.ndarray:
    """The base's linear acceleration [m/s^2] (N, 3) measured by the IMU's accelerometer.

    The accelerometer's specific force ``f`` (IMU axes) plus gravity is the IMU point's
    acceleration; moved to the base origin (the IMU's place on the base, with the base's
    angular velocity ``w`` and acceleration ``wd``) and given as pinocchio's free-flyer
    (spatial) linear acceleration ``a_classical - w x v``. Against the contacts' double
    derivative of the joint kinematics it needs no stance foot to be still and differentiates
    nothing; a real accelerometer's bias ``b`` [m/s^2] moves the model ZMP of a COM at height
    ``h`` by ``h b / g``.

    Args:
        robot: Floating-base robot (its ``imu_frame`` rigidly on the base).
        q, v, a: Base state (N, nq), (N, nv), (N, nv) (orientation, twist and angular
            acceleration are read; :func:`stance_base_state`'s).
        imu_acc: Specific force in the IMU frame (N, 3) [m/s^2].
        gravity: [m/s^2].

    Raises:
        BadInputError: The IMU frame is not on the base.
    """
    model = robot.model
    data = model.createData()
    pin.framesForwardKinematics(model, data, pin.neutral(model))
    imu = robot.imu_frame
    if model.existFrame(imu) and model.frames[model.getFrameId(imu)].parentJoint != 1:
        raise BadInputError(f'the IMU frame {imu!r} is not on the base: its acceleration is '
                            "not the base's")
    m_bi = data.oMf[model.getFrameId(imu)] if model.existFrame(imu) else pin.SE3.Identity()
    r_bi, p_bi = m_bi.rotation, m_bi.translation  # the IMU's axes and place in the base
    q, v, a = (np.atleast_2d(np.asarray(x, float)) for x in (q, v, a))
    x, y, z, w = (q[:, 3:7] / np.linalg.norm(q[:, 3:7], axis=1, keepdims=True)).T
    # the world z axis in base axes: the third row of the base's rotation
    z_base = np.column_stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)])
    acc_imu = np.asarray(imu_acc, float) @ r_bi.T - gravity * z_base  # IMU point, base axes
    w_b, wd_b, v_lin = v[:, 3:6], a[:, 3:6], v[:, :3]
    p = np.broadcast_to(p_bi, w_b.shape)
    classical = acc_imu - np.cross(wd_b, p) - np.cross(w_b, np.cross(w_b, p))
    return classical - np.cross(w_b, v_lin)


def support_list(support, n: int) -> np.ndarray:
    """Support foot name per sample (n,) from one name or a sequence of n names."""
    if isinstance(support, str):
        return np.array([support] * n, dtype=object)
    sup = np.asarray(support, dtype=object)
    if sup.shape != (n,):
        raise BadInputError(f'support has shape {sup.shape}, expected ({n},)')
    return sup


def _quat_matrix(quat_xyzw: np.ndarray) -> np.ndarray:
    """Rotation matrix of a quaternion ``[x, y, z, w]`` (normalised here)."""
    x, y, z, w = np.asarray(quat_xyzw, float) / np.linalg.norm(quat_xyzw)
    return pin.Quaternion(w, x, y, z).toRotationMatrix()


def support_base_state(robot: Robot, q_j: np.ndarray, qd_j: np.ndarray, qdd_j: np.ndarray,
                       support='right', imu_quat: Optional[np.ndarray] = None,
                       frames: Sequence[int] = ()) -> Dict[str, np.ndarray]:
    """:func:`stance_base_state` on one flat support sole per sample (Wu & Gao 2021).

    The support sole frame is at the world origin, flat (z up, its yaw = world yaw) and still.
    With ``imu_quat`` the base roll and pitch come from the IMU instead (yaw still from the
    kinematics) and the sole centre stays at the origin: the soft contact tilts the sole by
    ~1 mrad, which the flat-sole model ignores. In double support pass either foot.

    Args:
        robot: Floating-base robot.
        q_j, qd_j, qdd_j: Joint positions, velocities, accelerations, (N, nj) [rad, /s, /s^2].
        support: Support foot name per sample, (N,), or one name for all.
        imu_quat: IMU orientation in the world ``[x, y, z, w]``, (N, 4), or None.
        frames: Frame ids whose world placements to return (at the returned ``q``).
    """
    if not robot.floating:
        raise BadInputError('support_base_state needs a floating-base robot')
    q_j = np.atleast_2d(np.asarray(q_j, float))
    n = q_j.shape[0]
    feet = list(robot.feet)
    sup = support_list(support, n)
    unknown = set(sup) - set(feet)
    if unknown:
        raise BadInputError(f'unknown support foot {sorted(map(str, unknown))[0]!r}; feet: '
                            f'{feet}')
    stance = np.stack([sup == f for f in feet], axis=1)
    return stance_base_state(robot, q_j, qd_j, qdd_j, stance, imu_quat,
                             orientation='sole' if imu_quat is None else 'imu_tilt',
                             frames=frames)
