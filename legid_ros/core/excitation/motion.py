"""The parameterised whole-body motion the excitation design chooses among.

A motion is a sequence of support phases on the CAD model: standing on every foot while the
trunk shifts, tilts and bobs; then, foot after foot, the COM moved over the support of the
others, the foot lifted, moved through a few random swing targets and put back where it stood.
A swing target is drawn either around the foot's home (position and, for a flat sole,
orientation about its start: ``swing_xy``, ``swing_z``, ``swing_rpy``) or, with ``swing_joint``
set, in the swing leg's joint space: every joint of the leg within ``swing_joint`` of its start
angle and inside its range, reached along a straight joint path that keeps the sole above the
ground and the robot free of self-collision (a joint target of the IK). Either way the last one
brings the foot back over its home (the lifted posture), so it is put down vertically. The
leg's links turn through wide, independent angles, so each one's mass and COM move the
whole-body COM (and the ZMP) differently from the others'.
The knots are solved by the whole-body IK of :mod:`legid_ros.core.sim.described.excitation`
(stance feet held, COM and trunk as tasks, joints kept ``limit_margin`` inside their ranges) and
joined by a clamped cubic spline, so the result is a
:class:`~legid_ros.core.sim.described.excitation.StandingPlan` the MuJoCo run tracks as it
tracks the standing excitation.

:class:`MotionParams` holds the few numbers the design varies: swing reach and lift, swing-sole
tilt or joint-space sweep, trunk tilt and height, speed, the share of time standing, the knee
bend and the seed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import List, Optional, Tuple

import numpy as np
import pinocchio as pin

from legid_ros.core.errors import BadInputError, SolverError
from legid_ros.core.excitation.constraints import swing_clearance
from legid_ros.core.robot import Robot
from legid_ros.core.sim.described.excitation import (StandingPlan, _inside, _polygon,
                                                     _solve_knots, _stand_pose, _Target)


@dataclass(frozen=True)
class MotionParams:
    """Numbers of one candidate motion (lengths relative to the trunk height ``z0``).

    Attributes:
        swing_xy: Horizontal reach of a swing target around the foot's home [-] of ``z0``.
        swing_z: Lift of a swing target above the ground [-] of ``z0`` (its mean).
        swing_rpy: Largest roll / pitch / yaw of a flat swing sole about its start [rad].
        trunk_rpy: Largest trunk roll / pitch / yaw [rad].
        trunk_z: Largest trunk height change [-] of ``z0``.
        com_shrink: Random COM targets within this share of the support polygon [-].
        swing_s: Time between swing targets [s].
        stand_share: Share of the duration standing on every foot [-].
        drop: Knee bend of the start posture (trunk lowered by this share of its height) [-].
        limit_margin: Share of every joint range left free at both ends [-].
        seed: Seed of the random targets.
        swing_joint: Largest change of a swing leg's joint from its start angle [rad] (0:
            swing targets around the foot's home instead).
    """

    swing_xy: float = 0.03
    swing_z: float = 0.08
    swing_rpy: float = 0.0
    trunk_rpy: float = 0.06
    trunk_z: float = 0.03
    com_shrink: float = 0.25
    swing_s: float = 1.5
    stand_share: float = 0.45
    drop: float = 0.12
    limit_margin: float = 0.05
    seed: int = 0
    swing_joint: float = 0.0

    def scaled(self, k: float, **changes) -> 'MotionParams':
        """The amplitudes (reach, lift, tilts) times ``k``; other fields from ``changes``."""
        d = asdict(self)
        for key in ('swing_xy', 'swing_z', 'swing_rpy', 'trunk_rpy', 'trunk_z', 'swing_joint'):
            d[key] = d[key] * k
        d.update(changes)
        return MotionParams(**d)

    def as_dict(self) -> dict:
        """Plain form."""
        return {k: (int(v) if k == 'seed' else float(v)) for k, v in asdict(self).items()}


#: The standing excitation's numbers (what the robot is known to do safely)
SAFE = MotionParams()
SHIFT_S, LIFT_S, DOWN_S, BACK_S, STAND_S = 2.5, 1.0, 1.0, 2.0, 2.0  # [s]
#: Mean speed of a foot put down, at most [m/s] (the ``down`` phase lasts at least ``DOWN_S``):
#: Talos's soles put down from 25 cm in 1 s hit the ground at 690 N, rolled the robot onto
#: the other sole's edge (the landed foot rose 7 mm) and the other foot slid 3.5 mm when it
#: landed again; in 2 s, 1.2 mm
DOWN_SPEED_MPS = 0.125
JOINT_DRAWS = 30  # joint-space draws of one swing target before the lowest one is kept


def down_s(params: MotionParams, z0: float) -> float:
    """Length of a ``down`` phase [s] for a trunk height ``z0`` [m]."""
    return max(DOWN_S, params.swing_z * z0 / DOWN_SPEED_MPS)


def min_duration_s(robot: Robot, params: MotionParams = SAFE, z0: Optional[float] = None
                   ) -> float:
    """Shortest duration with two swing targets per foot [s] (``z0``: trunk height of the
    start posture [m], default from the robot)."""
    if z0 is None:
        z0 = _stand_pose(robot, params.drop)[2]
    per_foot = SHIFT_S + LIFT_S + 2 * params.swing_s + down_s(params, z0) + BACK_S
    return len(robot.feet) * per_foot + 2 * STAND_S


def plan_motion(robot: Robot, duration_s: float, params: MotionParams = SAFE,
                knot_s: float = 0.2, check=None, free=None) -> StandingPlan:
    """The motion of ``params`` over ``duration_s`` [s], planned on the CAD model.

    ``free(q) -> bool`` (no self-collision at ``q``) screens the joint-sweep draws before the
    IK; ``check(q_knots, phase_name, stance, feet_world) -> bool`` accepts a waypoint's knots (a
    random target failing it is drawn again; see :class:`_Knots`).

    Raises:
        BadInputError: Not a floating robot with feet, or too short.
        SolverError: The IK cannot hold a stance foot.
    """
    if not robot.floating or not robot.feet:
        raise BadInputError('an excitation needs a floating robot with feet')
    p = params
    q, feet_world, z0 = _stand_pose(robot, p.drop)
    shortest = min_duration_s(robot, params, z0)
    if duration_s < shortest - 1e-9:
        raise BadInputError(f'duration {duration_s:g} s is too short for {len(robot.feet)} '
                            f'feet: give at least {shortest:g} s')
    rng = np.random.default_rng([p.seed, 2626])
    feet = list(robot.feet)
    t_down = down_s(p, z0)
    per_foot = SHIFT_S + LIFT_S + t_down + BACK_S
    swing_total = max(2 * len(feet) * p.swing_s, (1 - p.stand_share) * duration_s
                      - len(feet) * per_foot)
    n_swing = max(2, int(swing_total / len(feet) // p.swing_s))
    stand_s = duration_s - len(feet) * (per_foot + n_swing * p.swing_s)
    all_pts = _polygon(robot, feet_world, feet)
    centre_all = all_pts.mean(axis=0)
    start = _Target(centre_all, np.zeros(3), z0)

    def trunk(scale: float = 1.0) -> Tuple[np.ndarray, float]:
        rpy = rng.uniform(-1, 1, 3) * p.trunk_rpy * scale
        return rpy, z0 * (1 + rng.uniform(-1.0, 0.6) * p.trunk_z * scale)

    n_stand = max(1, int(stand_s // STAND_S))
    sweep = _JointSweep(robot, q, p, rng, free)
    solver = _Knots(robot, q, feet_world, start, knot_s, p.limit_margin, check)
    for _ in range(n_stand):
        solver.add('stand', stand_s / n_stand, lambda: _Target(
            _inside(rng, all_pts, 1.6 * p.com_shrink), *trunk()), tuple(feet))
    for f in feet:
        others = tuple(g for g in feet if g != f)
        pts = _polygon(robot, feet_world, others)
        centre = pts.mean(axis=0)
        home = feet_world[f].translation.copy()
        flat = not (robot.feet[f].contact == 'point' or robot.feet[f].sole_size is None)
        lift = p.swing_z * z0
        solver.add(f'shift_{f}', SHIFT_S, lambda: _Target(centre, np.zeros(3), z0), tuple(feet))
        up = np.concatenate([home + [0.0, 0.0, lift], np.zeros(3)])
        solver.add(f'lift_{f}', LIFT_S, lambda: _Target(centre, np.zeros(3), z0, {f: up}),
                   others)
        solver.lifted = solver.q.copy()

        def swing_target(f=f, home=home, flat=flat, lift=lift, pts=pts):
            com = _inside(rng, pts, p.com_shrink)
            if p.swing_joint > 0:
                return _Target(com, *trunk(0.5), {}, sweep.draw(f, 0.5 * lift, solver.q))
            pos = home + np.concatenate([rng.uniform(-1, 1, 2) * p.swing_xy * z0,
                                         [lift * rng.uniform(0.6, 1.4)]])
            rot = rng.uniform(-1, 1, 3) * p.swing_rpy if flat else np.zeros(3)
            return _Target(com, *trunk(0.5), {f: np.concatenate([pos, rot])})

        for _ in range(n_swing - 1):
            solver.add(f'swing_{f}', p.swing_s, swing_target, others)
        # back over the foot's home (the lifted posture), then straight down: a foot put down
        # while it still moves sideways lands off its home, and the double support then
        # fights the stance foot (Talos's landing foot, 3 mm off after a 30 mm sideways
        # descent, took 240 N sideways and the other foot slid 2.2 mm)
        if p.swing_joint > 0:
            lifted = sweep.joints(f, solver.lifted)
            solver.add(f'swing_{f}', p.swing_s, lambda: _Target(
                centre, np.zeros(3), z0, {}, dict(lifted)), others)
        else:
            solver.add(f'swing_{f}', p.swing_s, lambda: _Target(centre, np.zeros(3), z0,
                                                                {f: up}), others)
        down = np.concatenate([home, np.zeros(3)])
        solver.add(f'down_{f}', t_down, lambda: _Target(centre, np.zeros(3), z0, {f: down}),
                   others)
        solver.add(f'back_{f}', BACK_S, lambda: _Target(centre_all, np.zeros(3), z0),
                   tuple(feet))
    return solver.plan()


def leg_joints(robot: Robot, foot: str) -> List[int]:
    """Configuration indices of the one-degree-of-freedom joints between the trunk and the
    foot's sole frame."""
    model = robot.model
    jid = model.frames[robot.frame_id(robot.feet[foot].sole_frame)].parentJoint
    return [model.joints[j].idx_q for j in model.supports[jid].tolist()
            if j > 0 and model.joints[j].nq == 1]


