"""ZMP-identification excitation of the biped (Wu & Gao 2021): IK at knots, splines, ZMP guard.

Single support on the right foot (its sole is the world frame). The left foot moves between
random targets with its sole parallel to the ground and lifted; the COM moves between random
targets inside the sole, so the ZMP wanders. IK (pinocchio, Gauss-Newton on 18 tasks for 18
DOF) is solved only at knots; the 12 joint angles are interpolated by a clamped cubic spline
(C2), so ``q, qd, qdd`` are exact derivatives of one another. Segments whose ZMP would come
closer than the margin to the sole edge are slowed down (time-scaled) until it does not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

import numpy as np
import pinocchio as pin
from scipy.interpolate import CubicSpline

from legid_ros.core.errors import SolverError
from legid_ros.core.robot import Robot
from legid_ros.core.synthetic.dynamics import contact_dynamics

LOCAL = pin.ReferenceFrame.LOCAL
LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


@dataclass
class Target:
    """Task targets of one knot (world = right sole frame).

    Attributes:
        left_pos: Left sole centre [m].
        left_yaw: Left sole yaw [rad] (roll = pitch = 0: parallel to the ground).
        com_xy: Horizontal COM position [m].
        trunk_z: Height of the trunk (base) origin [m].
        trunk_yaw: Trunk yaw [rad] (roll = pitch = 0: upright).
    """

    left_pos: np.ndarray
    left_yaw: float
    com_xy: np.ndarray
    trunk_z: float
    trunk_yaw: float

    def blend(self, other: 'Target', s: float) -> 'Target':
        """Linear blend ``(1 - s) self + s other``."""
        return Target(*(((1 - s) * np.asarray(a) + s * np.asarray(b)) for a, b in zip(
            (self.left_pos, self.left_yaw, self.com_xy, self.trunk_z, self.trunk_yaw),
            (other.left_pos, other.left_yaw, other.com_xy, other.trunk_z, other.trunk_yaw))))


def _rz(yaw: float) -> np.ndarray:
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


class BipedIK:
    """Whole-body IK of the biped standing on one sole (the right one by default).

    The support sole is the IK's world frame; :class:`Target` ``left_pos``/``left_yaw`` are
    those of the other (moving) foot.

    Args:
        robot: The biped.
        model: Model holding the true parameters (the COM task uses them).
        support: Support foot, 'right' or 'left'.
    """

    def __init__(self, robot: Robot, model: pin.Model, support: str = 'right'):
        self.model = model
        self.data = model.createData()
        other = 'left' if support == 'right' else 'right'
        self.rs = robot.frame_id(robot.feet[support].sole_frame)
        self.ls = robot.frame_id(robot.feet[other].sole_frame)
        self.trunk = robot.frame_id(robot.base_link)
        self.lower = model.lowerPositionLimit[7:]
        self.upper = model.upperPositionLimit[7:]

    def initial(self) -> np.ndarray:
        """A bent-knee starting configuration."""
        q = pin.neutral(self.model)
        names = list(self.model.names)
        for side in ('l', 'r'):
            for joint, val in (('hip_pitch', -0.4), ('knee', 0.8), ('ankle_pitch', -0.4)):
                q[self.model.joints[names.index(f'{side}_{joint}')].idx_q] = val
        return q

    def residual(self, q: np.ndarray, tgt: Target) -> Tuple[np.ndarray, np.ndarray]:
        """Stacked task errors (18,) and their Jacobian (18, nv)."""
        model, data = self.model, self.data
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        errs, jacs = [], []
        m_r = data.oMf[self.rs]
        errs.append(pin.log6(m_r).vector)
        jacs.append(pin.Jlog6(m_r) @ pin.getFrameJacobian(model, data, self.rs, LOCAL))
        m_l = pin.SE3(_rz(tgt.left_yaw), np.asarray(tgt.left_pos)).actInv(data.oMf[self.ls])
        errs.append(pin.log6(m_l).vector)
        jacs.append(pin.Jlog6(m_l) @ pin.getFrameJacobian(model, data, self.ls, LOCAL))
        rot = _rz(tgt.trunk_yaw).T @ data.oMf[self.trunk].rotation
        errs.append(pin.log3(rot))
        jacs.append(pin.Jlog3(rot) @ pin.getFrameJacobian(model, data, self.trunk, LOCAL)[3:])
        errs.append([data.oMf[self.trunk].translation[2] - tgt.trunk_z])
        jacs.append(pin.getFrameJacobian(model, data, self.trunk, LWA)[2:3])
        jcom = pin.jacobianCenterOfMass(model, data, q)
        errs.append(data.com[0][:2] - tgt.com_xy)
        jacs.append(jcom[:2])
        return np.concatenate(errs), np.vstack(jacs)

    def solve(self, q0: np.ndarray, tgt: Target, tol: float = 1e-11, iters: int = 60):
        """Solve the IK from ``q0``; returns (q, ok) with ok = converged and within limits."""
        q = q0.copy()
        for _ in range(iters):
            err, jac = self.residual(q, tgt)
            if np.linalg.norm(err) < tol:
                break
            step = -jac.T @ np.linalg.solve(jac @ jac.T + 1e-10 * np.eye(len(err)), err)
            q = pin.integrate(self.model, q, step)
        else:
            return q, False
        qj = q[7:]
        inside = np.all(qj > self.lower + 0.02) and np.all(qj < self.upper - 0.02)
        return q, bool(inside and qj[3] > 0.15 and qj[9] > 0.15)


def sample_target(rng: np.random.Generator, sole_half: np.ndarray, margin: float,
                  side: float = 1.0) -> Target:
    """Random knot targets: the moving foot lifted beside the support one (on its left for
    ``side`` 1, its right for -1), COM inside the support sole."""
    com_box = sole_half - margin - 0.010
    return Target(left_pos=np.array([rng.uniform(-0.06, 0.10),
                                     side * rng.uniform(0.12, 0.16),
                                     rng.uniform(0.025, 0.07)]),
                  left_yaw=float(rng.uniform(-0.10, 0.10)),
                  com_xy=rng.uniform(-com_box, com_box),
                  trunk_z=float(rng.uniform(0.475, 0.52)),
                  trunk_yaw=float(rng.uniform(-0.08, 0.08)))


@dataclass
class JointTrajectory:
    """Knots of the joint spline and segment bookkeeping.

    Attributes:
        knots_q: Joint angles at the knots [rad], (K, nj).
        seg_durations: Duration of each move [s], (S,).
        knots_per_segment: Knots per move.
        targets: Task targets of every knot.
    """

    knots_q: np.ndarray
    seg_durations: np.ndarray
    knots_per_segment: int
    targets: List[Target]

    @property
    def knot_times(self) -> np.ndarray:
        """Knot times [s]: each move's duration split evenly."""
        dt = np.repeat(self.seg_durations / self.knots_per_segment, self.knots_per_segment)
        return np.concatenate([[0.0], np.cumsum(dt)])

    def spline(self) -> CubicSpline:
        """Clamped (zero end velocity) C2 cubic spline of the joint angles."""
        return CubicSpline(self.knot_times, self.knots_q, bc_type='clamped')

    def evaluate(self, t: np.ndarray):
        """Joint position, velocity, acceleration at times ``t`` [s]."""
        spl = self.spline()
        return spl(t), spl(t, 1), spl(t, 2)

    def segment_of(self, t: np.ndarray) -> np.ndarray:
        """Index of the move holding each time."""
        edges = np.concatenate([[0.0], np.cumsum(self.seg_durations)])
        return np.clip(np.searchsorted(edges, t, side='right') - 1, 0,
                       len(self.seg_durations) - 1)


