"""Buffer node: robot sensor streams -> aligned, filtered windows and the measured ZMP.

Subscribes ``joint_states``, the IMU (the description's ``imu.topic``; the default ``/imu``
as the relative ``imu``, as before) and, per foot of the robot's description, either the
6-axis ``<foot wrench_topic>`` (a point foot: its force only) or its force sensors' topics
(``Robot.force_sensor_topics()``: the description's ``force_sensors``, any valid names, else
``<fsr_topic_prefix>/sensor_<k>``; sensor positions from ``Robot.force_sensor_positions``) (both
WrenchStamped; chosen by the description's ``force_sensing`` unless overridden) and, with
``use_ankle_ft``, each foot's raw ankle F/T ``<ankle_ft_topic>`` (WrenchStamped, leg-on-foot
wrench in the F/T frame; carried as window channels ``ankle_ft.<foot>.<axis>``). Publishes
``legid/window`` (Float64MultiArray, rows x channels, schema in the layout),
``legid/zmp/measured`` (PointStamped in ``world_frame``) and ``/diagnostics``. Service
``~/reset``. Serialized messages (``raw_decoding``) are taken from the middleware every
20 ms by a steady timer (subscriptions of a ``<name>_intake`` node that is never spun: no
executor dispatch per message) and processed in batches (:mod:`legid_ros.ros.buffer_intake`).
All logic lives in :mod:`legid_ros.core.buffer.sensor_buffer`. ``flush_every``,
``idle_flush_s`` and ``diagnostics_period_s`` may change at run time; the rest is read only.

Sensor conventions as offline (:mod:`legid_ros.core.conventions`): IMU samples are converted
from the description's ``imu.rpy`` and ``imu.heading_rad``, each foot's wrenches from its
``expressed_in`` axes (sensor, foot or world) to its F/T frame's, by the buffer's core with the
offline conversion's functions.

A message that cannot be used (undecodable, empty, NaN, mismatched arrays, unknown joints, a
wrench or IMU sample whose frame_id is neither empty nor the description's: ``imu.frame_id``,
the foot's ``frame_id``, its sensor frames) costs that message and a count per cause in
``/diagnostics`` (published at most once per period); the node never stops on
input. At start-up the description's F/T and IMU frames must be frames of the robot model,
and its IMU and force topics valid ROS 2 names (``left_foot/fsr/0`` is refused in one line
naming the key and the fix; a bag may hold such names).
"""

from __future__ import annotations

import time
from functools import partial

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PointStamped, WrenchStamped
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger

from legid_ros.core.buffer.sensor_buffer import Buffer, BufferConfig
from legid_ros.core.buffer.kinematics import StreamKinematics
from legid_ros.core.buffer.topics import check_live_topics, imu_topic
from legid_ros.core.contact.rule import node_thresholds
from legid_ros.core.conventions.stamps import describe_offset, offset_label
from legid_ros.core.errors import BadInputError, LegidError
from legid_ros.core.robot import load_robot
from legid_ros.ros import conversions as cv
from legid_ros.ros.buffer_intake import RawIntake
from legid_ros.ros.buffer_parameters import PARAMETERS, expected_frames
from legid_ros.ros.executor import run_node
from legid_ros.ros.node_util import sensor_qos
from legid_ros.ros.parameters import ParameterRefusedError, declare_parameters
from legid_ros.ros.robustness import GuardedNode

DIAG_NAME = 'legid buffer'
TIMER_S = 0.1  # [s] period of the idle check and of a processing pass
INTAKE_S = 0.02  # [s] period at which serialized messages are taken from the middleware


