"""Sim node: the simulated biped's sensor topics at 1 kHz, plus latched ground truth.

The run is computed first (the biped excitation of the ZMP identification, Wu & Gao 2021:
:func:`legid_ros.core.synthetic.simulate_biped`, by default with the support swap, so both
feet are weighed by their ankle F/T while they swing; or MuJoCo physics
:func:`legid_ros.core.sim.mujoco_biped.simulate_biped_mujoco`), then streamed sample by sample
at ``real_time_factor`` times real time: ``joint_states``, ``imu``, per foot ``<wrench_topic>``
and/or each force sensor's topic (the description's ``force_sensors``, else
``<fsr_topic_prefix>/sensor_<k>``; WrenchStamped, force.z), and ``legid/sim/ground_truth``
(Float64MultiArray, transient local, names in the layout). Stamps are the start wall time
plus the run time; with ``loop`` the run repeats with stamps that keep increasing. The
achieved real-time factor is in /diagnostics. Every parameter is read at start-up only (the
run is precomputed). With ``publish_clock`` it also publishes ``/clock``
(the stamp of the last published sample) so nodes with ``use_sim_time`` run on the simulated
time; its own timers run on the steady clock, so it never waits for a clock it publishes.

Events for the online estimator: ``payload_kg`` added to the trunk at ``payload_at_s`` of
each lap (the physics changes then, and so does the latched ground truth, republished at
that time and again at the start of the next lap), and an IMU heading error
(``imu_yaw_offset_deg`` plus ``imu_yaw_drift_deg_s`` times the run time) on the published
IMU orientation.

A force topic of the description that is not a valid ROS 2 name (``left_foot/fsr/0``: a token
starting with a digit) is refused at start-up, in one line naming the key and the fix.
"""

from __future__ import annotations

import dataclasses
import time
from typing import List

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from rclpy.clock import Clock, ClockType
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray

from legid_ros.core.buffer.topics import check_live_topics
from legid_ros.core.errors import BadInputError
from legid_ros.core.recording import Recording
from legid_ros.core.robot import load_robot
from legid_ros.ros import conversions as cv
from legid_ros.ros.executor import run_node
from legid_ros.ros.node_util import latched_qos, sensor_qos
from legid_ros.ros.parameters import Param, ParameterRefusedError, declare_parameters
from legid_ros.ros.robustness import GuardedNode

