"""A standing excitation for any described robot, planned on its CAD model.

The robot stands on all its feet; the trunk shifts, tilts and bobs between random targets, then
each foot in turn is lifted over the support of the others (the COM is first moved over that
support: the other sole of a biped, the triangle of the other three feet of a quadruped), moved
between a few random points and put back where it was. Targets are blended with a cosine between
waypoints; a damped least-squares whole-body IK (pinocchio) solves every knot, stance feet held
(flat soles in 6-D, point feet in 3-D), COM, trunk orientation and height as tasks; the joint
reference is a clamped cubic spline through the knots. Slow (waypoints 1-3 s apart), so the ZMP
stays near the COM's ground projection, which the plan keeps inside the support polygon.
World: flat ground z = 0, the feet's start positions around the origin.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np
import pinocchio as pin
from scipy.interpolate import CubicSpline

from legid_ros.core.errors import BadInputError, SolverError
from legid_ros.core.robot import Robot

KNOT_S = 0.2  # [s] between IK knots
STAND_WAYPOINT_S = 2.0  # [s]
SWING_WAYPOINT_S = 1.5  # [s]
SHIFT_S, LIFT_S, DOWN_S, BACK_S = 2.5, 1.0, 1.0, 2.0  # [s]
POSTURE_WEIGHT = 0.03  # IK pull toward the start posture [1/rad]
JOINT_WEIGHT = 10.0  # IK weight of a joint target [1/rad] (a swing foot's is 10 [1/m])
MAX_STEP_RAD = 0.1  # largest IK step per iteration [rad or m]
#: Fractions of the way to a random target tried when the IK cannot reach it (a robot whose
#: joint ranges are narrower than the targets assume: G1's ankle roll, +-0.26 rad)
RETREAT = (0.5, 0.25, 0.0)


@dataclass
class StandingPlan:
    """Knots of the excitation and the phases they belong to.

    Attributes:
        t: Knot times [s] (K,).
        q: Full configurations at the knots (K, nq), world frame (ground z = 0).
        phases: ``(name, t0 [s], t1 [s], stance feet)`` in order.
        feet_world: Per foot, its sole frame's start placement in the world.
        tempered: ``(waypoint, fraction)`` of every random target the IK could not reach,
            replaced by the reachable point that fraction of the way to it.
    """

    t: np.ndarray
    q: np.ndarray
    phases: List[Tuple[str, float, float, Tuple[str, ...]]]
    feet_world: Dict[str, pin.SE3] = field(default_factory=dict)
    tempered: List[Tuple[str, float]] = field(default_factory=list)

    @property
    def duration_s(self) -> float:
        """Length of the plan [s]."""
        return float(self.t[-1])

    def joint_reference(self, t: np.ndarray) -> np.ndarray:
        """Joint positions [rad] at times ``t`` [s] (clamped cubic spline through the knots)."""
        spline = CubicSpline(self.t, self.q[:, 7:], bc_type='clamped')
        return spline(np.clip(t, 0.0, self.t[-1]))

    def stance_at(self, t: np.ndarray) -> Dict[str, np.ndarray]:
        """Per foot, whether the plan stands on it at each time (N,) bool."""
        feet = list(self.feet_world)
        out = {f: np.zeros(len(t), bool) for f in feet}
        for k, (_, t0, t1, stance) in enumerate(self.phases):
            sel = (t >= t0) & ((t < t1) if k < len(self.phases) - 1 else (t <= t1 + 1e-9))
            for f in stance:
                out[f][sel] = True
        return out


@dataclass
class _Target:
    com_xy: np.ndarray
    rpy: np.ndarray
    z: float
    swing: Dict[str, np.ndarray] = field(default_factory=dict)  # foot -> world position
    joints: Dict[int, float] = field(default_factory=dict)  # actuated index -> angle [rad]

    def blend(self, other: '_Target', s: float) -> '_Target':
        w = 0.5 * (1 - np.cos(np.pi * s))
        swing = {f: (1 - w) * _pad(p, other.swing.get(f, p)) + w * _pad(other.swing.get(f, p), p)
                 for f, p in self.swing.items()}
        for f, p in other.swing.items():
            swing.setdefault(f, p)
        joints = {a: (1 - w) * self.joints.get(a, v) + w * v for a, v in other.joints.items()}
        return _Target((1 - w) * self.com_xy + w * other.com_xy,
                       (1 - w) * self.rpy + w * other.rpy, (1 - w) * self.z + w * other.z,
                       swing, joints)


def _pad(p: np.ndarray, like: np.ndarray) -> np.ndarray:
    """A swing target (position [m], or position and roll-pitch-yaw [rad]) padded with zero
    angles to the length of ``like``."""
    p = np.asarray(p, float)
    return np.concatenate([p, np.zeros(len(like) - len(p))]) if len(p) < len(like) else p


class _WholeBodyIK:
    """Damped least squares on stance feet, swing feet, joint targets, COM, trunk orientation
    and height."""

    def __init__(self, robot: Robot, feet_world: Dict[str, pin.SE3]):
        self.robot = robot
        self.model = robot.model
        self.data = self.model.createData()
        self.feet_world = feet_world
        self.fid = {f: robot.frame_id(ft.sole_frame) for f, ft in robot.feet.items()}
        self.point = {f: ft.contact == 'point' or ft.sole_size is None
                      for f, ft in robot.feet.items()}
        self.lo = self.model.lowerPositionLimit[7:]
        self.hi = self.model.upperPositionLimit[7:]
        self.posture = None  # joint angles the solution is gently pulled toward [rad]

    def _foot_rows(self, q, foot: str, target: pin.SE3, weight: float, rows: list) -> None:
        m = self.data.oMf[self.fid[foot]]
        if self.point[foot]:
            jac = pin.getFrameJacobian(self.model, self.data, self.fid[foot],
                                       pin.LOCAL_WORLD_ALIGNED)[:3]
            rows.append((weight, m.translation - target.translation, jac))
        else:
            jac = pin.getFrameJacobian(self.model, self.data, self.fid[foot], pin.LOCAL)
            rows.append((weight, pin.log6(target.inverse() * m).vector, jac))

    def solve(self, q: np.ndarray, tgt: _Target, stance, iters: int = 40) -> Tuple[np.ndarray,
                                                                                   float]:
        """IK from ``q``; returns the configuration and the largest stance-foot error [m]."""
        model, data = self.model, self.data
        err_stance = np.inf
        for _ in range(iters):
            pin.computeJointJacobians(model, data, q)
            pin.updateFramePlacements(model, data)
            rows = []
            for f in stance:
                self._foot_rows(q, f, self.feet_world[f], 100.0, rows)
            err_stance = max(float(np.abs(r[1]).max()) for r in rows) if rows else 0.0
            for f, p in tgt.swing.items():  # position, or position + rpy about the start
                rot = self.feet_world[f].rotation
                if len(p) == 6:
                    rot = pin.rpy.rpyToMatrix(*p[3:]) @ rot
                self._foot_rows(q, f, pin.SE3(rot, p[:3]), 10.0, rows)
            com = pin.centerOfMass(model, data, q)
            jcom = pin.jacobianCenterOfMass(model, data, q)
            rows.append((10.0, com[:2] - tgt.com_xy, jcom[:2]))
            r_base = pin.Quaternion(q[6], q[3], q[4], q[5]).toRotationMatrix()
            r_tgt = pin.rpy.rpyToMatrix(*tgt.rpy)
            j_rot = np.zeros((3, model.nv))
            j_rot[:, 3:6] = np.eye(3)
            rows.append((1.0, pin.log3(r_tgt.T @ r_base), j_rot))
            j_z = np.zeros((1, model.nv))
            j_z[0, :3] = r_base[2]
            rows.append((1.0, np.array([q[2] - tgt.z]), j_z))
            if tgt.joints:
                idx = np.fromiter(tgt.joints, int)
                j_joint = np.zeros((len(idx), model.nv))
                j_joint[np.arange(len(idx)), 6 + idx] = 1.0
                rows.append((JOINT_WEIGHT, q[7 + idx] - np.fromiter(tgt.joints.values(),
                                                                    float), j_joint))
            if self.posture is not None:
                j_post = np.zeros((model.nv - 6, model.nv))
                j_post[:, 6:] = np.eye(model.nv - 6)
                rows.append((POSTURE_WEIGHT, q[7:] - self.posture, j_post))
            a = np.vstack([w * j for w, _, j in rows])
            b = np.concatenate([w * e for w, e, _ in rows])
            dq = -np.linalg.solve(a.T @ a + 1e-6 * np.eye(model.nv), a.T @ b)
            dq *= min(1.0, MAX_STEP_RAD / max(np.abs(dq).max(), 1e-12))
            q = pin.integrate(model, q, dq)
            q[7:] = np.clip(q[7:], self.lo, self.hi)
            if np.abs(dq).max() < 1e-7:
                break
        return q, err_stance


def _polygon(robot: Robot, feet_world: Dict[str, pin.SE3], stance) -> np.ndarray:
    """Corner points (M, 2) of the stance feet (sole corners, or the contact points) [m]."""
    pts = []
    for f in stance:
        m = feet_world[f]
        size = robot.feet[f].sole_size
        if size is None or robot.feet[f].contact == 'point':
            pts.append(m.translation[:2])
            continue
        for sx, sy in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
            pts.append(m.act(np.array([sx * size[0] / 2, sy * size[1] / 2, 0.0]))[:2])
    return np.array(pts)


def _inside(rng, pts: np.ndarray, shrink: float) -> np.ndarray:
    """A random point of the polygon's hull moved toward its centroid by ``1 - shrink``."""
    c = pts.mean(axis=0)
    w = rng.dirichlet(np.ones(len(pts)))
    return c + shrink * (w @ pts - c)