class BufferNode(GuardedNode, RawIntake):
    """ROS adapter around :class:`legid_ros.core.buffer.sensor_buffer.Buffer`.

    The serialized messages' intake (``raw_decoding``) is :class:`legid_ros.ros.buffer_intake.
    RawIntake`'s, a base after ``GuardedNode``: it adds methods and overrides none of a node's.
    """

    def __init__(self, **kwargs):
        super().__init__('buffer', **kwargs)
        p = declare_parameters(self, PARAMETERS, apply=self._apply_parameters)
        self.p = p
        self.diag_gate.period_s = p['diagnostics_period_s']
        robot = load_robot(p['robot'])
        mode = p['force_sensing'] or robot.description.get('force_sensing', 'wrench')
        topics = robot.force_sensor_topics()
        fsr_count = {f: len(t) for f, t in topics.items()}
        ankle = [f for f, foot in robot.feet.items() if p['use_ankle_ft'] and foot.ankle_ft_topic
                 and foot.ft_frame]
        check_live_topics(robot, mode, ankle)
        self.cfg = BufferConfig(
            joint_names=robot.actuated_joint_names, feet=list(robot.feet), force_mode=mode,
            fsr_count=fsr_count, length=int(p['window_length']), hop=int(p['window_hop']),
            max_delay_s=p['max_delay_s'], reorder_s=p['reorder_s'],
            stale_after_s=p['stale_after_s'], jump_back_s=p['jump_back_s'], gap_s=p['gap_s'],
            velocity_cutoff_hz=p['velocity_cutoff_hz'],
            acceleration_cutoff_hz=p['acceleration_cutoff_hz'], zmp_cutoff_hz=p['zmp_cutoff_hz'],
            ankle_ft_feet=ankle)
        self._frames = expected_frames(robot, mode, ankle) if p['check_frame_id'] else {}
        try:
            thresholds, warning = node_thresholds(robot, p['contact_on_fraction'],
                                                  p['contact_off_fraction'],
                                                  p['contact_force_n'])
        except BadInputError as exc:
            raise ParameterRefusedError('buffer', 'contact_off_fraction', str(exc)) from exc
        if warning:
            self.get_logger().warning(warning)
        self.kin = StreamKinematics(robot, mode, thresholds, expressed_in={
            f: foot.expressed_in for f, foot in robot.feet.items()})
        self._imu_spec = robot.imu
        self.buffer = Buffer(self.cfg, self.kin, imu=self._imu_spec, clock=time.monotonic)
        self.schema = self.buffer.schema
        self._zmp_cols = (self.schema.index('zmp.x'), self.schema.index('zmp.y'))
        qos = sensor_qos(int(p['queue_depth']))
        self.pub_window = self.create_publisher(Float64MultiArray, 'legid/window', 10)
        self.pub_zmp = self.create_publisher(PointStamped, 'legid/zmp/measured', 10)
        self.pub_diag = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        raw = bool(p['raw_decoding'])
        self._raw = raw
        self._queue = {'js': [], 'imu': []}
        self._ankle_keys = {('ankle_ft', name): name for name in ankle}
        self._counted = {'joint_states': 0, 'imu': 0, 'force': 0, 'ankle_ft': 0}
        self._kind = {'js': 'joint_states', 'imu': 'imu'}
        self._polled = []  # (subscription, queue) drained by the intake timer
        self._intake = None
        if raw:
            # serialized messages taken in batches by a steady timer from subscriptions of a
            # node that is never spun: no executor dispatch, no Python frame per message
            self._intake = Node(f'{self.get_name()}_intake', context=self.context,
                                start_parameter_services=False, enable_rosout=False)
            self._js_queue = self._queue['js']
            self._polled.append((self._intake.create_subscription(
                JointState, 'joint_states', _never, qos, raw=True), self._js_queue))
            self.create_timer(INTAKE_S, self._on_intake,
                              clock=Clock(clock_type=ClockType.STEADY_TIME))
        else:
            self.create_subscription(JointState, 'joint_states', self._on_joint_state, qos)
        self._subscribe(Imu, imu_topic(robot), 'imu', self._on_imu, qos)
        for name, foot in robot.feet.items():
            if mode == 'wrench':
                self._subscribe(WrenchStamped, foot.wrench_topic, name,
                                partial(self._on_wrench, name), qos)
            else:
                for k, topic in enumerate(topics[name]):
                    self._subscribe(WrenchStamped, topic, (name, k),
                                    partial(self._on_fsr, name, k), qos)
        for name in ankle:
            self._subscribe(WrenchStamped, robot.feet[name].ankle_ft_topic, ('ankle_ft', name),
                            partial(self._on_ankle_ft, name), qos)
        self.create_service(Trigger, '~/reset', self._on_reset)
        self.create_timer(TIMER_S, self._on_timer)
        p.timer('diagnostics_period_s', self._on_diag_timer)
        self.windows_published = 0
        self._since_flush = 0
        self._dec_js = cv.RawBatch('joint_state')
        self._dec_imu = cv.RawBatch('imu')
        self._dec_wrench = cv.RawBatch('wrench')
        self._flush_every = int(p['flush_every'])
        self._flush_at = 1
        self._passes = 0
        self._last_pass_wall = -np.inf
        self._reorder_rows = 3
        self._last_js_wall = time.monotonic()
        self._js_seen = 0
        self._last_zmp_t = -np.inf
        self._reported = set()
        self._errors = 0
        self.get_logger().info(
            f'buffer: robot {robot.name}, {mode} force sensing, {len(self.schema)} channels, '
            f'windows of {self.cfg.length} rows every {self.cfg.hop} rows'
            + (f', ankle F/T of {", ".join(ankle)}' if ankle else ''))

    def _apply_parameters(self, changes):
        """Run-time processing pace (the diagnostics timer follows its period parameter)."""
        self._flush_every = changes.get('flush_every', self._flush_every)
        self.diag_gate.period_s = self.p['diagnostics_period_s']

    # -------------------------------------------------------------- callbacks
    def _guard(self, fn, *args) -> bool:
        """Run ``fn(*args)``; a failure costs only this call (counted). Returns success."""
        try:
            fn(*args)
            return True
        except Exception as exc:  # noqa: BLE001  (input must never stop the node)
            self._errors += 1
            self._count('callback_error')
            if 'callback_error' not in self._reported:
                self._reported.add('callback_error')
                self.get_logger().error(f'bad message ignored: {exc!r}'[:500])
            return False

    def _count(self, kind: str, n: int = 1) -> None:
        self.buffer.events[kind] = self.buffer.events.get(kind, 0) + n

    def _frame_ok(self, key, msg) -> bool:
        """Whether ``msg`` (deserialized) is in an accepted frame; counts it if not."""
        frames = self._frames.get(key)
        if frames is None or msg.header.frame_id in frames:
            return True
        self._count('wrong_frame_id')
        return False

    def _subscribe(self, msg_type, topic: str, key, on_message, qos) -> None:
        """Subscribe one auxiliary input. Serialized messages are taken into the queue of
        ``key`` by the intake timer (nothing per message can fail); decoding, checks and
        counting happen per batch in :meth:`_flush`. Deserialized messages go through
        ``on_message`` (guarded)."""
        kind = ('ankle_ft' if key in self._ankle_keys else
                'imu' if key == 'imu' else 'force')
        self._kind[key] = kind
        if not self._raw:
            self.create_subscription(msg_type, topic, on_message, qos)
            return
        queue = self._queue.setdefault(key, [])
        self._polled.append((self._intake.create_subscription(
            msg_type, topic, _never, qos, raw=True), queue))

    @property
    def sensor_topics(self) -> set:
        """Fully qualified names of the sensor topics subscribed (polled or with callbacks)."""
        subs = [sub for sub, _ in self._polled] or list(self.subscriptions)
        return {sub.topic_name for sub in subs}

    @property
    def received(self) -> dict:
        """Messages received per input kind (decoded or still queued)."""
        out = dict(self._counted)
        for key, raws in self._queue.items():
            out[self._kind[key]] += len(raws)
        return out

    def destroy_node(self):
        """Destroy the intake node of the polled subscriptions too."""
        if self._intake is not None:
            self._intake.destroy_node()
            self._intake = None
        return super().destroy_node()

    def _on_joint_state(self, msg):
        self._counted['joint_states'] += 1
        self._guard(lambda: self.buffer.add_joint_state(*cv.joint_state_fields(msg)))
        self._last_js_wall = time.monotonic()
        self._since_flush += 1
        if self._since_flush >= self._flush_at:
            self._flush()

    def _on_imu(self, msg):
        self._counted['imu'] += 1
        if self._frame_ok('imu', msg):
            self._guard(lambda: self.buffer.add_imu(*cv.imu_fields(msg)))

    def _on_wrench(self, foot: str, msg):
        self._counted['force'] += 1
        if self._frame_ok(foot, msg):
            self._guard(lambda: self.buffer.add_wrench(foot, *cv.wrench_fields(msg)))

    def _on_fsr(self, foot: str, k: int, msg):
        self._counted['force'] += 1
        if self._frame_ok((foot, k), msg):
            self._guard(lambda: self.buffer.add_fsr(foot, k, *_fz(cv.wrench_fields(msg))))

    def _on_ankle_ft(self, foot: str, msg):
        self._counted['ankle_ft'] += 1
        if self._frame_ok(('ankle_ft', foot), msg):
            self._guard(lambda: self.buffer.add_ankle_ft(foot, *cv.wrench_fields(msg)))

    def _on_timer(self):
        now = time.monotonic()
        seen = self.received['joint_states']
        if seen != self._js_seen:
            self._js_seen, self._last_js_wall = seen, now
        if now - self._last_js_wall > self.p['idle_flush_s']:
            self._flush(force=True, final=True)
        elif now - self._last_pass_wall >= TIMER_S:
            self._flush()  # the joint states alone do not trigger passes (slow or lagging)

    def _on_reset(self, request, response):
        self._flush(force=True, final=True)
        self.buffer = Buffer(self.cfg, self.kin, imu=self._imu_spec, clock=time.monotonic)
        self._reported.clear()
        self.problems.clear()
        response.success = True
        response.message = 'buffer reset'
        return response

    # ----------------------------------------------------------------- output
    def _flush(self, force: bool = False, final: bool = False, take: bool = True):
        """A processing pass over everything queued (``take``: first take what the middleware
        holds)."""
        self._since_flush = 0
        self._last_pass_wall = time.monotonic()
        self._passes += 1
        if take and self._polled:
            self._take_all()
        self._decode_queued()
        try:
            windows = self.buffer.flush(force=force, final=final)
        except (LegidError, ValueError, IndexError, FloatingPointError) as exc:
            self._errors += 1
            self._count('processing_error')
            self.get_logger().error(f'processing failed: {exc}', throttle_duration_sec=10.0)
            return
        for win in windows:
            self.pub_window.publish(cv.window_msg(win, self.schema))
            self.windows_published += 1
        buf = self.buffer
        # next pass: after flush_every joint states, or once a window can be completed; at
        # least a few messages later when rows wait for a lagging stream (no pass per message)
        need = buf.rows_until_window + self._reorder_rows - buf.pending
        self._flush_at = max(min(self._flush_every, need), min(self._flush_every, 5), 1)
        self._publish_zmp()
        self._report_new_events()

    def _publish_zmp(self):
        row = self.buffer.latest_row
        if row is None or row[0] == self._last_zmp_t:
            return
        self._last_zmp_t = row[0]
        x, y = row[self._zmp_cols[0]], row[self._zmp_cols[1]]
        if np.isfinite(x) and np.isfinite(y):
            self.pub_zmp.publish(cv.point_msg(row[0], self.p['world_frame'], x, y))

    def _report_new_events(self):
        """Log each new kind of input problem once; publish early at most once per period."""
        new = False
        for kind in self.buffer.events:
            if kind not in self._reported:
                self._reported.add(kind)
                self.get_logger().warning(f'input problem: {kind} (counted in /diagnostics)'
                                          + self._explain(kind))
                new = True
        if self.problems.take_new() or new:
            self.publish_diagnostics_now()

    def _explain(self, kind: str) -> str:
        """More words for an input problem's first log line ('' if none)."""
        what = kind[len('stamps_apart_'):] if kind.startswith('stamps_apart_') else None
        off = self.buffer.stamp_offsets.get(what) if what else None
        if off is None:
            return ''
        return (f': {what} header stamps {describe_offset(off)}; its rows are stale. Fix: '
                'stamp every stream from one clock (the same use_sim_time on every driver)')

    def status(self):
        """(level, message, values) of the current diagnostic."""
        ev = dict(self.buffer.events)
        for kind, n in self.problems.counts.items():
            ev[kind] = ev.get(kind, 0) + n
        stale = self.buffer.stale_streams()
        level = 'ok'
        parts = []
        if ev:
            level = 'warn'
            parts.append('input problems: '
                         + ', '.join(f'{k} x{v}' for k, v in sorted(ev.items())))
        if stale:
            level = 'warn'
            parts.append('silent streams: ' + ', '.join(stale))
        apart = self.buffer.stamp_offsets
        if apart:
            level = 'warn'
            parts.append("stamped on another clock than the joint states': " + ', '.join(
                f'{k} ({offset_label(v)})' for k, v in sorted(apart.items())))
        values = {f'event.{k}': v for k, v in sorted(ev.items())}
        values.update({'received.' + k: v for k, v in self.received.items()})
        values.update({'rows_emitted': self.buffer.rows_emitted,
                       'windows_published': self.windows_published,
                       'processing_passes': self._passes,
                       'stale_streams': ','.join(stale), 'force_sensing': self.cfg.force_mode})
        values.update({f'stamp_offset_s.{k}': v for k, v in sorted(apart.items())})
        return level, '; '.join(parts) or 'ok', values

    def _publish_diagnostics(self):
        level, message, values = self.status()
        now = self.get_clock().now().nanoseconds * 1e-9
        self.pub_diag.publish(cv.diagnostic_msg(now, DIAG_NAME, 'legid_ros', level, message,
                                                values))


def _never(_msg) -> None:
    """Callback of the polled subscriptions (their node is never spun)."""


def _fz(fields):
    """(stamp, normal force) of ``wrench_fields`` output."""
    t, w = fields
    return t, w[2]


def main(args=None) -> int:
    """Console script ``buffer_node``."""
    return run_node(BufferNode, args)


if __name__ == '__main__':
    raise SystemExit(main())
