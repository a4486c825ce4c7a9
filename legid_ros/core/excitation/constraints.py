"""What a designed motion must respect, checked on a dense time grid at the CAD model.

- ZMP / CoP inside the support polygon of the stance feet (sole corners, or the contact points)
  by at least ``zmp_margin_m`` (its signed distance to the polygon's edges);
- joint positions inside their ranges, velocities and CAD feedforward torques inside the
  URDF's limits (``limit_use`` of each, where the URDF gives one);
- a swing sole's corners at least ``clearance_m`` above the ground while it swings;
- the stance feet's tangential / normal force (least-squares contact distribution at CAD) at
  most ``friction_ratio`` (the simulated ground's coefficient is 1: a margin against slip);
- no self-collision (:mod:`legid_ros.core.excitation.collision`), with pairs closer than
  ``collision_margin_m`` counted (the executed motion strays from the plan: Talos's knees met
  in MuJoCo on a plan whose meshes never touched).

Reported, not constrained: the largest turn of a stance point foot's link (a rounded point foot
rolls on the ground; it did not separate Solo12's slipping runs from the others).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np
import pinocchio as pin
from scipy.spatial import ConvexHull

from legid_ros.core.excitation.collision import SelfCollision
from legid_ros.core.excitation.trajectory import DenseTrajectory
from legid_ros.core.robot import Robot
from legid_ros.core.sim.described.excitation import StandingPlan, _polygon


@dataclass
class Limits:
    """Margins of :func:`check` (see the module docstring)."""

    zmp_margin_m: float = 0.01
    limit_use: float = 0.9
    clearance_m: float = 0.005
    friction_ratio: float = 0.3
    collision_margin_m: float = 0.02


@dataclass
class ConstraintReport:
    """Result of :func:`check`.

    Attributes:
        zmp_margin_min_m: Smallest signed distance of the CAD ZMP inside its support [m].
        limit_violations: Samples x joints outside a position, velocity or torque limit.
        position_use_max, velocity_use_max, torque_use_max: Largest share of a limit used [-].
        clearance_min_m: Lowest swing-sole corner while swinging [m].
        self_collisions: Samples with a colliding pair; ``collision_pairs`` names them.
        friction_ratio_max: Largest tangential / normal stance force ratio [-].
        point_foot_turn_max_rad: Largest turn of a stance point foot's link [rad].
    """

    zmp_margin_min_m: float
    limit_violations: int
    position_use_max: float
    velocity_use_max: float
    torque_use_max: float
    clearance_min_m: float
    self_collisions: int
    collision_pairs: List[str] = field(default_factory=list)
    friction_ratio_max: float = 0.0
    point_foot_turn_max_rad: float = 0.0
    ok: bool = False

    def as_dict(self) -> dict:
        """Plain form."""
        return {k: v for k, v in self.__dict__.items()}


def support_margin(pts: np.ndarray, p: np.ndarray) -> float:
    """Signed distance [m] of ``p`` inside the convex hull of ``pts`` (negative: outside).

    Two points (two point feet): the hull is the segment, every point off it is outside."""
    if len(pts) >= 3:
        try:
            hull = ConvexHull(pts)
            return float(-np.max(hull.equations[:, :2] @ p + hull.equations[:, 2]))
        except Exception:  # degenerate (collinear) hull: the segment test below
            pass
    a, b = pts.min(axis=0), pts.max(axis=0)
    d = b - a
    s = np.clip((p - a) @ d / max(d @ d, 1e-12), 0.0, 1.0)
    return -float(np.linalg.norm(a + s * d - p))


def _sole_corners(robot: Robot, data, foot: str) -> np.ndarray:
    ft = robot.feet[foot]
    m = data.oMf[robot.frame_id(ft.sole_frame)]
    if ft.sole_size is None or ft.contact == 'point':
        return m.translation[None, :]
    sx, sy = ft.sole_size[0] / 2, ft.sole_size[1] / 2
    return np.array([m.act(np.array([a * sx, b * sy, 0.0])) for a in (1, -1) for b in (1, -1)])


def swing_clearance(robot: Robot, q: np.ndarray, swinging: List[str]) -> float:
    """Lowest corner [m] of the ``swinging`` soles at ``q`` (inf when none)."""
    if not swinging:
        return np.inf
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    return float(min(_sole_corners(robot, data, f)[:, 2].min() for f in swinging))


def check(robot: Robot, plan: StandingPlan, traj: DenseTrajectory,
          collision: Optional[SelfCollision], limits: Limits = Limits(),
          collision_every: int = 5) -> ConstraintReport:
    """Every constraint of the module docstring on ``traj`` (collisions every
    ``collision_every`` samples)."""
    model = robot.model
    feet = list(robot.feet)
    margin = np.inf
    polys: Dict[tuple, np.ndarray] = {}
    for k in range(len(traj.t)):
        stance = tuple(f for f in feet if traj.stance[f][k])
        if stance not in polys:
            polys[stance] = _polygon(robot, plan.feet_world, stance)
        margin = min(margin, support_margin(polys[stance], traj.zmp_cad[k]))
    lo, hi = model.lowerPositionLimit[7:], model.upperPositionLimit[7:]
    mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    pos_use = np.abs(traj.q[:, 7:] - mid) / half
    vmax = model.velocityLimit[6:]
    tmax = model.effortLimit[6:]
    vel_use = np.abs(traj.v[:, 6:]) / np.where(vmax > 0, vmax, np.inf)
    tau_use = np.abs(traj.tau_cad) / np.where(tmax > 0, tmax, np.inf)
    viol = int((pos_use > 1.0).sum() + (vel_use > limits.limit_use).sum()
               + (tau_use > limits.limit_use).sum())
    clear = np.inf
    pairs, n_coll = set(), 0
    for k in range(0, len(traj.t), collision_every):
        name = _phase_at(plan, traj.t[k])
        swinging = [f for f in feet if not traj.stance[f][k]] if name.startswith('swing') else []
        clear = min(clear, swing_clearance(robot, traj.q[k], swinging))
        if collision is not None:
            bad = collision.colliding(traj.q[k])
            n_coll += bool(bad)
            pairs.update(collision.names(b) for b in bad)
    # away from contact changes (the least-squares split jumps there) [s]
    change = np.zeros(len(traj.t), bool)
    for mask in traj.stance.values():
        change[1:] |= mask[1:] != mask[:-1]
    near = np.zeros(len(traj.t), bool)
    for k in np.flatnonzero(change):
        near |= np.abs(traj.t - traj.t[k]) < 0.1
    fr = float(traj.friction_ratio[~near].max()) if (~near).any() else 0.0
    turn = point_foot_turn(robot, traj)
    rep = ConstraintReport(float(margin), viol, float(pos_use.max()), float(vel_use.max()),
                           float(tau_use.max()), float(clear), n_coll, sorted(pairs), fr, turn)
    rep.ok = bool(margin >= limits.zmp_margin_m and viol == 0 and n_coll == 0
                  and clear >= limits.clearance_m and fr <= limits.friction_ratio)
    return rep


def point_foot_turn(robot: Robot, traj: DenseTrajectory, every: int = 5) -> float:
    """Largest rotation [rad] of a point foot's sole frame since the start of its stance."""
    feet = [f for f, ft in robot.feet.items() if ft.contact == 'point' or ft.sole_size is None]
    if not feet:
        return 0.0
    data = robot.model.createData()
    ids = {f: robot.frame_id(robot.feet[f].sole_frame) for f in feet}
    start: Dict[str, Optional[np.ndarray]] = {f: None for f in feet}
    worst = 0.0
    for k in range(0, len(traj.t), every):
        pin.framesForwardKinematics(robot.model, data, traj.q[k])
        for f in feet:
            if not traj.stance[f][k]:
                start[f] = None
                continue
            rot = data.oMf[ids[f]].rotation
            if start[f] is None:
                start[f] = rot.copy()
            worst = max(worst, float(np.linalg.norm(pin.log3(start[f].T @ rot))))
    return worst