def _stand_pose(robot: Robot, drop: float) -> Tuple[np.ndarray, Dict[str, pin.SE3], float]:
    """Neutral joints, base placed with the soles on the ground, then lowered by ``drop`` [-]
    of the leg length (knees bent) by IK; returns (q, foot placements, trunk height [m])."""
    model = robot.model
    data = model.createData()
    q = pin.neutral(model)
    pin.framesForwardKinematics(model, data, q)
    soles = {f: data.oMf[robot.frame_id(ft.sole_frame)] for f, ft in robot.feet.items()}
    low = min(m.translation[2] for m in soles.values())
    q[2] = -low
    pin.framesForwardKinematics(model, data, q)
    feet_world = {}
    for f, ft in robot.feet.items():
        m = data.oMf[robot.frame_id(ft.sole_frame)].copy()
        m.translation = m.translation * np.array([1.0, 1.0, 0.0])
        if not (ft.contact == 'point' or ft.sole_size is None):
            yaw = np.arctan2(m.rotation[1, 0], m.rotation[0, 0])
            m.rotation = pin.rpy.rpyToMatrix(0.0, 0.0, yaw)
        feet_world[f] = m
    height = float(q[2])
    # off the straight-leg singularity: every joint nudged, inside its limits [rad]
    q[7:] = np.clip(q[7:] + 0.05, model.lowerPositionLimit[7:], model.upperPositionLimit[7:])
    ik = _WholeBodyIK(robot, feet_world)
    centre = np.mean([m.translation[:2] for m in feet_world.values()], axis=0)
    q, err = ik.solve(q, _Target(centre, np.zeros(3), height * (1 - drop)), list(robot.feet),
                      iters=300)
    if err > 1e-4:
        raise SolverError(f'start posture: stance feet {err * 1e3:.2f} mm off', 'ik')
    return q, feet_world, height * (1 - drop)