def plan_knots(robot: Robot, model: pin.Model, duration_s: float, rng: np.random.Generator,
               zmp_margin: float, speed_scale: float, segment_s: Tuple[float, float],
               knots_per_segment: int, support: str = 'right',
               start: Optional[Tuple[np.ndarray, Target]] = None) -> JointTrajectory:
    """Random targets and IK at every knot, covering at least ``duration_s``.

    Args:
        support: Support foot ('right': the protocol of Wu & Gao 2021); targets are in its
            sole frame.
        start: Start configuration (full, support sole at the origin) and its targets
            (default: the lifted-left-foot posture of the right-support protocol).
    """
    ik = BipedIK(robot, model, support)
    sole_half = np.asarray(robot.feet[support].sole_size) / 2
    side = 1.0 if support == 'right' else -1.0
    if start is None:
        tgt = Target(left_pos=np.array([0.02, 0.13, 0.05]), left_yaw=0.0, com_xy=np.zeros(2),
                     trunk_z=0.50, trunk_yaw=0.0)
        q, ok = ik.solve(ik.initial(), tgt)
    else:
        (q, tgt), ok = start, True
    if not ok:
        raise SolverError('whole-body IK failed at the initial posture', 'no convergence')
    knots, targets, durations = [q[7:]], [tgt], []
    while sum(durations) < duration_s + 1.0:
        for _attempt in range(30):
            nxt = sample_target(rng, sole_half, zmp_margin, side)
            q_k, seg_q, seg_t = q, [], []
            for k in range(1, knots_per_segment + 1):
                s = 0.5 * (1 - np.cos(np.pi * k / knots_per_segment))
                sub = tgt.blend(nxt, s)
                q_k, ok = ik.solve(q_k, sub)
                if not ok:
                    break
                seg_q.append(q_k[7:])
                seg_t.append(sub)
            if ok:
                break
        else:
            raise SolverError('whole-body IK kept failing on random targets', 'no convergence')
        knots.extend(seg_q)
        targets.extend(seg_t)
        durations.append(rng.uniform(*segment_s) / speed_scale)
        q, tgt = q_k, nxt
    return JointTrajectory(np.array(knots), np.array(durations), knots_per_segment, targets)


def zmp_violations(traj: JointTrajectory, model: pin.Model, sole_id: int, t: np.ndarray,
                   limit: np.ndarray) -> np.ndarray:
    """Indices of the moves where the ZMP leaves ``|zmp| <= limit`` at times ``t``."""
    qj, qdj, qddj = traj.evaluate(t)
    dyn = contact_dynamics(model, model.createData(), qj, qdj, qddj, sole_id)
    bad = np.any(np.abs(dyn.zmp) > limit, axis=1) | (dyn.wrench[:, 2] <= 0)
    return np.unique(traj.segment_of(t[bad]))


def guard_zmp(traj: JointTrajectory, model: pin.Model, sole_id: int, duration_s: float,
              limit: np.ndarray, check_hz: float = 200.0, stretch: float = 1.25,
              rounds: int = 40) -> int:
    """Slow down (time-scale) the moves whose ZMP would leave the limit; returns rounds used."""
    for r in range(rounds):
        t = np.arange(0.0, min(duration_s, traj.knot_times[-1]), 1.0 / check_hz)
        bad = zmp_violations(traj, model, sole_id, t, limit)
        if bad.size == 0:
            return r
        traj.seg_durations[bad] *= stretch
    raise SolverError('could not keep the ZMP inside the sole by slowing the motion',
                      'zmp outside', rounds)
