"""Trot scheduler (Chen et al. 2021): diagonal pairs half a cycle apart, improved-cycloid feet.

Legs lf and rh start their cycle (touchdown) at t = 0, rf and lh half a cycle later. Each leg's
redundancy task is periodic over the cycle and starts at its touchdown value:

* landing task: ``th5(t) = th50 + phi5 (1 - cos(2 pi t / T)) / 2`` (front and hind ``th50``
  may differ, for slopes);
* hip task: ``th2(t) = th20 + phi2 (1 - cos(2 pi t / T)) / 2``.

The stride centre of each leg is placed where the whole cycle stays farthest from the joint
limits for that leg's task profile (5 mm grid search, closed-form IK), so a larger landing
angle moves the foot forward and shifts the support region (the paper's slope mechanism).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Dict, Optional, Tuple

import numpy as np

from legid_ros.core.errors import BadInputError, UnreachableTargetError
from legid_ros.core.gait.cycloid import Cycloid
from legid_ros.core.ik.ejm import TASKS, solve_closed_form
from legid_ros.core.ik.leg import LEGS, LegGeometry

PHASE = {'lf': 0.0, 'rh': 0.0, 'rf': 0.5, 'lh': 0.5}  # [cycle]
FRONT = ('lf', 'rf')


@dataclass(frozen=True)
class TrotParams:
    """Trot gait parameters.

    Attributes:
        stride: Stride length S [m].
        lift: Lift height H [m].
        period: Gait cycle T [s].
        duty: Stance fraction of the cycle (0.5 for a trot).
        stand_height: Hip height above the ground, along the trunk normal [m].
        vz: Peak descent speed V_z [m/s].
        tz1: End of the descent's acceleration [s].
        tz2: End of the descent's cruise [s].
        task: 'landing' or 'hip'.
        landing_front: Front legs' landing angle th50 at touchdown [rad].
        landing_hind: Hind legs' landing angle th50 at touchdown [rad].
        landing_amplitude: Landing-angle amplitude phi5 over the cycle [rad].
        hip_start: Hip pitch th20 at touchdown (hip task) [rad].
        hip_amplitude: Hip-pitch amplitude phi2 (hip task) [rad].
        x_centers: Stride centre per leg [m]; chosen by the margin rule when absent.
    """

    stride: float = 0.2
    lift: float = 0.08
    period: float = 0.4
    duty: float = 0.5
    stand_height: float = 0.75
    vz: float = 1.1
    tz1: float = 0.025
    tz2: float = 0.07
    task: str = 'landing'
    landing_front: float = float(np.radians(30.0))
    landing_hind: float = float(np.radians(30.0))
    landing_amplitude: float = 0.15
    hip_start: float = -0.7
    hip_amplitude: float = 0.1
    x_centers: Dict[str, float] = field(default_factory=dict)

    def __post_init__(self):
        if self.task not in TASKS:
            raise BadInputError(f'unknown task {self.task!r}; tasks: {", ".join(TASKS)}')
        if not 0.0 < self.duty < 1.0 or self.period <= 0 or self.stand_height <= 0:
            raise BadInputError('trot: need 0 < duty < 1, period > 0, stand_height > 0')


def task_profile(params: TrotParams, leg: str, t_cycle: np.ndarray) -> Tuple[np.ndarray,
                                                                            np.ndarray]:
    """Task value and rate at times from the leg's touchdown [rad, rad/s]."""
    w = 2.0 * np.pi / params.period
    if params.task == 'landing':
        v0 = params.landing_front if leg in FRONT else params.landing_hind
        amp = params.landing_amplitude
    else:
        v0, amp = params.hip_start, params.hip_amplitude
    t_cycle = np.asarray(t_cycle, float)
    return v0 + 0.5 * amp * (1.0 - np.cos(w * t_cycle)), 0.5 * amp * w * np.sin(w * t_cycle)


def _cycloid(params: TrotParams, x_center: float) -> Cycloid:
    return Cycloid(stride=params.stride, lift=params.lift,
                   t_stance=params.duty * params.period,
                   t_swing=(1.0 - params.duty) * params.period, vz=params.vz, tz1=params.tz1,
                   tz2=params.tz2, x_center=x_center, z_ground=-params.stand_height)


