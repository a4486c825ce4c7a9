"""Slope walking and friction-cone checks (Chen et al. 2021).

Slope: the trunk stays parallel to a slope of angle ``beta`` (positive: walking uphill). The
vertical projection of the CoM then lies ``S1 = h tan(beta) cos(beta)`` (horizontal) downhill of
its projection along the slope normal, ``h`` being the CoM height above the slope. Front and
hind landing angles move the stride centres and so the support region: ``S2`` is the distance
the CoM lies ahead of ``O``, the intersection of the support diagonals (lf-rh, rf-lh), along the
trunk x axis. The gait is statically acceptable while ``|S1 - S2| <= r``.

Friction: the touchdown direction must stay inside the cone of half-angle ``atan(mu)`` around
the ground normal. Two directions are checked: the foot velocity just before touchdown (the
impact direction of the improved cycloid) and the distal link (the passive spring's axis),
whose angle is the landing angle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional

import numpy as np
import pinocchio as pin

from legid_ros.core.errors import BadInputError
from legid_ros.core.gait.trot import FRONT, TrotScheduler, task_profile
from legid_ros.core.ik.ejm import solve_closed_form
from legid_ros.core.ik.leg import LEGS, LegKinematics


def com_offset(h: float, beta: float) -> float:
    """S1 = h tan(beta) cos(beta) [m] for CoM height h [m] and slope beta [rad]."""
    if not abs(beta) < np.pi / 2:
        raise BadInputError(f'slope must be within (-90, 90) deg, got {np.degrees(beta)} deg')
    return float(h * np.tan(beta) * np.cos(beta))


def diagonal_intersection(feet: Dict[str, np.ndarray]) -> np.ndarray:
    """Intersection O of the support diagonals lf-rh and rf-lh (x, y) [m]."""
    p1, p2 = feet['lf'][:2], feet['rh'][:2]
    p3, p4 = feet['rf'][:2], feet['lh'][:2]
    d1, d2 = p2 - p1, p4 - p3
    mat = np.array([d1, -d2]).T
    if abs(np.linalg.det(mat)) < 1e-12:
        raise BadInputError('support diagonals are parallel')
    s = np.linalg.solve(mat, p3 - p1)
    return p1 + s[0] * d1


@dataclass
class StabilityReport:
    """Slope stability check ``|S1 - S2| <= r``.

    Attributes:
        beta: Slope [rad].
        h: CoM height above the slope [m].
        s1: CoM offset from the slope, h tan(beta) cos(beta) [m].
        s2: CoM ahead of the support-diagonal intersection [m].
        r: Threshold [m].
        margin: r - |S1 - S2| [m] (>= 0 when stable).
        ok: Whether the check holds.
        feet: Nominal foot positions in the trunk frame [m].
        com: CoM in the trunk frame at the nominal posture [m].
    """

    beta: float
    h: float
    s1: float
    s2: float
    r: float
    margin: float
    ok: bool
    feet: Dict[str, np.ndarray]
    com: np.ndarray


def edge_distance(feet: Dict[str, np.ndarray], point: np.ndarray) -> float:
    """Smallest distance from ``point`` (x, y) to the edges of the support quadrilateral [m]."""
    ring = [feet[leg][:2] for leg in ('lf', 'rf', 'rh', 'lh')]
    dists = []
    for a, b in zip(ring, ring[1:] + ring[:1]):
        d = b - a
        s = np.clip(np.dot(point - a, d) / np.dot(d, d), 0.0, 1.0)
        dists.append(float(np.linalg.norm(point - (a + s * d))))
    return min(dists)


def slope_stability(sched: TrotScheduler, beta: float, r: Optional[float] = None,
                    kin: Dict[str, LegKinematics] = None) -> StabilityReport:
    """Check ``|S1 - S2| <= r`` for a trot on a slope of angle beta [rad].

    The nominal posture is mid-stance: every foot at its stride centre with its task value;
    the CoM comes from pinocchio at that posture. ``r`` defaults to the distance from O to the
    nearest edge of the support quadrilateral (the largest CoM offset that stays inside it).
    """
    kin = kin or {leg: LegKinematics(leg) for leg in LEGS}
    model = kin['lf'].model
    q = pin.neutral(model)
    feet = {}
    for leg in LEGS:
        lk = kin[leg]
        c = sched.cycloids[leg]
        target = np.array([c.x_center, 0.0, c.z_ground])
        # the foot passes its stride centre at mid-stance: take the task value there
        psi, _ = task_profile(sched.params, leg, 0.5 * sched.params.duty * sched.params.period)
        sol = solve_closed_form(lk.geometry, target, sched.params.task, psi, leg=leg)
        q[lk.q_idx] = sol.q[0]
        feet[leg] = lk.hip_placement().act(target)
    data = model.createData()
    c_moving = pin.centerOfMass(model, data, q)  # fixed base: the trunk (universe) is excluded
    m_moving, trunk = float(data.mass[0]), model.inertias[0]
    com = (m_moving * c_moving + trunk.mass * trunk.lever) / (m_moving + trunk.mass)
    o = diagonal_intersection(feet)
    h = float(com[2] - np.mean([f[2] for f in feet.values()]))
    s1 = com_offset(h, beta)
    s2 = float(com[0] - o[0])
    if r is None:
        r = edge_distance(feet, o)
    margin = r - abs(s1 - s2)
    return StabilityReport(beta=beta, h=h, s1=s1, s2=s2, r=r, margin=margin, ok=margin >= 0,
                           feet=feet, com=com)


@dataclass
class FrictionReport:
    """Friction-cone check of one leg's touchdown.

    Attributes:
        leg: Leg name.
        cone: Cone half-angle atan(mu) [rad].
        velocity_angle: Foot velocity direction before touchdown, from the ground normal [rad].
        link_angle: Distal-link (spring axis) direction at touchdown, from the normal [rad].
        ok: The touchdown velocity lies inside the cone.
        link_ok: The distal link lies inside the cone.
    """

    leg: str
    cone: float
    velocity_angle: float
    link_angle: float
    ok: bool
    link_ok: bool


def in_friction_cone(angle: float, mu: float) -> bool:
    """Whether a direction at ``angle`` [rad] from the ground normal lies inside atan(mu)."""
    if not mu > 0:
        raise BadInputError(f'friction coefficient must be > 0, got {mu}')
    return bool(abs(angle) <= np.arctan(mu))


def touchdown_friction(sched: TrotScheduler, mu: float) -> Dict[str, FrictionReport]:
    """Friction-cone check of every leg's touchdown (trunk parallel to the ground)."""
    out = {}
    for leg in LEGS:
        vel = sched.cycloids[leg].touchdown_direction()
        if sched.params.task == 'landing':
            link = sched.params.landing_front if leg in FRONT else sched.params.landing_hind
        else:
            c = sched.cycloids[leg]
            target = np.array([c.x_center + 0.5 * c.stride, 0.0, c.z_ground])
            sol = solve_closed_form(sched.geo, target, 'hip', sched.params.hip_start, leg=leg)
            link = float(np.sum(sol.q[0, 1:]))
        out[leg] = FrictionReport(leg=leg, cone=float(np.arctan(mu)), velocity_angle=vel,
                                  link_angle=float(link), ok=in_friction_cone(vel, mu),
                                  link_ok=in_friction_cone(link, mu))
    return out