def _phase_at(plan: StandingPlan, t: float) -> str:
    for name, t0, t1, _ in plan.phases:
        if t0 <= t < t1:
            return name
    return plan.phases[-1][0]


def knot_check(robot: Robot, collision: Optional[SelfCollision], limits: Limits = Limits()):
    """A ``check`` for :func:`legid_ros.core.excitation.motion.plan_motion`: at every knot, no
    self-collision, the swing soles above the ground and the COM's ground projection inside the
    support by the ZMP margin (the dynamic ZMP is checked later on the dense grid); no
    self-collision halfway between knots either (a wide swing moves a leg far in a knot step)."""
    data = robot.model.createData()
    feet = list(robot.feet)

    def ok(qs: np.ndarray, name: str, stance, feet_world: dict) -> bool:
        pts = _polygon(robot, feet_world, stance)
        swinging = [f for f in feet if f not in stance] if name.startswith('swing') else []
        for k, q in enumerate(qs):
            com = pin.centerOfMass(robot.model, data, q)
            if support_margin(pts, com[:2]) < limits.zmp_margin_m:
                return False
            if swing_clearance(robot, q, swinging) < 3 * limits.clearance_m:
                return False
            if collision is not None and (collision.colliding(q) or k > 0 and collision.colliding(
                    pin.interpolate(robot.model, qs[k - 1], q, 0.5))):
                return False
        return True

    return ok