def sole_pose(robot: Robot, q: np.ndarray, foot: str, feet_world: dict) -> np.ndarray:
    """The sole's placement at ``q`` as a swing target: ``[x, y, z]`` [m] and roll, pitch,
    yaw [rad] about its start orientation."""
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    m = data.oMf[robot.frame_id(robot.feet[foot].sole_frame)]
    return np.concatenate([m.translation,
                           pin.rpy.matrixToRpy(m.rotation @ feet_world[foot].rotation.T)])


class _JointSweep:
    """Swing targets drawn in a leg's joint space (module docstring), as joint targets
    (actuated index -> angle [rad]) the IK follows in a straight line from the current angles."""

    CHECKS = (0.25, 0.5, 0.75, 1.0)  # points of the joint path that are checked

    def __init__(self, robot: Robot, q0: np.ndarray, p: MotionParams, rng, free=None):
        self.robot, self.q0, self.p, self.rng = robot, q0, p, rng
        self.free = free or (lambda q: True)
        lo, hi = robot.model.lowerPositionLimit, robot.model.upperPositionLimit
        span = np.zeros(len(lo))
        span[7:] = hi[7:] - lo[7:]  # the free flyer's limits are unbounded
        self.lo, self.hi = lo + p.limit_margin * span, hi - p.limit_margin * span

    def draw(self, foot: str, clearance_m: float, q_now: np.ndarray) -> dict:
        """The first of ``JOINT_DRAWS`` draws (each leg joint within ``swing_joint`` of its
        start angle and inside its range) whose straight joint path from ``q_now`` keeps the
        sole ``clearance_m`` [m] above the ground and is free of self-collision (else the
        free draw keeping the sole highest, else the one keeping it highest)."""
        idx = np.array(leg_joints(self.robot, foot))
        best, best_clear = None, -np.inf
        for _ in range(JOINT_DRAWS):
            goal = np.clip(self.q0[idx] + self.rng.uniform(-1, 1, len(idx)) * self.p.swing_joint,
                           self.lo[idx], self.hi[idx])
            clear, free = np.inf, True
            for s in self.CHECKS:
                q = q_now.copy()
                q[idx] = (1 - s) * q_now[idx] + s * goal
                clear = min(clear, swing_clearance(self.robot, q, [foot]))
                free = free and (clear < clearance_m or self.free(q))
            score = clear + (1e3 if free else 0.0)
            if score > best_clear:
                best, best_clear = goal, score
            if free and clear >= clearance_m:
                break
        return {int(i) - 7: float(v) for i, v in zip(idx, best)}

    def joints(self, foot: str, q: np.ndarray) -> dict:
        """The leg's angles at ``q`` as a joint target."""
        return {int(i) - 7: float(q[i]) for i in leg_joints(self.robot, foot)}