def plan_standing(robot: Robot, duration_s: float, seed: int = 0, drop: float = 0.12,
                  lift_m: Optional[float] = None, knot_s: float = KNOT_S) -> StandingPlan:
    """The standing excitation of ``robot`` covering ``duration_s`` [s].

    Args:
        robot: Floating-base robot with feet (flat soles or point feet), CAD inertials.
        duration_s: Length [s] (at least 20 s: a lift of every foot takes ~10 s).
        seed: Seed of the random targets.
        drop: Trunk lowered by this fraction of its standing height (bent knees) [-].
        lift_m: Height a lifted foot is raised [m] (default 8 % of the trunk height).
        knot_s: Time between IK knots [s].

    Raises:
        BadInputError: No feet, not floating, too short.
        SolverError: The IK cannot hold a stance foot (the robot cannot make the move).
    """
    if not robot.floating or not robot.feet:
        raise BadInputError('the standing excitation needs a floating robot with feet')
    feet = list(robot.feet)
    per_foot = SHIFT_S + LIFT_S + 2 * SWING_WAYPOINT_S + DOWN_S + BACK_S
    if duration_s < len(feet) * per_foot + 2 * STAND_WAYPOINT_S:
        raise BadInputError(f'duration {duration_s:g} s is too short for {len(feet)} feet: '
                            f'give at least {len(feet) * per_foot + 2 * STAND_WAYPOINT_S:g} s')
    rng = np.random.default_rng([seed, 9191])
    q, feet_world, z0 = _stand_pose(robot, drop)
    lift = 0.08 * z0 if lift_m is None else float(lift_m)
    n_swing = max(2, int(round((0.55 * duration_s / len(feet) - per_foot) / SWING_WAYPOINT_S))
                  + 2)
    stand_s = duration_s - len(feet) * (per_foot + (n_swing - 2) * SWING_WAYPOINT_S)
    all_pts = _polygon(robot, feet_world, feet)
    waypoints: List[Tuple[str, float, _Target, Tuple[str, ...]]] = []
    start = _Target(all_pts.mean(axis=0), np.zeros(3), z0)
    # name, duration to reach the target, target, stance during the move
    for _ in range(max(1, int(stand_s // STAND_WAYPOINT_S))):
        tgt = _Target(_inside(rng, all_pts, 0.45), rng.uniform(-1, 1, 3) * [0.06, 0.06, 0.08],
                      z0 * (1 + rng.uniform(-0.04, 0.03)))
        waypoints.append(('stand', STAND_WAYPOINT_S, tgt, tuple(feet)))
    for f in feet:
        others = tuple(g for g in feet if g != f)
        pts = _polygon(robot, feet_world, others)
        shrink = 0.25 if len(others) == 1 else 0.15
        centre = pts.mean(axis=0)
        home = feet_world[f].translation.copy()
        over = _Target(centre, np.zeros(3), z0)
        waypoints.append((f'shift_{f}', SHIFT_S, over, tuple(feet)))
        up = _Target(centre, np.zeros(3), z0, {f: home + [0.0, 0.0, lift]})
        waypoints.append((f'lift_{f}', LIFT_S, up, others))
        for _ in range(n_swing):
            p = home + np.concatenate([rng.uniform(-1, 1, 2) * 0.35 * lift, [lift * rng.uniform(
                0.7, 1.3)]])
            tgt = _Target(_inside(rng, pts, shrink), rng.uniform(-1, 1, 3) * [0.03, 0.03, 0.05],
                          z0 * (1 + rng.uniform(-0.03, 0.02)), {f: p})
            waypoints.append((f'swing_{f}', SWING_WAYPOINT_S, tgt, others))
        waypoints.append((f'down_{f}', DOWN_S, _Target(centre, np.zeros(3), z0, {f: home}),
                          others))
        waypoints.append((f'back_{f}', BACK_S, _Target(all_pts.mean(axis=0), np.zeros(3), z0),
                          tuple(feet)))
    return _solve_knots(robot, q, feet_world, start, waypoints, knot_s, retreat=RETREAT)


def _limits_text(robot: Robot, ik: '_WholeBodyIK', q: np.ndarray) -> str:
    """The joints of ``q`` at a limit of ``ik``, as text ('' when none)."""
    at = [f'{n} {q[7 + i]:+.3f} rad' for i, n in enumerate(robot.actuated_joint_names)
          if q[7 + i] <= ik.lo[i] + 1e-6 or q[7 + i] >= ik.hi[i] - 1e-6]
    return f'; at their limits: {", ".join(at)}' if at else ''


def _solve_knots(robot, q, feet_world, start, waypoints, knot_s,
                 limit_margin: float = 0.0, retreat: Tuple[float, ...] = ()) -> StandingPlan:
    """IK at every knot of the waypoints; ``limit_margin``: fraction of each joint's range kept
    free at both ends [-]; ``retreat``: for a random target (a 'stand' or 'swing' waypoint)
    the IK cannot reach, the fractions of the way to it tried instead, in order (the targets
    before and after lie inside the same support, so every blend of them does; a shift, lift or
    put-down is never cut short). Raises :class:`SolverError` naming the joints at their
    limits when no fraction is reachable."""
    ik = _WholeBodyIK(robot, feet_world)
    ik.posture = q[7:].copy()
    if limit_margin > 0:
        span = ik.hi - ik.lo
        ik.lo, ik.hi = ik.lo + limit_margin * span, ik.hi - limit_margin * span
    ts, qs, phases, tempered = [0.0], [q.copy()], [], []
    t, prev = 0.0, start
    for name, dur, tgt, stance in waypoints:
        n = max(2, int(round(dur / knot_s)))
        for f in tgt.swing:  # a foot about to lift starts from where it stands
            prev.swing.setdefault(f, feet_world[f].translation.copy())
        for a in tgt.joints:  # a joint target starts from the joint's angle
            prev.joints.setdefault(a, float(q[7 + a]))
        fractions = (1.0,) + (tuple(retreat) if name.startswith(('stand', 'swing')) else ())
        for frac in fractions:
            end = tgt if frac == 1.0 else prev.blend(tgt, frac)
            q_k, knots = q, []
            for k in range(1, n + 1):
                q_k, err = ik.solve(q_k, prev.blend(end, k / n), stance)
                if err > 2e-3:
                    break
                knots.append(q_k.copy())
            if len(knots) == n:
                break
        else:
            raise SolverError(f'excitation {name}: stance feet {err * 1e3:.1f} mm off'
                              + _limits_text(robot, ik, q_k), 'ik')
        if frac < 1.0:
            tempered.append((name, float(frac)))
        tgt, q = end, knots[-1]
        ts.extend(t + dur * k / n for k in range(1, n + 1))
        qs.extend(knots)
        phases.append((name, t, t + dur, stance))
        t += dur
        # a lifted foot stays where the last target put it
        prev = _Target(tgt.com_xy, tgt.rpy, tgt.z,
                       dict(tgt.swing) if name.startswith(('lift', 'swing')) else {})
    return StandingPlan(np.array(ts), np.array(qs), phases, feet_world, tempered)