#: Shortest run [s] for which ``protocol: auto`` picks the support swap (a shorter run has no
#: room for both single supports and the transfer; it runs the right-support protocol).
AUTO_SWAP_MIN_S = 12.0
PARAMETERS = (
    Param('robot', 'biped', 'built-in robot name (only biped is simulated)'),
    Param('engine', 'synthetic', "'synthetic' (exact rigid-body data) or 'mujoco' (physics)",
          choices=('synthetic', 'mujoco')),
    Param('duration_s', 20.0, 'length of the precomputed run [s]', low=0.0, open_low=True),
    Param('seed', 0, 'seed of the random excitation and noise [-]', low=0),
    Param('noise', 'default', "sensor noise: 'default' or 'none'", choices=('default', 'none')),
    Param('real_time_factor', 1.0, 'playback speed: simulated seconds per wall second [-]',
          low=0.0),
    Param('loop', True, 'repeat the run (stamps keep increasing, with a gap of loop_gap_s)'),
    Param('loop_gap_s', 1.0, 'silence between two laps, so the buffer starts a new segment at '
          'the jump back to the start posture [s]', low=0.0),
    Param('publish_forces', '', "'wrench', 'fsr', 'both' or '' (the description's "
          'force_sensing)', choices=('', 'wrench', 'fsr', 'both')),
    Param('publish_ankle_ft', True, 'also publish the raw ankle F/T topics (<wrench_topic>_raw: '
          'the leg-on-foot wrench [N, N.m]) when the recording has them'),
    Param('publish_period_s', 0.005, 'wall period of the publishing timer [s]', low=0.0,
          open_low=True),
    Param('start_delay_s', 0.5, 'wait before the first sample, to let subscribers connect [s]',
          low=0.0),
    Param('recording', '', 'optional .npz Recording to stream instead of simulating'),
    Param('queue_depth', 1000, 'publisher queue depth [messages] (1000: 1 s of samples at '
          '1 kHz, so a subscriber starved of CPU for up to a second loses nothing)', low=1),
    Param('protocol', 'auto', "excitation: 'swap' (single support on the right, a "
          "double-support transfer, single support on the left: both feet weighed), 'right' "
          "(single support on the right foot, Wu & Gao 2021) or 'auto' (swap with the "
          f"synthetic engine for runs of {AUTO_SWAP_MIN_S:g} s or more, else right; mujoco has "
          'only right)',
          choices=('auto', 'swap', 'right')),
    Param('payload_kg', 0.0, 'mass added to the trunk at payload_at_s of every lap [kg] (0 = '
          'none; synthetic engine)', low=0.0, high=50.0),
    Param('payload_at_s', 10.0, 'time of the run when the payload is added [s]', low=0.0),
    Param('imu_yaw_offset_deg', 0.0, 'heading error added to the published IMU orientation '
          '[deg]', low=-180.0, high=180.0),
    Param('imu_yaw_drift_deg_s', 0.0, 'heading drift of the published IMU orientation '
          '[deg/s]', low=-10.0, high=10.0),
    Param('wait_for_subscribers', 0, 'start streaming only once joint_states has this many '
          'subscribers (then after start_delay_s) [-] (0 = do not wait)', low=0),
    Param('publish_clock', False, 'publish /clock (rosgraph_msgs/Clock): the stamp of the last '
          'published sample, for nodes with use_sim_time'),
)
DIAG_NAME = 'legid sim'


def make_recording(engine: str, duration_s: float, seed: int, noise: str,
                   protocol: str = 'right', payload_kg: float = 0.0,
                   payload_at_s: float = 0.0) -> Recording:
    """Simulate the biped excitation (Wu & Gao 2021) with the synthetic generator or MuJoCo.

    Args:
        protocol: 'right' (single support on the right foot), 'swap' (right, double-support
            transfer, left; synthetic only) or 'auto' (swap if synthetic and the run lasts
            :data:`AUTO_SWAP_MIN_S` or more, else right).
        payload_kg: Mass added to the trunk at ``payload_at_s`` [kg, s] (synthetic only).
    """
    from legid_ros.core.synthetic import NoiseModel, SyntheticConfig

    if noise not in ('default', 'none'):
        raise BadInputError(f"noise must be 'default' or 'none', not {noise!r}")
    if protocol == 'auto':
        protocol = 'swap' if engine == 'synthetic' and duration_s >= AUTO_SWAP_MIN_S else 'right'
    cfg = SyntheticConfig(duration_s=float(duration_s), seed=int(seed),
                          noise=NoiseModel.none() if noise == 'none' else NoiseModel(),
                          protocol=protocol, payload_kg=float(payload_kg),
                          payload_at_s=float(payload_at_s))
    if engine == 'synthetic':
        from legid_ros.core.synthetic import simulate_biped
        return simulate_biped(cfg)
    if engine == 'mujoco':
        if protocol != 'right' or payload_kg > 0:
            raise BadInputError('the mujoco engine runs the right-support protocol without a '
                                "payload only (protocol 'right' or 'auto', payload_kg 0)")
        from legid_ros.core.sim.mujoco_biped import simulate_biped_mujoco
        return simulate_biped_mujoco(cfg)
    raise BadInputError(f"engine must be 'synthetic' or 'mujoco', not {engine!r}")


