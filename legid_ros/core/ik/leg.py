"""Kinematics of one redundant quadruped leg (Chen et al. 2021) from the pinocchio model.

Conventions (checked against pinocchio in ``test/core/test_ik_leg.py``):

* The *hip frame* is fixed to the trunk at the origin of ``<leg>_hip_roll``, axes parallel to
  the trunk (x forward, z up).
* The hip roll ``th1`` turns the leg plane about x; in the leg plane the pitch joints
  (hip pitch ``th2``, knee ``th3``, ankle ``th4``, all about -y) give absolute link angles from
  the downward vertical ``a1 = th2``, ``a2 = a1 + th3``, ``a3 = a2 + th4`` and
  ``x = l1 sin a1 + l2 sin a2 + l3 sin a3``, ``z = -(l1 cos a1 + l2 cos a2 + l3 cos a3)``.
* A foot point ``(x, y, z)`` in the hip frame maps to the leg plane by
  ``th1 = atan2(y, -z)`` and ``zp = -sqrt(y^2 + z^2)``.
* The passive spring (prismatic, 0 = uncompressed) shortens the distal link: ``l3 - s``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from legid_ros.core.description.errors import DescriptionKeyError
from legid_ros.core.errors import BadInputError, RobotDescriptionError
from legid_ros.core.robot import Robot, load_robot

LEGS = ('lf', 'rf', 'lh', 'rh')  # legs of the built-in quadruped, and the trot's places


@dataclass(frozen=True)
class LegGeometry:
    """Link lengths and joint ranges of one leg.

    Attributes:
        l1: Thigh length, hip pitch to knee [m].
        l2: Shank length, knee to ankle [m].
        l3: Distal length, ankle to foot at zero spring compression [m].
        lower: Lower limits of (hip roll, hip pitch, knee, ankle) [rad].
        upper: Upper limits of (hip roll, hip pitch, knee, ankle) [rad].
    """

    l1: float
    l2: float
    l3: float
    lower: np.ndarray
    upper: np.ndarray


def planar_fk(th: np.ndarray, geo: LegGeometry, spring: float = 0.0) -> np.ndarray:
    """Closed-form planar foot position, vectorised.

    Args:
        th: Pitch joints (th2, th3, th4), shape (..., 3) [rad].
        geo: Leg geometry.
        spring: Spring compression [m].

    Returns:
        Foot (x, z) in the leg plane, shape (..., 2) [m].
    """
    th = np.asarray(th, float)
    a1 = th[..., 0]
    a2 = a1 + th[..., 1]
    a3 = a2 + th[..., 2]
    l3 = geo.l3 - spring
    x = geo.l1 * np.sin(a1) + geo.l2 * np.sin(a2) + l3 * np.sin(a3)
    z = -(geo.l1 * np.cos(a1) + geo.l2 * np.cos(a2) + l3 * np.cos(a3))
    return np.stack([x, z], axis=-1)


def planar_jacobian(th: np.ndarray, geo: LegGeometry, spring: float = 0.0) -> np.ndarray:
    """Closed-form 2 x 3 Jacobian d(x, z)/d(th2, th3, th4), vectorised, shape (..., 2, 3)."""
    th = np.asarray(th, float)
    a1 = th[..., 0]
    a2 = a1 + th[..., 1]
    a3 = a2 + th[..., 2]
    l3 = geo.l3 - spring
    c1, c2, c3 = geo.l1 * np.cos(a1), geo.l2 * np.cos(a2), l3 * np.cos(a3)
    s1, s2, s3 = geo.l1 * np.sin(a1), geo.l2 * np.sin(a2), l3 * np.sin(a3)
    jx = np.stack([c1 + c2 + c3, c2 + c3, c3], axis=-1)
    jz = np.stack([s1 + s2 + s3, s2 + s3, s3], axis=-1)
    return np.stack([jx, jz], axis=-2)


def to_leg_plane(p: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Split hip-frame foot points (..., 3) into hip roll th1 [rad] and plane points (..., 2)."""
    p = np.asarray(p, float)
    th1 = np.arctan2(p[..., 1], -p[..., 2])
    zp = -np.hypot(p[..., 1], p[..., 2])
    return th1, np.stack([p[..., 0], zp], axis=-1)


def from_leg_plane(th1: np.ndarray, xz: np.ndarray) -> np.ndarray:
    """Inverse of :func:`to_leg_plane`: hip-frame points (..., 3) [m]."""
    xz = np.asarray(xz, float)
    th1 = np.asarray(th1, float)
    zp = xz[..., 1]
    return np.stack([xz[..., 0], -zp * np.sin(th1), zp * np.cos(th1)], axis=-1)


