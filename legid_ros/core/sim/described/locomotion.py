"""Locomotion as excitation: a quadruped trot and a humanoid stepping in place.

Both are plans of the same form as the standing excitation (:class:`StandingPlan`: IK knots on
the CAD model joined by a clamped cubic spline), so :func:`~.run.simulate_described` runs them
unchanged. The feet step in place (every touch-down where the foot started), so the stance feet
of the whole-body IK of :mod:`.excitation` stay where they are; what changes is which feet carry
the robot, every few tenths of a second (per-foot contact switching).

- :func:`plan_trot`: four feet, diagonal pairs lifted in turn (a trot: the two feet of a pair
  leave and touch the ground together, the other pair carrying the robot on its diagonal line).
  Each half cycle: the pair rises to a random apex, comes back down (cosine blends: zero speed
  at lift-off and touch-down), then a short four-foot dwell. The COM stays over the crossing of
  the diagonals (on both support lines), the trunk rolls, pitches and bobs a little per step.
- :func:`plan_stepping`: two flat soles, the COM moved over one sole, the other lifted, moved to
  a random apex (a little forward, sideways, tilted) and put back, then the same on the other
  side; the ZMP stays near the COM's ground projection, inside the stance sole.
World: flat ground z = 0, the feet's start positions around the origin.
"""

from __future__ import annotations

from typing import Dict, List, Tuple

import numpy as np

from legid_ros.core.errors import BadInputError
from legid_ros.core.robot import Robot
from legid_ros.core.sim.described.excitation import (StandingPlan, _polygon, _solve_knots,
                                                     _stand_pose, _Target)

#: Trot half cycle: pair up, pair down, four-foot dwell [s]. The plan puts the CAD COM on the
#: support diagonal; the true one is off it, so the robot tips during the two-foot phase and the
#: swing pair lands early and bounces. On Solo12 in MuJoCo (``legid bench excitation``, seeds
#: 0-2) 0.1 s up and down with a 0.35 s dwell against 0.15 / 0.15 / 0.25: stance slip 1.4-3.7 mm
#: against 2.9-3.9 mm, 1370-1710 rows kept against 1000-1160, identified / truth 2.72, 1.80,
#: 2.46 against 2.66, 3.90, 2.59
TROT_UP_S, TROT_DOWN_S, TROT_DWELL_S = 0.1, 0.1, 0.35
TROT_KNOT_S = 0.025  # [s] between IK knots (a cosine rise over 6 knots)
#: Stepping: COM over the stance sole, lift, down [s]
STEP_SHIFT_S, STEP_UP_S, STEP_DOWN_S = 1.5, 0.7, 0.7
STEP_KNOT_S = 0.1  # [s]
SETTLE_S = 1.0  # standing still at the start and the end [s]


def _diagonals(robot: Robot, feet_world) -> Tuple[Tuple[str, str], Tuple[str, str]]:
    """The two diagonal pairs of a four-footed robot (each front foot with the hind foot on
    the other side), from the feet's start positions."""
    pos = {f: feet_world[f].translation[:2] for f in robot.feet}
    front = sorted(pos, key=lambda f: -pos[f][0])[:2]
    hind = [f for f in pos if f not in front]
    f0 = front[0]
    h0 = min(hind, key=lambda h: np.sign(pos[h][1]) == np.sign(pos[f0][1]))
    pair_a = (f0, h0)
    pair_b = tuple(f for f in pos if f not in pair_a)
    return pair_a, pair_b


def _settle(feet, z0, centre) -> List[Tuple[str, float, _Target, Tuple[str, ...]]]:
    return [('stand', SETTLE_S, _Target(centre.copy(), np.zeros(3), z0), tuple(feet))]


