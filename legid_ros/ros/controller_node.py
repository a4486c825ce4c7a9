"""The controller node: PD + model feedforward torques at a fixed rate (Xiao et al. 2025).

Subscribes ``joint_states`` (sensor_msgs/JointState), ``legid/reference``
(trajectory_msgs/JointTrajectory: a whole trajectory, or one point per message when streamed)
and ``legid/parameters`` (std_msgs/Float64MultiArray, names in ``layout.dim[0].label`` as
``parameters:<name>,...``). Publishes, every cycle of a steady-clock wall timer,
``legid/feedforward`` (Float64MultiArray in ``joint_names`` order: the input format of
ros2_control's forward_command_controller) and ``legid/command`` (JointState: desired position
and velocity, total effort), and ``/diagnostics``. A thin adapter: messages -> arrays ->
:class:`legid_ros.core.feedforward.PdFeedforwardController` -> messages.

Bad input (unknown joints, NaN, wrong sizes, parameter names that do not match the model) is
counted per cause on ``/diagnostics`` (at most one publication per period) and logged once;
the node then sends no command until valid input arrives, and never crashes; a non-finite
command is never published. At start-up it refuses, in one line, ``joint_names`` that are not a
permutation of the model's joints and an ``ident_file`` it cannot use. ``kp``, ``kd``,
``state_timeout_s`` and ``diagnostics_period_s`` may change at run time (``ros2 param set``);
the other parameters are read only.

A floating-base description with feet (``robot`` with ``feet`` and sole sizes, loaded with
``floating_base: true``, e.g. the biped) gets the contact-consistent whole-body feedforward
(:class:`legid_ros.core.feedforward.FloatingFeedforward`): the node also subscribes
``legid/window`` (the buffer's windows) and takes the stance feet and the IMU orientation
(and, with ``use_measured_wrenches``, the measured foot wrenches) from the latest usable row
when it is younger than ``contact_timeout_s``; otherwise the stance feet are ``stance_feet``.
The contact QP distributes the load unless measured wrenches are used. Parameters from
``legid/parameters`` must then be physically consistent. ``legid/feedforward`` keeps its format
(one value per ``joint_names`` joint). That path's parameters, contact state and parameter
check are in :mod:`legid_ros.ros.controller_floating`.
"""

from __future__ import annotations

import array
import gc
import os
import time
from typing import Dict, List, Optional, Tuple

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.clock import Clock, ClockType
from rclpy.qos import QoSProfile, qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from legid_ros.core.errors import BadInputError, InfeasibleProblemError, LegidError, SolverError
from legid_ros.core.feedforward import (FeedforwardModel, FloatingFeedforward,
                                        PdFeedforwardController, PdGains, ReferenceTrajectory,
                                        default_gains, floating_from_identification,
                                        from_identification, reflected_rotor_inertia)
from legid_ros.core.robot import Robot, load_robot
from legid_ros.ros.controller_floating import (ContactSource, check_floating_parameters,
                                               floating_parameters, has_feet)
from legid_ros.ros.conversions import diagnostic_msg, parameters_from_msg, stamp_to_sec
from legid_ros.ros.executor import run_node
from legid_ros.ros.parameters import Param, ParameterRefusedError, declare_parameters
from legid_ros.ros.robustness import BoundedCache, GuardedNode

DIAG_NAME = 'legid controller'
#: Distinct joint-name lists of joint_states whose index maps are kept [-].
NAME_CACHE_SIZE = 16
ROBOT_PARAMETERS = (
    Param('robot', 'leg3', 'built-in robot name or description YAML path'),
    Param('floating_base', False, 'model the root as a free flyer: with feet, the '
          'contact-consistent whole-body feedforward; without, evaluated with the base at rest'),
)


def parameters(robot: Robot) -> Tuple[Param, ...]:
    """The parameters whose defaults come from the robot (joints, PD gains), and the rest."""
    gains = default_gains(robot)
    return (
        Param('joint_names', list(robot.actuated_joint_names), 'joint order of legid/feedforward '
              'and legid/command (forward_command_controller joints)'),
        Param('rate_hz', 1000.0, 'control rate [Hz]', low=0.0, open_low=True),
        Param('kp', gains.kp.tolist(), 'proportional gains per model joint [N.m/rad] (default: '
              'the geared leg of Xiao, Qian & Luo 2025)', runtime=True),
        Param('kd', gains.kd.tolist(), 'derivative gains per model joint [N.m.s/rad] (default: '
              'the geared leg of Xiao, Qian & Luo 2025)', runtime=True),
        Param('use_feedforward', True, 'add the model feedforward torque'),
        Param('feedforward_includes_pd', False, 'publish the total saturated torque (PD + '
              'feedforward) on legid/feedforward instead of the feedforward alone'),
        Param('ident_file', '', 'identification result YAML (LegIdentResult: link parameters, '
              'rotor inertias, friction); empty: URDF inertials, description rotor inertias, '
              'no friction'),
        Param('state_timeout_s', 0.1, 'no command when the last joint state is older than this '
              '[s]', low=0.0, runtime=True),
        Param('diagnostics_period_s', 1.0, 'period of the /diagnostics status [s]', low=0.0,
              open_low=True, runtime=True),
        Param('rt_priority', 0, 'SCHED_FIFO priority of the process (1-99, needs the right '
              'to); 0: normal scheduling [-]', low=0, high=99),
        Param('jitter_window', 20000, 'timer periods kept for the jitter statistics [-]',
              low=0),
    ) + (floating_parameters(robot) if has_feet(robot) else ())