def leg_names(robot: Robot) -> Tuple[str, ...]:
    """Legs of a robot's description (``legs:``), in description order.

    Raises:
        RobotDescriptionError: The description has no ``legs:``.
    """
    legs = robot.description.get('legs') or {}
    if not isinstance(legs, dict) or not legs:
        raise DescriptionKeyError('legs', f'robot {robot.name!r} describes no legs',
                                  'add "legs: {NAME: {joints: [hip_roll, hip_pitch, knee, '
                                  'ankle_pitch], foot_frame: FRAME}}"', str(robot.urdf_path))
    return tuple(str(leg) for leg in legs)


def gait_role(robot: Robot, leg: str) -> Optional[str]:
    """Place of a leg in the trot (``lf``, ``rf``, ``lh``, ``rh``): its ``gait_role`` key,
    else its name when it is one of these, else None."""
    desc = (robot.description.get('legs') or {}).get(leg) or {}
    role = desc.get('gait_role', leg if leg in LEGS else None)
    if role is not None and role not in LEGS:
        raise DescriptionKeyError(f'legs.{leg}.gait_role', f'{role!r} is not a trot place',
                                  f'use one of {", ".join(LEGS)}', str(robot.urdf_path))
    return role


class LegKinematics:
    """Forward kinematics and Jacobian of one leg through pinocchio.

    The leg comes from the description's ``legs.<leg>``: ``joints`` (hip roll about x, then
    hip pitch, knee and ankle pitch about -y, as in Chen et al. 2021), ``foot_frame``, and an
    optional passive prismatic ``spring`` before the foot. The link lengths are read from the
    URDF and the planar model is checked against pinocchio's kinematics.

    Args:
        leg: Leg name (a key of the description's ``legs``; 'lf', 'rf', 'lh', 'rh' for the
            built-in quadruped).
        robot: A loaded robot (fixed base); the built-in quadruped when None.

    Raises:
        BadInputError: Unknown leg name.
        RobotDescriptionError: The leg's entry is incomplete, its joints are not in the
            model, the URDF disagrees with the description's link lengths, or the leg does
            not have the planar structure the IK assumes.
    """

    def __init__(self, leg: str, robot: Robot = None):
        self.robot = robot if robot is not None else load_robot('quadruped', floating_base=False)
        legs = {name: self.robot.description['legs'][name] for name in leg_names(self.robot)}
        if leg not in legs:
            raise BadInputError(f'unknown leg {leg!r}; legs: {", ".join(sorted(legs))}')
        self.leg = leg
        desc = legs[leg]
        where = str(self.robot.urdf_path)
        for key in ('joints', 'foot_frame'):
            if key not in desc:
                raise DescriptionKeyError(f'legs.{leg}.{key}', 'is missing',
                                          'give joints [hip_roll, hip_pitch, knee, '
                                          'ankle_pitch] and foot_frame', where)
        model = self.robot.model
        self.model = model
        self.data = model.createData()
        self.joint_names = [str(j) for j in desc['joints']]
        if len(self.joint_names) != 4:
            raise DescriptionKeyError(f'legs.{leg}.joints', f'{len(self.joint_names)} joints',
                                      'the redundant-leg IK needs 4: hip roll, hip pitch, '
                                      'knee, ankle pitch', where)
        self.spring_name = desc.get('spring')
        names = self.joint_names + ([self.spring_name] if self.spring_name else [])
        ids = [model.getJointId(j) for j in names]
        missing = [n for n, i in zip(names, ids) if i >= model.njoints]
        if missing:
            raise DescriptionKeyError(f'legs.{leg}.joints', f'joints {missing} are not moving '
                                      'joints of the model', 'name URDF joints (not locked '
                                      'ones)', where)
        self.joint_ids = ids[:4]
        self.spring_id = ids[4] if self.spring_name else None
        self.q_idx = np.array([model.joints[i].idx_q for i in ids[:4]])
        self.v_idx = np.array([model.joints[i].idx_v for i in ids[:4]])
        self.spring_q = model.joints[self.spring_id].idx_q if self.spring_name else None
        self.foot_frame = self.robot.frame_id(desc['foot_frame'])
        lengths = [float(np.linalg.norm(model.jointPlacements[i].translation))
                   for i in (ids[2], ids[3])] + [self._distal_length()]
        yaml_l = self.robot.description.get('link_lengths_m') or {}
        for name, value in zip(('l1', 'l2', 'l3'), lengths):
            if name in yaml_l and abs(yaml_l[name] - value) > 1e-9:
                raise RobotDescriptionError(
                    f'leg {leg!r}: {name} is {value} m in the URDF, {yaml_l[name]} m in the '
                    'description', where)
        lower = model.lowerPositionLimit[self.q_idx].copy()
        upper = model.upperPositionLimit[self.q_idx].copy()
        self.geometry = LegGeometry(*lengths, lower=lower, upper=upper)
        self._q = pin.neutral(model)
        self._check_planar(where)

    def _distal_length(self) -> float:
        """Ankle axis to foot at zero spring compression [m]."""
        model = self.model
        if self.spring_id is not None:
            return float(np.linalg.norm(model.jointPlacements[self.spring_id].translation))
        frame = model.frames[self.foot_frame]
        if frame.parentJoint != self.joint_ids[3]:
            raise DescriptionKeyError(f'legs.{self.leg}.foot_frame', 'is not on the ankle '
                                      'pitch link', 'name a frame fixed to the link after the '
                                      'last joint, or give the spring joint',
                                      str(self.robot.urdf_path))
        return float(np.linalg.norm(frame.placement.translation))

    def _check_planar(self, where: str) -> None:
        """The planar model of the IK reproduces pinocchio's foot positions."""
        mid = np.where(np.isfinite(self.geometry.lower) & np.isfinite(self.geometry.upper),
                       0.5 * (self.geometry.lower + self.geometry.upper), 0.0)
        for q_leg in (mid, mid + [0.05, -0.1, 0.1, -0.05]):
            th1, xz = to_leg_plane(self.fk(q_leg))
            model_xz = planar_fk(q_leg[1:], self.geometry)
            if abs(th1 - q_leg[0]) > 1e-6 or np.linalg.norm(xz - model_xz) > 1e-6:
                raise DescriptionKeyError(
                    f'legs.{self.leg}', 'does not have the planar structure of the IK (foot '
                    f'{np.linalg.norm(xz - model_xz) * 1000:.1f} mm off the planar model)',
                    'the IK needs hip roll about x and three pitch joints about -y in line, '
                    'with the foot below the ankle at zero angles', where)

    def configuration(self, q_leg: np.ndarray, spring: float = 0.0) -> np.ndarray:
        """Full model configuration with this leg at ``q_leg`` (4 joints [rad]), others 0."""
        q = self._q.copy()
        q[self.q_idx] = q_leg
        if self.spring_q is not None:
            q[self.spring_q] = spring
        elif spring:
            raise BadInputError(f'leg {self.leg!r} has no spring joint')
        return q

    def hip_placement(self) -> pin.SE3:
        """Placement of the hip frame in the model's root frame (trunk)."""
        parent = self.model.parents[self.joint_ids[0]]
        pin.forwardKinematics(self.model, self.data, self._q)
        return self.data.oMi[parent] * self.model.jointPlacements[self.joint_ids[0]]

    def fk(self, q_leg: np.ndarray, spring: float = 0.0) -> np.ndarray:
        """Foot position in the hip frame by pinocchio [m], shape (3,).

        Args:
            q_leg: (hip roll, hip pitch, knee, ankle) [rad].
            spring: Spring compression [m].
        """
        q = self.configuration(q_leg, spring)
        pin.framesForwardKinematics(self.model, self.data, q)
        return self.hip_placement().actInv(self.data.oMf[self.foot_frame]).translation.copy()

    def distal_pitch(self, q_leg: np.ndarray) -> float:
        """Absolute angle a3 of the distal link from the downward vertical by pinocchio [rad]."""
        q = self.configuration(q_leg)
        pin.framesForwardKinematics(self.model, self.data, q)
        rot = self.hip_placement().rotation.T @ self.data.oMf[self.foot_frame].rotation
        c, s = np.cos(q_leg[0]), np.sin(q_leg[0])
        plane = np.array([[1.0, 0.0, 0.0], [0.0, c, s], [0.0, -s, c]]) @ rot  # undo the roll
        # a rotation about -y by a3 has R[0, 0] = cos a3 and R[0, 2] = -sin a3
        return float(np.arctan2(-plane[0, 2], plane[0, 0]))

    def jacobian(self, q_leg: np.ndarray, spring: float = 0.0) -> np.ndarray:
        """d(foot position in the hip frame)/d(q_leg) by pinocchio, shape (3, 4)."""
        q = self.configuration(q_leg, spring)
        jac = pin.computeFrameJacobian(self.model, self.data, q, self.foot_frame,
                                       pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        return self.hip_placement().rotation.T @ jac[:3, self.v_idx]

    def planar_jacobian_pin(self, th: np.ndarray) -> np.ndarray:
        """Planar 2 x 3 Jacobian (x, z) / (th2, th3, th4) at th1 = 0 by pinocchio."""
        jac = self.jacobian(np.concatenate([[0.0], th]))
        return jac[[0, 2]][:, 1:]