class _Knots:
    """Waypoint after waypoint through the IK; a random target (standing or swing) whose knots
    fail ``check`` (collision, ground, support) is drawn again (``RETRIES`` times), then the
    waypoint holds the previous target."""

    RETRIES = 6

    def __init__(self, robot, q, feet_world, start, knot_s, margin, check):
        self.robot, self.q, self.feet_world = robot, q, feet_world
        self.prev, self.knot_s, self.margin, self.check = start, knot_s, margin, check
        self.ts, self.qs, self.phases, self.t = [0.0], [q.copy()], [], 0.0
        self.rejected = 0
        self.lifted = q.copy()  # configuration at the end of the last lift

    def add(self, name, dur, make, stance) -> None:
        for attempt in range(self.RETRIES + 1):
            tgt = make() if attempt < self.RETRIES else _Target(
                self.prev.com_xy, self.prev.rpy, self.prev.z, dict(self.prev.swing))
            # a joint target replaces the swing feet's placement targets
            start = _Target(self.prev.com_xy, self.prev.rpy, self.prev.z,
                            {} if tgt.joints else dict(self.prev.swing))
            try:
                part = _solve_knots(self.robot, self.q, self.feet_world, start,
                                    [(name, dur, tgt, stance)], self.knot_s, self.margin)
            except SolverError:
                if attempt == self.RETRIES:
                    raise
                self.rejected += 1
                continue
            if attempt == self.RETRIES or self.check is None or not name.startswith(
                    ('stand', 'swing')) or self.check(
                    part.q[1:], name, stance, self.feet_world):
                break
            self.rejected += 1
        self.ts.extend(self.t + part.t[1:])
        self.qs.extend(part.q[1:])
        self.phases.append((name, self.t, self.t + dur, stance))
        self.t += dur
        self.q = part.q[-1].copy()
        keep = name.startswith(('lift', 'swing'))
        swing = dict(tgt.swing) if keep else {}
        if keep and tgt.joints:  # the next placement target starts where the feet are
            swing = {f: sole_pose(self.robot, self.q, f, self.feet_world)
                     for f in self.feet_world if f not in stance}
        self.prev = _Target(tgt.com_xy, tgt.rpy, tgt.z, swing)

    def plan(self) -> StandingPlan:
        return StandingPlan(np.array(self.ts), np.array(self.qs), self.phases, self.feet_world)
