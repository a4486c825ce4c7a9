"""The ik node: foot targets -> joint trajectories, extended Jacobian (Chen et al. 2021).

The legs and their joints come from the description of parameter ``robot`` (built-in name or
description YAML with ``legs:``; default the built-in quadruped, legs lf/rf/lh/rh).

Subscribes ``legid/foot_targets`` (trajectory_msgs/MultiDOFJointTrajectory: one "joint" per
leg, named as in the description, translation = foot position in that leg's hip frame [m], optional
linear velocities) and publishes ``legid/joint_trajectory`` (trajectory_msgs/JointTrajectory:
four active joints per requested leg, positions [rad], velocities [rad/s] when the request has
foot velocities). Services ``~/start_gait`` and ``~/stop_gait`` (std_srvs/Trigger) start and
stop the built-in trot: one cycle of all legs is solved once (closed form, so cycles repeat
exactly) and published every cycle. ``/diagnostics`` reports every request.

A thin adapter: messages -> arrays -> :class:`legid_ros.core.ik.batch.LegIk` -> messages. Bad
input (NaN, unknown legs, unreachable targets, inconsistent gait parameters) is logged once,
reported on ``/diagnostics`` with level ERROR, and produces no trajectory; the node keeps
running. Every parameter may change at run time (``ros2 param set``) and applies from the
next request or ``~/start_gait``; a change that makes the gait inconsistent is refused.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Optional

from diagnostic_msgs.msg import DiagnosticArray
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, MultiDOFJointTrajectory

from legid_ros.core.errors import LegidError, UnreachableTargetError
from legid_ros.core.gait.slope import slope_stability, touchdown_friction
from legid_ros.core.gait.trot import TASKS, TrotParams
from legid_ros.core.ik.batch import LegIk
from legid_ros.core.robot import load_robot
from legid_ros.ros.conversions import diagnostic_msg
from legid_ros.ros.conversions_ik import foot_targets_from_msg, joint_trajectory_msg
from legid_ros.ros.executor import run_node
from legid_ros.ros.parameters import Param, declare_parameters
from legid_ros.ros.robustness import GuardedNode

DIAG_NAME = 'legid ik'

ANGLE = math.pi  # bound of every angle parameter [rad]
# every setting is settable at run time: it applies from the next request or start_gait
PARAMETERS = tuple(replace(spec, runtime=True) for spec in (
    Param('robot', 'quadruped', 'robot whose legs are solved: built-in name or description '
          'YAML with legs: (fixed base)'),
    Param('task', 'landing', "redundancy task: 'landing' (landing angle th5(t)) or 'hip' "
          '(th2(t))', choices=tuple(TASKS)),
    Param('stride_m', 0.2, 'stride length S [m]', low=0.0),
    Param('lift_m', 0.08, 'lift height H [m]', low=0.0),
    Param('period_s', 0.4, 'gait cycle T [s]', low=0.0, open_low=True),
    Param('duty', 0.5, 'stance fraction of the cycle, in (0, 1) [-]', low=0.0, high=1.0),
    Param('stand_height_m', 0.75, 'hip height above the ground along the trunk normal [m]',
          low=0.0, open_low=True),
    Param('descent_speed_m_s', 1.1, 'peak foot descent speed V_z [m/s]', low=0.0),
    Param('descent_accel_time_s', 0.025, 'end of the descent acceleration T_z1 [s]', low=0.0),
    Param('descent_cruise_time_s', 0.07, 'end of the descent cruise T_z2 [s]', low=0.0),
    Param('landing_front_rad', math.radians(30.0), 'front legs landing angle th50 at '
          'touchdown [rad]', low=-ANGLE, high=ANGLE),
    Param('landing_hind_rad', math.radians(30.0), 'hind legs landing angle th50 at touchdown '
          '[rad]', low=-ANGLE, high=ANGLE),
    Param('landing_amplitude_rad', 0.15, 'landing-angle amplitude phi5 over the cycle [rad]',
          low=-ANGLE, high=ANGLE),
    Param('hip_start_rad', -0.7, 'hip pitch th20 at touchdown (hip task) [rad]', low=-ANGLE,
          high=ANGLE),
    Param('hip_amplitude_rad', 0.1, 'hip-pitch amplitude phi2 (hip task) [rad]', low=-ANGLE,
          high=ANGLE),
    Param('slope_rad', 0.0, 'ground slope beta for the stability check, > 0 uphill [rad]',
          low=-0.5 * ANGLE, high=0.5 * ANGLE),
    Param('stability_threshold_m', 0.0, 'threshold r of |S1 - S2| <= r; 0 = distance from the '
          'support-diagonal crossing to the nearest support edge [m]', low=0.0),
    Param('friction_coefficient', 0.6, 'ground friction coefficient mu for the touchdown check '
          '[-]', low=0.0),
    Param('min_det_je_m2', 1e-3, 'warn when |det Je| of a solution falls below this [m^2]',
          low=0.0),
    Param('gait_dt_s', 0.01, 'time between points of the published gait trajectory [s]',
          low=0.0, open_low=True),
    Param('frame_id', 'trunk', 'frame_id of the published trajectories'),
))

class IkNode(GuardedNode):
    """Redundant-leg IK node (see the module docstring)."""

    def __init__(self, **kwargs):
        super().__init__('ik', **kwargs)
        self.p = declare_parameters(self, PARAMETERS, check=self._check_gait)
        self.pub = self.create_publisher(JointTrajectory, 'legid/joint_trajectory', 10)
        self.pub_diag = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self.create_subscription(MultiDOFJointTrajectory, 'legid/foot_targets', self._on_targets,
                                 10)
        self.create_service(Trigger, '~/start_gait', self._on_start)
        self.create_service(Trigger, '~/stop_gait', self._on_stop)
        self._ik: Optional[LegIk] = None
        self._robot_name = None
        self._gait = None
        self._timer = None
        self._logged = set()
        self.requests = 0
        self.errors = 0
        self._pending_diag = None
        self.create_timer(1.0, self._flush_pending_diag)

    # ---------------------------------------------------------------- helpers
    def _check_gait(self, changes) -> Optional[str]:
        """Refusal reason of a run-time change that makes the gait inconsistent."""
        try:
            self._params({**self.p, **changes})
            if 'robot' in changes and changes['robot'] != self.p['robot']:
                LegIk(self._params(), load_robot(changes['robot'], floating_base=False))
        except LegidError as exc:
            return str(exc)
        return None

    def _params(self, p=None) -> TrotParams:
        """Gait parameters of the values in force (or of ``p``)."""
        p = self.p if p is None else p
        return TrotParams(stride=p['stride_m'], lift=p['lift_m'], period=p['period_s'],
                          duty=p['duty'], stand_height=p['stand_height_m'],
                          vz=p['descent_speed_m_s'], tz1=p['descent_accel_time_s'],
                          tz2=p['descent_cruise_time_s'], task=p['task'],
                          landing_front=p['landing_front_rad'],
                          landing_hind=p['landing_hind_rad'],
                          landing_amplitude=p['landing_amplitude_rad'],
                          hip_start=p['hip_start_rad'], hip_amplitude=p['hip_amplitude_rad'])

    def _solver(self) -> LegIk:
        params = self._params()
        if self._ik is None or self._robot_name != self.p.robot:
            self._ik = LegIk(params, load_robot(self.p.robot, floating_base=False))
            self._robot_name = self.p.robot
        elif self._ik.params != params:
            self._ik = LegIk(params, self._ik.robot)
        return self._ik

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _diag(self, level: str, message: str, values=None) -> None:
        self.pub_diag.publish(diagnostic_msg(self._now(), DIAG_NAME, self.get_name(), level,
                                             message, values))

    def _fail(self, where: str, exc: Exception) -> None:
        """Log once per distinct error, publish an ERROR diagnostic."""
        self.errors += 1
        text = f'{where}: {exc}'
        if text not in self._logged:
            if len(self._logged) < 1000:
                self._logged.add(text)
            self.get_logger().error(text)
        values = {'errors': self.errors, 'requests': self.requests}
        if isinstance(exc, UnreachableTargetError):
            values.update(leg=exc.leg, time_s=exc.time, distance_m=exc.distance)
        if self.diag_gate.allow():  # at most one /diagnostics per period; the rest later
            self._diag('error', text, values)
            self._pending_diag = None
        else:
            self._pending_diag = (text, values)

    def _flush_pending_diag(self) -> None:
        """Publish the last held-back error once its period has passed."""
        if self._pending_diag is not None and self.diag_gate.allow():
            text, values = self._pending_diag
            self._pending_diag = None
            self._diag('error', text, values)

    # -------------------------------------------------------------- callbacks
    def _on_targets(self, msg: MultiDOFJointTrajectory) -> None:
        self.requests += 1
        try:
            legs, times, pos, vel = foot_targets_from_msg(msg)
            batch = self._solver().solve(legs, times, pos, vel)
        except (LegidError, ValueError) as exc:
            self._fail('foot-target request rejected', exc)
            return
        self.pub.publish(joint_trajectory_msg(batch.joint_names, batch.times, batch.q, batch.qd,
                                              stamp=msg.header.stamp,
                                              frame_id=self.p.frame_id))
        low = batch.min_abs_det < self.p.min_det_je_m2
        self._diag('warn' if low else 'ok',
                   f'solved {len(times)} points for {len(legs)} legs'
                   + (' near a singularity of the extended Jacobian' if low else ''),
                   {'requests': self.requests, 'errors': self.errors, 'points': len(times),
                    'min_abs_det_je_m2': batch.min_abs_det,
                    'solve_time_ms': batch.solve_time_s * 1e3})

    def _on_start(self, request, response):
        try:
            ik = self._solver()
            sched = ik.scheduler
            r = self.p.stability_threshold_m
            gait = ik.gait_cycle(self.p.gait_dt_s)  # refuses robots without 4 trot legs
            st = slope_stability(sched, self.p.slope_rad, r=r if r > 0 else None,
                                 kin=ik.kin_by_role)
            mu = self.p.friction_coefficient
            fr = touchdown_friction(sched, mu)
            if not st.ok:
                raise ValueError(f'slope stability check failed: |S1 - S2| = '
                                 f'{abs(st.s1 - st.s2):.4f} m > r = {st.r:.4f} m')
            if not all(f.ok for f in fr.values()):
                raise ValueError(f'touchdown direction outside the friction cone (mu = {mu})')
            self._gait = gait
        except (LegidError, ValueError) as exc:
            self._fail('start_gait refused', exc)
            response.success, response.message = False, str(exc)
            return response
        if self._timer is not None:
            self._timer.cancel()
            self.destroy_timer(self._timer)
        self._publish_cycle()
        self._timer = self.create_timer(ik.params.period, self._publish_cycle)
        response.success = True
        response.message = (f'trot running: T = {ik.params.period} s, '
                            f'{len(self._gait.times)} points per cycle, S1 - S2 margin '
                            f'{st.margin:.4f} m')
        self._diag('ok', response.message, {'margin_m': st.margin, 's1_m': st.s1,
                                            's2_m': st.s2})
        return response

    def _on_stop(self, request, response):
        running = self._timer is not None
        if running:
            self._timer.cancel()
            self.destroy_timer(self._timer)
            self._timer = None
        response.success = True
        response.message = 'trot stopped' if running else 'no gait was running'
        return response

    def _publish_cycle(self) -> None:
        g = self._gait
        if g is None:
            return
        self.pub.publish(joint_trajectory_msg(g.joint_names, g.times, g.q, g.qd,
                                              stamp=self.get_clock().now().to_msg(),
                                              frame_id=self.p.frame_id))

    @property
    def gait_running(self) -> bool:
        """Whether the built-in trot is being published."""
        return self._timer is not None


def main(args=None) -> int:
    """Console script ``ik_node``: spin the node until Ctrl-C."""
    return run_node(IkNode, args)


if __name__ == '__main__':
    raise SystemExit(main())