class SimNode(GuardedNode):
    """Streams a precomputed :class:`Recording` as robot topics."""

    def __init__(self, recording: Recording = None, **kwargs):
        super().__init__('sim', **kwargs)
        p = declare_parameters(self, PARAMETERS)
        self.p = p
        robot = load_robot(p['robot'])
        if recording is None and not p['recording'] and robot.name != 'biped':
            raise ParameterRefusedError('sim', 'robot', f'only the biped is simulated, not '
                                        f'{robot.name!r} (give a recording to stream instead)')
        if recording is None:
            if p['recording']:
                recording = Recording.load_npz(p['recording'])
            else:
                self.get_logger().info(f"simulating {p['duration_s']:.1f} s ({p['engine']}, "
                                       f"protocol {p['protocol']})")
                try:
                    recording = make_recording(p['engine'], p['duration_s'], p['seed'],
                                               p['noise'], p['protocol'], p['payload_kg'],
                                               p['payload_at_s'])
                except BadInputError as exc:
                    raise ParameterRefusedError('sim', 'protocol', str(exc)) from exc
        if p['imu_yaw_offset_deg'] or p['imu_yaw_drift_deg_s']:
            from legid_ros.core.synthetic.scenario import imu_heading_error
            recording = dataclasses.replace(recording, imu_quat=imu_heading_error(
                recording.imu_quat, recording.t, p['imu_yaw_offset_deg'],
                p['imu_yaw_drift_deg_s']))
        self.rec = recording
        mode = p['publish_forces'] or robot.description.get('force_sensing', 'wrench')
        if mode not in ('wrench', 'fsr', 'both'):
            raise BadInputError(f'publish_forces must be wrench, fsr, both or empty: {mode!r}')
        check_live_topics(robot, mode, list(robot.feet) if p['publish_ankle_ft'] else ())
        qos = sensor_qos(int(p['queue_depth']))
        self.pub_js = self.create_publisher(JointState, 'joint_states', qos)
        self.pub_imu = self.create_publisher(Imu, 'imu', qos)
        self.pub_wrench = {}
        self.pub_ankle = {}  # raw ankle F/T (leg-on-foot wrench), as in the bags
        self.pub_fsr = {}
        self.frames = {}
        for name, foot in robot.feet.items():
            if mode in ('wrench', 'both') and name in recording.foot_wrench:
                self.pub_wrench[name] = self.create_publisher(WrenchStamped, foot.wrench_topic,
                                                              qos)
            if p['publish_ankle_ft'] and foot.ankle_ft_topic and name in recording.ankle_ft:
                self.pub_ankle[name] = self.create_publisher(WrenchStamped, foot.ankle_ft_topic,
                                                             qos)
            if mode in ('fsr', 'both') and name in recording.fsr:
                if recording.fsr[name].shape[1] != len(foot.fsr_topics):
                    raise ParameterRefusedError(
                        'sim', 'robot', f'the recording has {recording.fsr[name].shape[1]} '
                        f'force sensors on foot {name!r}, the description '
                        f'{len(foot.fsr_topics)} (feet.{name}.force_sensors)')
                self.pub_fsr[name] = [self.create_publisher(WrenchStamped, topic, qos)
                                      for topic in foot.fsr_topics]
            self.frames[name] = (foot.wrench_frame, foot.sensor_frames)
        self.imu_frame = robot.imu_frame
        self.pub_truth = self.create_publisher(Float64MultiArray, 'legid/sim/ground_truth',
                                               latched_qos())
        self.pub_diag = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self._truths = self._truth_schedule(recording)
        self._truth_shown = None
        self._publish_truth(0.0)
        self.rtf = float(p['real_time_factor'])
        if self.rtf <= 0:
            raise BadInputError('real_time_factor must be > 0')
        self.span = (float(recording.t[-1] - recording.t[0]) + 1.0 / max(recording.rate, 1.0)
                     + float(p['loop_gap_s']))
        self._waiting = int(p['wait_for_subscribers']) > 0
        self._set_start()
        self.index = 0
        self.lap = 0
        self.published = 0
        self.finished = False
        self.last_stamp = None  # stamp of the last published sample [s]
        self._max_batch = max(10, int(20 * p['publish_period_s'] * recording.rate * self.rtf))
        self._packers = self._make_packers()
        self._lap_rows = None
        self._lap_packers = []  # packer of each entry of the packed lap
        self.pub_clock = (self.create_publisher(ClockMsg, '/clock', 10)
                          if p['publish_clock'] else None)
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(float(p['publish_period_s']), self._on_timer, clock=steady)
        self.create_timer(1.0, self._publish_diagnostics, clock=steady)
        self.get_logger().info(
            f'streaming {recording.n} samples ({self.span:.1f} s) at {self.rtf:g}x real time, '
            f'forces: {mode}')

    def _set_start(self):
        """Start the run's clock ``start_delay_s`` from now."""
        self.t0_wall = time.time() + float(self.p['start_delay_s'])
        self._mono0 = time.monotonic() + float(self.p['start_delay_s'])

    @staticmethod
    def _truth_schedule(rec: Recording):
        """``[(run time [s], parameters)]`` of the ground truth (a payload adds an entry)."""
        if rec.pi_true is None:
            return []
        out = [(0.0, np.asarray(rec.pi_true, float))]
        payload = rec.meta.get('payload')
        if payload and rec.meta.get('pi_true_after_payload') is not None:
            out.append((float(payload['at_s']), np.asarray(rec.meta['pi_true_after_payload'],
                                                           float)))
        return out

    def _publish_truth(self, run_t: float) -> None:
        """Publish (latched) the ground truth in force at run time ``run_t`` [s] if it changed."""
        live = [k for k, (t, _) in enumerate(self._truths) if t <= run_t]
        if not live or live[-1] == self._truth_shown:
            return
        self._truth_shown = live[-1]
        self.pub_truth.publish(cv.parameters_msg(self._truths[live[-1]][1],
                                                 self.rec.param_names))

    def _on_timer(self):
        if self._waiting:
            if self.count_subscribers('joint_states') < int(self.p['wait_for_subscribers']):
                return
            self._waiting = False
            self._set_start()
        elapsed = (time.monotonic() - self._mono0) * self.rtf
        if elapsed < 0 or self.finished:
            return
        rec = self.rec
        t_rel = rec.t - rec.t[0]
        for _ in range(self._max_batch):
            if self.index >= rec.n:
                if not self.p['loop']:
                    self.finished = True
                    return
                self.index = 0
                self.lap += 1
            run_t = self.lap * self.span + t_rel[self.index]
            if run_t > elapsed:
                break
            self._publish_sample(self.index, self.t0_wall + run_t)
            self.last_stamp = self.t0_wall + run_t
            if len(self._truths) > 1:
                self._publish_truth(float(t_rel[self.index]))
            self.index += 1
        if self.pub_clock is not None and self.last_stamp is not None:
            self.pub_clock.publish(ClockMsg(clock=cv.sec_to_stamp(self.last_stamp)))

    def _make_packers(self):
        """Serialized-message packers (one template per topic, see :class:`cv.RawPacker`)."""
        rec = self.rec
        nj = len(rec.joint_names)
        zeros = np.zeros(nj)
        # velocity / effort columns that are not measured (NaN) are left out of the messages
        self._has_v = bool(np.isfinite(rec.qd).all())
        self._has_e = bool(np.isfinite(rec.tau).all())
        packers = {'js': cv.RawPacker('joint_state', cv.joint_state_msg(
            0.0, rec.joint_names, zeros, zeros if self._has_v else None,
            zeros if self._has_e else None)),
            'imu': cv.RawPacker('imu', cv.imu_msg(0.0, self.imu_frame, [0, 0, 0, 1], zeros[:3],
                                                  zeros[:3]))}
        for foot in self.pub_wrench:
            packers[('w', foot)] = cv.RawPacker('wrench', cv.wrench_msg(0.0, self.frames[foot][0],
                                                                        np.zeros(6)))
        for foot in self.pub_ankle:
            packers[('a', foot)] = cv.RawPacker('wrench', cv.wrench_msg(0.0, self.frames[foot][0],
                                                                        np.zeros(6)))
        for foot, pubs in self.pub_fsr.items():
            frames: List[str] = self.frames[foot][1]
            for j in range(len(pubs)):
                packers[('f', foot, j)] = cv.RawPacker('wrench', cv.wrench_msg(
                    0.0, frames[j] if j < len(frames) else '', np.zeros(6)))
        return packers

    def _pack_lap(self, lap: int):
        """Serialized messages of every sample of one lap (stamps of that lap)."""
        rec = self.rec
        stamps = self.t0_wall + lap * self.span + (rec.t - rec.t[0])
        pk = self._packers
        js_fields = {'p': rec.q}
        if self._has_v:
            js_fields['v'] = rec.qd
        if self._has_e:
            js_fields['e'] = rec.tau
        rows = {'js': (self.pub_js, pk['js'].pack(stamps, **js_fields)),
                'imu': (self.pub_imu, pk['imu'].pack(stamps, quat=rec.imu_quat,
                                                     gyro=rec.imu_gyro, acc=rec.imu_acc))}
        for foot, pub in self.pub_wrench.items():
            rows[('w', foot)] = (pub, pk[('w', foot)].pack(stamps, v=rec.foot_wrench[foot]))
        for foot, pub in self.pub_ankle.items():
            rows[('a', foot)] = (pub, pk[('a', foot)].pack(stamps, v=rec.ankle_ft[foot]))
        for foot, pubs in self.pub_fsr.items():
            for j, pub in enumerate(pubs):
                w = np.zeros((rec.n, 6))
                w[:, 2] = rec.fsr[foot][:, j]
                rows[('f', foot, j)] = (pub, pk[('f', foot, j)].pack(stamps, v=w))
        # joint states last: the buffer then finds the other streams already there
        order = [k for k in rows if k != 'js'] + ['js']
        self._lap_packers = [pk[k] for k in order]
        return lap, [rows[k] for k in order]

    def _publish_sample(self, k: int, stamp: float):
        if self._lap_rows is None:
            self._lap_rows = self._pack_lap(self.lap)
        elif self._lap_rows[0] != self.lap:  # same bytes but the stamps: rewrite in place
            stamps = self.t0_wall + self.lap * self.span + (self.rec.t - self.rec.t[0])
            for packer, (_, rows) in zip(self._lap_packers, self._lap_rows[1]):
                packer.restamp(rows, stamps)
            self._lap_rows = (self.lap, self._lap_rows[1])
        for pub, rows in self._lap_rows[1]:
            pub.publish(rows[k].tobytes())
        self.published += 1

    def achieved_rtf(self) -> float:
        """Simulated seconds published per wall second since the start."""
        wall = time.monotonic() - self._mono0
        if wall <= 0 or self.published == 0:
            return 0.0
        return (self.published / max(self.rec.rate, 1.0)) / wall

    def _publish_diagnostics(self):
        rtf = self.achieved_rtf()
        level = 'ok' if rtf >= 0.9 * self.rtf or self.finished or self.published == 0 else 'warn'
        msg = 'finished' if self.finished else f'streaming at {rtf:.2f}x real time'
        now = self.get_clock().now().nanoseconds * 1e-9
        self.pub_diag.publish(cv.diagnostic_msg(
            now, DIAG_NAME, 'legid_ros', level, msg,
            {'samples_published': self.published, 'real_time_factor_requested': self.rtf,
             'real_time_factor_achieved': rtf, 'lap': self.lap,
             'engine': self.rec.meta.get('engine', 'recording')}))


def main(args=None) -> int:
    """Console script ``sim_node``."""
    return run_node(SimNode, args)


if __name__ == '__main__':
    raise SystemExit(main())
