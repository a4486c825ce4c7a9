"""Multi-leg IK requests and gait cycles: what the ik node calls (no ROS here)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

import numpy as np

from legid_ros.core.errors import BadInputError
from legid_ros.core.gait.trot import PHASE, TrotParams, TrotScheduler, task_profile
from legid_ros.core.ik.ejm import joint_velocities, solve_closed_form
from legid_ros.core.ik.leg import LEGS, LegKinematics, gait_role, leg_names
from legid_ros.core.robot import Robot, load_robot


@dataclass
class JointBatch:
    """Joint trajectory of several legs.

    Attributes:
        joint_names: Active joints, four per leg in request order.
        times: Sample times [s] (N,).
        q: Joint positions (N, 4 * legs) [rad].
        qd: Joint rates (N, 4 * legs) [rad/s], or None when no foot velocities were given.
        min_abs_det: Smallest |det Je| over all points and legs [m^2].
        solve_time_s: Wall time of the IK [s].
    """

    joint_names: List[str]
    times: np.ndarray
    q: np.ndarray
    qd: Optional[np.ndarray]
    min_abs_det: float
    solve_time_s: float


class LegIk:
    """Closed-form extended-Jacobian IK of every leg of a robot with redundant legs.

    The legs and their joints come from the robot's description (``legs:``); the built-in
    quadruped is the default. The trot (:meth:`gait_cycle`) needs four legs whose trot places
    (``gait_role``, or their names) are lf, rf, lh and rh; a leg without a place follows the
    task profile of the front legs with phase 0.

    Args:
        params: Gait parameters; the task and its profile (phase per leg) come from here.
        robot: Robot (fixed base) with ``legs:`` in its description; the built-in quadruped
            when None.
    """

    def __init__(self, params: Optional[TrotParams] = None, robot: Optional[Robot] = None):
        robot = robot or load_robot('quadruped', floating_base=False)
        self.robot = robot
        self.legs = leg_names(robot)
        self.kin = {leg: LegKinematics(leg, robot) for leg in self.legs}
        self.roles = {leg: gait_role(robot, leg) for leg in self.legs}
        self.geo = self.kin_by_role.get(LEGS[0], self.kin[self.legs[0]]).geometry
        self.params = params or TrotParams()
        self._sched = None

    @property
    def kin_by_role(self) -> Dict[str, LegKinematics]:
        """Kinematics of the legs with a trot place, keyed by it (lf, rf, lh, rh)."""
        return {role: self.kin[leg] for leg, role in self.roles.items() if role is not None}

    @property
    def scheduler(self) -> TrotScheduler:
        """Trot scheduler of the current parameters (built on first use)."""
        if self._sched is None:
            self._sched = TrotScheduler(self.geo, self.params)
        return self._sched

    def solve(self, legs: Sequence[str], times: np.ndarray, positions: Dict[str, np.ndarray],
              velocities: Optional[Dict[str, np.ndarray]] = None) -> JointBatch:
        """Solve foot targets given in each hip frame.

        The task value of each leg follows the gait profile at ``times`` (time from the
        request's start, shifted by the leg's trot phase).

        Raises:
            BadInputError: Unknown leg names, non-finite targets.
            UnreachableTargetError: A target outside the workspace (first one, with its leg).
        """
        unknown = [leg for leg in legs if leg not in self.kin]
        if unknown:
            raise BadInputError(f'unknown legs {unknown}; legs: {", ".join(self.legs)}')
        t0 = time.perf_counter()
        times = np.asarray(times, float)
        names, qs, qds, dets = [], [], [], []
        period = self.params.period
        for leg in legs:
            role = self.roles[leg] or LEGS[0]
            geo = self.kin[leg].geometry
            tc = np.mod(times - (PHASE[role] if self.roles[leg] else 0.0) * period, period)
            psi, psi_dot = task_profile(self.params, role, tc)
            sol = solve_closed_form(geo, positions[leg], self.params.task, psi, times=times,
                                    leg=leg)
            names += self.kin[leg].joint_names
            qs.append(sol.q)
            dets.append(sol.min_abs_det)
            if velocities is not None:
                qds.append(joint_velocities(geo, sol.q, positions[leg], velocities[leg],
                                            self.params.task, psi_dot))
        return JointBatch(joint_names=names, times=times, q=np.concatenate(qs, axis=1),
                          qd=np.concatenate(qds, axis=1) if velocities is not None else None,
                          min_abs_det=float(min(dets)), solve_time_s=time.perf_counter() - t0)

    def gait_cycle(self, dt: float) -> JointBatch:
        """One trot cycle of all legs sampled every ``dt`` [s] (closed form: cycles repeat)."""
        if not dt > 0:
            raise BadInputError(f'sample period must be > 0, got {dt}')
        by_role = {role: leg for leg, role in self.roles.items() if role is not None}
        if set(by_role) != set(LEGS):
            raise BadInputError(f'the trot needs legs in the places {", ".join(LEGS)}; robot '
                                f'{self.robot.name!r} has {sorted(by_role)} (set gait_role '
                                'under legs.<leg> in its description)')
        sched = self.scheduler
        times = np.arange(0.0, self.params.period - 1e-12, dt)
        plan = sched.plan(times)
        legs = [by_role[role] for role in LEGS]
        return self.solve(legs, times, {by_role[r]: plan.pos[r] for r in LEGS},
                          {by_role[r]: plan.vel[r] for r in LEGS})