def plan_trot(robot: Robot, duration_s: float, seed: int = 0, drop: float = 0.12,
              lift: float = 0.08, trunk_rpy: float = 0.04, trunk_z: float = 0.02,
              half_cycle: Tuple[float, float, float] = (TROT_UP_S, TROT_DOWN_S, TROT_DWELL_S),
              knot_s: float = TROT_KNOT_S) -> StandingPlan:
    """A trot in place of a four-footed robot covering ``duration_s`` [s].

    Args:
        robot: Floating-base robot with four feet (point feet or soles).
        duration_s: Length [s] (at least 2 s of settling and one cycle).
        seed: Seed of the random apexes and trunk targets.
        drop: Trunk lowered by this fraction of its standing height (bent knees) [-].
        lift: Mean apex of a swing foot above the ground [-] of the trunk height.
        trunk_rpy: Largest trunk roll / pitch / yaw per step [rad].
        trunk_z: Largest trunk height change per step [-] of the trunk height.
        half_cycle: Pair up, pair down, four-foot dwell [s].
        knot_s: Time between IK knots [s].

    Raises:
        BadInputError: Not floating, not four feet, too short.
        SolverError: The IK cannot hold a stance foot.
    """
    if not robot.floating or len(robot.feet) != 4:
        raise BadInputError('a trot needs a floating robot with four feet')
    up_s, down_s, dwell_s = half_cycle
    half = up_s + down_s + dwell_s
    n_half = int((duration_s - 2 * SETTLE_S) // half)
    if n_half < 2:
        raise BadInputError(f'duration {duration_s:g} s is too short for a trot cycle: give at '
                            f'least {2 * SETTLE_S + 2 * half:g} s')
    rng = np.random.default_rng([seed, 5151])
    q, feet_world, z0 = _stand_pose(robot, drop)
    feet = list(robot.feet)
    centre = _polygon(robot, feet_world, feet).mean(axis=0)
    pairs = _diagonals(robot, feet_world)
    waypoints = _settle(feet, z0, centre)
    for k in range(n_half):
        pair = pairs[k % 2]
        stance = tuple(f for f in feet if f not in pair)
        rpy = rng.uniform(-1, 1, 3) * trunk_rpy
        z = z0 * (1 + rng.uniform(-1, 1) * trunk_z)
        apex = {}
        for f in pair:
            home = feet_world[f].translation
            apex[f] = home + np.concatenate([rng.uniform(-1, 1, 2) * 0.2 * lift * z0,
                                             [lift * z0 * rng.uniform(0.8, 1.2)]])
        name = '+'.join(pair)
        waypoints.append((f'lift_{name}', up_s, _Target(centre.copy(), rpy, z, apex), stance))
        down = {f: feet_world[f].translation.copy() for f in pair}
        waypoints.append((f'down_{name}', down_s, _Target(centre.copy(), rpy, z, down), stance))
        waypoints.append(('dwell', dwell_s, _Target(centre.copy(), rpy, z), tuple(feet)))
    rest = duration_s - SETTLE_S - n_half * half
    waypoints.append(('stand', rest, _Target(centre.copy(), np.zeros(3), z0), tuple(feet)))
    start = _Target(centre.copy(), np.zeros(3), z0)
    return _solve_knots(robot, q, feet_world, start, waypoints, knot_s)


def plan_stepping(robot: Robot, duration_s: float, seed: int = 0, drop: float = 0.12,
                  lift: float = 0.06, reach: float = 0.02, tilt_rad: float = 0.0,
                  trunk_rpy: float = 0.02, knot_s: float = STEP_KNOT_S) -> StandingPlan:
    """Stepping in place of a two-footed robot covering ``duration_s`` [s].

    Args:
        robot: Floating-base robot with two feet (flat soles).
        duration_s: Length [s] (at least 2 s of settling and one step per foot).
        seed: Seed of the random apexes and trunk targets.
        drop: Trunk lowered by this fraction of its standing height (bent knees) [-].
        lift: Mean apex of a swing sole above the ground [-] of the trunk height.
        reach: Largest horizontal move of a swing sole at its apex [-] of the trunk height.
        tilt_rad: Largest roll / pitch / yaw of a swing sole at its apex [rad].
        trunk_rpy: Largest trunk roll / pitch / yaw per step [rad].
        knot_s: Time between IK knots [s].

    Raises:
        BadInputError: Not floating, not two feet, too short.
        SolverError: The IK cannot hold the stance sole.
    """
    if not robot.floating or len(robot.feet) != 2:
        raise BadInputError('stepping in place needs a floating robot with two feet')
    step = STEP_SHIFT_S + STEP_UP_S + STEP_DOWN_S
    n_steps = int((duration_s - 2 * SETTLE_S - STEP_SHIFT_S) // step)
    if n_steps < 2:
        raise BadInputError(f'duration {duration_s:g} s is too short for a step per foot: give '
                            f'at least {2 * SETTLE_S + 3 * step:g} s')
    rng = np.random.default_rng([seed, 6161])
    q, feet_world, z0 = _stand_pose(robot, drop)
    feet = list(robot.feet)
    all_pts = _polygon(robot, feet_world, feet)
    waypoints = _settle(feet, z0, all_pts.mean(axis=0))
    for k in range(n_steps):
        swing = feet[k % 2]
        stance = (feet[(k + 1) % 2],)
        over = _polygon(robot, feet_world, stance).mean(axis=0)
        rpy = rng.uniform(-1, 1, 3) * trunk_rpy
        z = z0 * (1 + rng.uniform(-0.02, 0.02))
        waypoints.append((f'shift_{swing}', STEP_SHIFT_S, _Target(over, rpy, z), tuple(feet)))
        home = feet_world[swing].translation
        apex = np.concatenate([home + np.concatenate([rng.uniform(-1, 1, 2) * reach * z0,
                                                      [lift * z0 * rng.uniform(0.8, 1.2)]]),
                               rng.uniform(-1, 1, 3) * tilt_rad])
        waypoints.append((f'lift_{swing}', STEP_UP_S, _Target(over, rpy, z, {swing: apex}),
                          stance))
        waypoints.append((f'down_{swing}', STEP_DOWN_S,
                          _Target(over, rpy, z, {swing: np.concatenate([home, np.zeros(3)])}),
                          stance))
    rest = duration_s - SETTLE_S - n_steps * step
    waypoints.append(('stand', rest, _Target(all_pts.mean(axis=0), np.zeros(3), z0),
                      tuple(feet)))
    start = _Target(all_pts.mean(axis=0), np.zeros(3), z0)
    return _solve_knots(robot, q, feet_world, start, waypoints, knot_s)


def contact_switches(plan: StandingPlan, rate_hz: float = 200.0) -> Dict[str, int]:
    """Per foot, how many times the plan changes whether it stands on it."""
    t = np.arange(0.0, plan.duration_s, 1.0 / rate_hz)
    return {f: int(np.abs(np.diff(m.astype(int))).sum()) for f, m in plan.stance_at(t).items()}