def _doubles(values) -> array.array:
    return array.array('d', np.ascontiguousarray(values, dtype=np.float64).tobytes())


class ControllerNode(GuardedNode):
    """PD + feedforward joint controller node (see the module docstring)."""

    def __init__(self, **kwargs):
        super().__init__('controller', **kwargs)
        r = declare_parameters(self, ROBOT_PARAMETERS)
        self.robot = load_robot(r.robot, floating_base=r.floating_base)
        model_joints = self.robot.actuated_joint_names
        p = self.p = declare_parameters(self, parameters(self.robot), check=self._check_gains,
                                        apply=self._apply_parameters)
        self.diag_gate.period_s = p.diagnostics_period_s
        self.out_names: List[str] = list(p.joint_names)
        self.ff_includes_pd = p.feedforward_includes_pd
        self.state_timeout = p.state_timeout_s
        self.last_error = ''
        if sorted(self.out_names) != sorted(model_joints):
            raise ParameterRefusedError(
                'controller', 'joint_names', f'{self.out_names} is not a permutation of the '
                f'model joints {model_joints}: the commands would go to the wrong joints')
        self.out_index = np.array([model_joints.index(n) for n in self.out_names])
        self.model_joints = model_joints
        self.floating = has_feet(self.robot)
        rotor = reflected_rotor_inertia(self.robot)
        self.ff = (FloatingFeedforward(self.robot, rotor_inertia=rotor) if self.floating
                   else FeedforwardModel(self.robot, rotor_inertia=rotor))
        if p.ident_file:
            self.ff = load_ident_file(self.robot, p.ident_file, self.floating)
        self.controller = PdFeedforwardController.for_robot(
            self.robot, self.ff if p.use_feedforward else None, gains=PdGains(p.kp, p.kd))
        self.rotor_names = [f'{j}.rotor_J' for j in model_joints]

        self.q: Optional[np.ndarray] = None
        self.qd: Optional[np.ndarray] = None
        self.state_time = -np.inf
        self.reference: Optional[ReferenceTrajectory] = None
        self._state_map = BoundedCache(NAME_CACHE_SIZE)  # names tuple -> model-order index
        self.counts = {'published': 0, 'skipped': 0, 'bad_states': 0, 'bad_references': 0,
                       'bad_parameters': 0, 'parameter_updates': 0, 'references': 0,
                       'nonfinite_commands': 0}
        self.contacts = (ContactSource(self.robot, self.ff, p, self.counts, self.get_logger())
                         if self.floating else None)
        self._rejected_since_publication: Dict[str, int] = {}
        self._logged = set()
        self.period = 1.0 / p.rate_hz
        self.tick_times = np.zeros(max(p.jitter_window, 2))
        self.n_ticks = 0
        self.ff_us_sum = 0.0

        self.pub_ff = self.create_publisher(Float64MultiArray, 'legid/feedforward', 10)
        self.pub_cmd = self.create_publisher(JointState, 'legid/command', 10)
        self.pub_diag = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self.create_subscription(JointState, 'joint_states', self._on_state,
                                 qos_profile_sensor_data)
        self.create_subscription(JointTrajectory, 'legid/reference', self._on_reference,
                                 QoSProfile(depth=10))
        self.create_subscription(Float64MultiArray, 'legid/parameters', self._on_parameters,
                                 QoSProfile(depth=10))
        if self.floating:
            self.create_subscription(Float64MultiArray, 'legid/window', self._on_window,
                                     QoSProfile(depth=10))
        if p.rt_priority > 0:
            try:
                os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(p.rt_priority))
            except (AttributeError, PermissionError, OSError) as exc:
                self.get_logger().warning(f'cannot use SCHED_FIFO {p.rt_priority}: {exc}')
        self.steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.timer = self.create_timer(self.period, self._tick, clock=self.steady)
        p.timer('diagnostics_period_s', self._on_diag_timer, clock=self.steady)
        gc.freeze()  # start-up objects leave the collector's generations: shorter GC pauses

    # ------------------------------------------------------------- parameters
    def _check_gains(self, changes) -> Optional[str]:
        """Refusal reason of new gains: one finite value >= 0 per model joint."""
        n = len(self.model_joints)
        for name in ('kp', 'kd'):
            if name in changes:
                g = np.asarray(changes[name], float)
                if g.shape != (n,) or not np.all(np.isfinite(g)) or np.any(g < 0):
                    return f'{name} needs {n} finite values >= 0 (one per model joint)'
        return None

    def _apply_parameters(self, changes) -> None:
        """New gains take effect at the next cycle; the state timeout at once."""
        if 'kp' in changes or 'kd' in changes:
            self.controller.gains = PdGains(self.p.kp, self.p.kd)
        self.state_timeout = self.p.state_timeout_s
        self.diag_gate.period_s = self.p.diagnostics_period_s

    # ------------------------------------------------------------------ inputs
    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _report(self, kind: str, exc: Exception) -> None:
        """Count a rejected input, log its first occurrence per cause; /diagnostics carries
        the counts (published at once only if the last publication is a period old)."""
        self.counts[kind] += 1
        self.last_error = f'{kind}: {exc}'[:500]
        since = self._rejected_since_publication
        since[kind] = since.get(kind, 0) + 1
        key = (kind, type(exc).__name__)
        if key not in self._logged:
            self._logged.add(key)
            self.get_logger().error(f'rejected input ({kind}): {exc}'[:500])
        self.publish_diagnostics_now()

    def _on_state(self, msg: JointState) -> None:
        try:
            names = tuple(msg.name)
            idx = self._state_map.get(names)
            if idx is None:
                missing = [j for j in self.model_joints if j not in names]
                if missing:
                    raise BadInputError(f'joint_states lacks joints {missing}')
                idx = np.array([names.index(j) for j in self.model_joints])
                self._state_map.put(names, idx)
            q = np.asarray(msg.position, float)
            qd = np.asarray(msg.velocity, float)
            if q.size != len(names) or qd.size != len(names):
                raise BadInputError('joint_states needs one position and velocity per name')
            q, qd = q[idx], qd[idx]
            if not (np.all(np.isfinite(q)) and np.all(np.isfinite(qd))):
                raise BadInputError('joint_states holds NaN or inf')
            self.q, self.qd, self.state_time = q, qd, time.monotonic()
        except (LegidError, ValueError, IndexError, TypeError) as exc:
            self._report('bad_states', exc)

    def _on_reference(self, msg: JointTrajectory) -> None:
        try:
            pts = msg.points
            if not pts:
                raise BadInputError('reference has no points')
            t = [p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in pts]
            q = [list(p.positions) for p in pts]
            qd = [list(p.velocities) for p in pts] if all(p.velocities for p in pts) else None
            qdd = ([list(p.accelerations) for p in pts]
                   if all(p.accelerations for p in pts) else None)
            stamp = stamp_to_sec(msg.header.stamp)
            ref = ReferenceTrajectory.from_points(self.model_joints, list(msg.joint_names), t,
                                                  q, qd, qdd, stamp if stamp > 0 else self._now())
            self.reference = ref
            self.counts['references'] += 1
        except (LegidError, ValueError, IndexError, TypeError) as exc:
            self.reference = None  # a bad reference stops the commands
            self._report('bad_references', exc)

    def _on_parameters(self, msg: Float64MultiArray) -> None:
        try:
            values, names = parameters_from_msg(msg)
            if not np.all(np.isfinite(values)):
                raise BadInputError('parameters hold NaN or inf')
            n_pi = len(self.ff.parameter_names)
            if self.floating:
                check_floating_parameters(self.ff, values, names)
            if names == self.ff.parameter_names:
                self.ff.set_parameters(values)
            elif names == self.ff.parameter_names + self.rotor_names:
                ratio = np.array([float((self.robot.description.get('joints') or {}).get(
                    j, {}).get('gear_ratio', 1.0)) for j in self.model_joints])
                self.ff.set_parameters(values[:n_pi])
                self.ff.set_rotor_inertia(ratio ** 2 * values[n_pi:])
            else:
                raise BadInputError(f'parameter names do not match the model '
                                    f'({len(names)} names, model has {n_pi})')
            self.counts['parameter_updates'] += 1
        except (LegidError, ValueError, IndexError, TypeError) as exc:
            self._report('bad_parameters', exc)

    def _on_window(self, msg: Float64MultiArray) -> None:
        """The buffer's window: keep the contact state of its latest usable row."""
        try:
            self.contacts.on_window(msg)
        except (LegidError, ValueError, IndexError, TypeError, KeyError) as exc:
            self._report('bad_windows', exc)

    # ------------------------------------------------------------------ cycle
    def _tick(self) -> None:
        now_mono = time.perf_counter()
        self.tick_times[self.n_ticks % self.tick_times.size] = now_mono
        self.n_ticks += 1
        if (self.q is None or self.reference is None
                or time.monotonic() - self.state_time > self.state_timeout):
            self.counts['skipped'] += 1
            return
        try:
            now = self._now()
            q_d, qd_d, qdd_d = self.reference.sample(now)
            if self.floating:
                self.contacts.set_contacts()
            out = self.controller.step(self.q, self.qd, q_d, qd_d, qdd_d)
        except (InfeasibleProblemError, SolverError) as exc:  # only the contact QP raises these
            self._report('contact_failures', exc)
            return
        except (LegidError, ValueError) as exc:
            self._report('bad_references', exc)
            return
        tau_out = out.tau if self.ff_includes_pd else out.tau_ff
        if not (np.all(np.isfinite(tau_out)) and np.all(np.isfinite(out.tau))
                and np.all(np.isfinite(q_d)) and np.all(np.isfinite(qd_d))):
            self.counts['nonfinite_commands'] += 1
            self._report('bad_references', BadInputError('command not finite: not published'))
            return
        self.ff_us_sum += self.controller.last_ff_s * 1e6
        o = self.out_index
        ff_msg = Float64MultiArray()
        ff_msg.data = _doubles(tau_out[o])
        cmd = JointState()
        cmd.header.stamp = self.get_clock().now().to_msg()
        cmd.name = self.out_names
        cmd.position = _doubles(q_d[o])
        cmd.velocity = _doubles(qd_d[o])
        cmd.effort = _doubles(out.tau[o])
        self.pub_ff.publish(ff_msg)
        self.pub_cmd.publish(cmd)
        self.counts['published'] += 1

    # ------------------------------------------------------------------ status
    def jitter_ms(self) -> np.ndarray:
        """|timer period - nominal| of the recorded cycles [ms]."""
        k = min(self.n_ticks, self.tick_times.size)
        if k < 3:
            return np.zeros(0)
        start = self.n_ticks % self.tick_times.size if self.n_ticks > k else 0
        t = np.roll(self.tick_times, -start)[:k] if self.n_ticks > k else self.tick_times[:k]
        return np.abs(np.diff(t) - self.period) * 1e3

    def _publish_diagnostics(self, level: Optional[str] = None,
                             message: Optional[str] = None) -> None:
        d = self.controller.diagnostics
        since, self._rejected_since_publication = self._rejected_since_publication, {}
        if level is None and since:
            level, message = 'error', 'rejected input: ' + ', '.join(
                f'{k} x{v}' for k, v in sorted(since.items())) + f' (last: {self.last_error})'
        if level is None:
            stale = self.q is None or time.monotonic() - self.state_time > self.state_timeout
            if self.reference is None or stale:
                level, message = 'warn', ('waiting for ' + ' and '.join(
                    x for x, bad in (('joint_states', stale), ('a reference',
                                                                self.reference is None)) if bad))
            elif d.saturated_cycles:
                level, message = 'warn', f'effort saturated in {d.saturated_cycles} cycles'
            else:
                level, message = 'ok', 'commanding'
        jit = self.jitter_ms()
        values = dict(self.counts)
        values.update({f'event.{k}': v for k, v in sorted(self.problems.counts.items())})
        values.update({'cycles': d.cycles, 'saturated_cycles': d.saturated_cycles,
                       'saturated_per_joint': d.saturated_per_joint.tolist(),
                       'tau_ff_us_mean': self.ff_us_sum / max(d.cycles, 1),
                       'loop_jitter_ms_p99': float(np.percentile(jit, 99)) if jit.size else 0.0,
                       'last_error': self.last_error})
        self.pub_diag.publish(diagnostic_msg(self._now(), DIAG_NAME, self.robot.name, level,
                                             message, values))


def load_ident_file(robot: Robot, path: str, floating: bool = False) -> FeedforwardModel:
    """The feedforward model of an identification result YAML (the contact-consistent
    floating-base one when ``floating``).

    Raises:
        ParameterRefusedError: Missing, unreadable or not matching the robot.
    """
    from legid_ros.core.identification.result import LegIdentResult
    try:
        result = LegIdentResult.load(path)
        if floating:
            return floating_from_identification(robot, result)
        return from_identification(robot, result)
    except (LegidError, ValueError, OSError, KeyError, TypeError, AttributeError) as exc:
        raise ParameterRefusedError('controller', 'ident_file', f'cannot use {path!r}: '
                                    f'{type(exc).__name__}: {exc}'.replace('\n', ' ')) from None


def main(args=None) -> int:
    """Console script ``controller_node``: spin the node until Ctrl-C / SIGTERM."""
    return run_node(ControllerNode, args)


if __name__ == '__main__':
    import sys
    sys.exit(main())