def joint_margin(geo: LegGeometry, params: TrotParams, leg: str, x_center: float,
                 samples: int = 100) -> float:
    """Smallest distance of the pitch joints to their limits over one cycle [rad].

    Raises:
        UnreachableTargetError: Some point of the cycle is unreachable.
    """
    t = np.linspace(0.0, params.period, samples, endpoint=False)
    pos, _, _ = _cycloid(params, x_center).evaluate(t)
    psi, _ = task_profile(params, leg, t)
    sol = solve_closed_form(geo, pos, params.task, psi, times=t, leg=leg)
    q = sol.q[:, 1:]
    return float(min(np.min(q - geo.lower[1:]), np.min(geo.upper[1:] - q)))


def best_center(geo: LegGeometry, params: TrotParams, leg: str, span: float = 0.5,
                step: float = 0.005) -> Tuple[float, float]:
    """Stride centre with the largest joint margin (grid search) -> (x_center [m], margin [rad]).

    Raises:
        UnreachableTargetError: No centre on the grid makes the whole cycle reachable.
    """
    best, closest = None, None
    for x in np.arange(-span, span + 1e-12, step):
        try:
            m = joint_margin(geo, params, leg, float(x), samples=60)
        except UnreachableTargetError as exc:
            if closest is None or exc.distance < closest.distance:
                closest = exc
            continue
        if best is None or m > best[1]:
            best = (float(x), m)
    if best is None:
        dist, when = (closest.distance, closest.time) if closest else (float('inf'), 0.0)
        raise UnreachableTargetError(leg, when, dist,
                                     'no stride centre makes the gait cycle reachable; '
                                     'shown: the closest centre')
    return best


@dataclass
class FootPlan:
    """Foot targets of every leg at common sample times.

    Attributes:
        times: Sample times [s], shape (N,).
        pos: Leg -> foot position (N, 3) in the hip frame [m].
        vel: Leg -> foot velocity (N, 3) [m/s].
        acc: Leg -> foot acceleration (N, 3) [m/s^2].
        psi: Leg -> task value (N,) [rad].
        psi_dot: Leg -> task rate (N,) [rad/s].
        stance: Leg -> stance flag (N,).
    """

    times: np.ndarray
    pos: Dict[str, np.ndarray]
    vel: Dict[str, np.ndarray]
    acc: Dict[str, np.ndarray]
    psi: Dict[str, np.ndarray]
    psi_dot: Dict[str, np.ndarray]
    stance: Dict[str, np.ndarray]


class TrotScheduler:
    """Foot targets and task values of a trot.

    Args:
        geo: Leg geometry (all legs share it).
        params: Gait parameters.
    """

    def __init__(self, geo: LegGeometry, params: Optional[TrotParams] = None):
        self.geo = geo
        params = params or TrotParams()
        centers = dict(params.x_centers)
        found = {}  # legs with the same task profile share the search
        for leg in LEGS:
            if leg not in centers:
                key = tuple(task_profile(params, leg, np.array([0.0, 0.25 * params.period]))[0])
                if key not in found:
                    found[key] = best_center(geo, params, leg)[0]
                centers[leg] = found[key]
        self.params = replace(params, x_centers=centers)
        self.cycloids = {leg: _cycloid(self.params, centers[leg]) for leg in LEGS}

    def leg_time(self, leg: str, t: np.ndarray) -> np.ndarray:
        """Time since the leg's last touchdown [s]."""
        return np.mod(np.asarray(t, float) - PHASE[leg] * self.params.period, self.params.period)

    def plan(self, times: np.ndarray) -> FootPlan:
        """Foot targets and task values of all legs at ``times`` [s]."""
        times = np.asarray(times, float)
        out = FootPlan(times, {}, {}, {}, {}, {}, {})
        zero = np.zeros_like(times)
        for leg in LEGS:
            tc = self.leg_time(leg, times)
            p, v, a = self.cycloids[leg].evaluate(tc)
            out.pos[leg] = np.stack([p[:, 0], zero, p[:, 1]], -1)
            out.vel[leg] = np.stack([v[:, 0], zero, v[:, 1]], -1)
            out.acc[leg] = np.stack([a[:, 0], zero, a[:, 1]], -1)
            out.psi[leg], out.psi_dot[leg] = task_profile(self.params, leg, tc)
            out.stance[leg] = tc < self.params.duty * self.params.period
        return out

    def touchdown_positions(self) -> Dict[str, np.ndarray]:
        """Foot positions at touchdown in each hip frame (x, y, z) [m]."""
        return {leg: np.array([c.x_center + 0.5 * c.stride, 0.0, c.z_ground])
                for leg, c in self.cycloids.items()}
