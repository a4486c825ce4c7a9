"""Sensor readouts in other conventions than ours: the recordings a setup we did not write
would give (another IMU topic, an IMU mounted rotated with a yawed and drifting reference,
foot forces in world or foot-link axes under other topic and frame names, at an F/T sensor
offset from the ankle, normal forces only, sole sensors at other places and names, a foot in
the air that keeps a force, another rate, other joint names, joint order shuffled per message,
jittered arrival times).

A lower rate averages each measured signal over its readout period before sampling it
(:func:`averaged`): the run's white noise is the sensor's, and two rates of one run then read
the same noise below their Nyquist frequencies, as two readouts of one sensor would; plain
decimation drew independent noise samples per rate, and the identified parameters of a 200
and a 500 Hz readout differed by that sampling, not by the rate.

:func:`read_out` turns a simulated run's readout (:class:`Recording`, in the internal
convention) into the one such a setup records, from the simulator's *true* state (base pose,
joint positions), and gives the description keys that setup's recording has; writing it
with :func:`legid_ros.bag.recording_io.write_bag` and a robot of those keys (and the
per-message facts of :func:`message_plan`) makes its bag.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

import numpy as np
import pinocchio as pin
from scipy.ndimage import convolve1d
from scipy.spatial.transform import Rotation

from legid_ros.core.recording import Recording
from legid_ros.core.signals import smooth_quaternions


@dataclass(frozen=True)
class Readout:
    """A setup's conventions.

    Attributes:
        imu_topic: IMU topic.
        imu_frame_id: Header frame id of the IMU (default: the description's IMU frame).
        imu_rpy: Sensor axes in the IMU frame (mounting rotation) [rad].
        imu_heading_rad: Yaw of the IMU's reference in the world at the first sample [rad].
        imu_drift_rad_s: Drift of that yaw [rad/s] (an IMU without a magnetometer).
        force_topic: Foot force topic with ``{foot}`` (its name) or ``{index}`` (its place
            in the description) (default: the description's).
        force_expressed_in: 'sensor', 'foot' or 'world' axes of the foot forces.
        force_frame_id: Header frame id of the foot forces (default: as the description's
            ``frame_id`` default for ``force_expressed_in``).
        force_gain: Factor on every force: -1 records the force the foot exerts on the
            ground; another value a sensor in other units (or a heavier robot).
        ft_offset: F/T sensor frame in the foot's F/T frame ``(xyz [m], rpy [rad])``: the
            wrench is measured there (sensor axes only), the frame named ``ft_frame_name``.
        ft_frame_name: Name of that frame, with ``{foot}``.
        normal_only: Each foot force is its world-vertical component only (a point foot's
            normal force, zero moments), in world axes.
        air_force_n: Smallest normal force (its frame's z) a foot sensor reads [N]: a foot in
            the air keeps it (a light robot whose sensor carries a cable or the shank).
        sole_sensors: Sole sensor positions in each flat foot's sole frame ``((x, y), ...)``
            [m]: their normal forces are those that carry the foot's wrench (replacing the
            description's sensors).
        sole_sensor_topic: Their topics, with ``{foot}`` and ``{k}``.
        sole_sensor_name: Their names, with ``{foot}`` and ``{k}``.
        rate_hz: Recording rate [Hz] (a divisor of the run's rate; default: the run's): the
            measured signals are averaged over one period (:func:`averaged`), as a sensor's
            anti-aliasing filter does, the positions sampled.
        joint_name_format: Bag joint names from the model's, with ``{name}`` or ``{lower}``.
        shuffle_joints: Each joint-state message lists the joints in another order.
        stamp_jitter_s: Arrival (log) times of the messages late by up to this [s].
        seed: Seed of the shuffles and jitter.
    """

    imu_topic: str = '/imu'
    imu_frame_id: Optional[str] = None
    imu_rpy: tuple = (0.0, 0.0, 0.0)
    imu_heading_rad: float = 0.0
    imu_drift_rad_s: float = 0.0
    force_topic: Optional[str] = None
    force_expressed_in: str = 'sensor'
    force_frame_id: Optional[str] = None
    force_gain: float = 1.0
    ft_offset: Optional[tuple] = None
    ft_frame_name: str = '{foot}_ft_sensor'
    normal_only: bool = False
    air_force_n: float = 0.0
    sole_sensors: Optional[tuple] = None
    sole_sensor_topic: str = '{foot}/load_cell/c{k}'
    sole_sensor_name: str = '{foot}_cell_{k}'
    rate_hz: Optional[float] = None
    joint_name_format: str = '{name}'
    shuffle_joints: bool = False
    stamp_jitter_s: float = 0.0
    seed: int = 0

    def joint_name(self, name: str) -> str:
        """The bag's name of the model joint ``name``."""
        return self.joint_name_format.format(name=name, lower=name.lower())

    def description(self, robot) -> dict:
        """The robot's description with this setup's stream keys."""
        desc = copy.deepcopy(robot.description)
        imu = {'topic': self.imu_topic}
        if self.imu_frame_id:
            imu['frame_id'] = self.imu_frame_id
        if any(self.imu_rpy):
            imu['rpy'] = [float(x) for x in self.imu_rpy]
        if self.imu_heading_rad:
            imu['heading_rad'] = float(self.imu_heading_rad)
        if self.imu_drift_rad_s:
            imu['heading_drift_rad_s'] = float(self.imu_drift_rad_s)
        desc['imu'] = imu
        expressed = 'world' if self.normal_only else self.force_expressed_in
        for k, (name, f) in enumerate(desc['feet'].items()):
            if self.force_topic:
                f['wrench_topic'] = self.force_topic.format(foot=name, index=k)
            if expressed != 'sensor':
                f['expressed_in'] = expressed
            if self.force_frame_id:
                f['frame_id'] = self.force_frame_id.format(foot=name)
            if self.ft_offset is not None:
                frame = self.ft_frame_name.format(foot=name)
                xyz, rpy = self.ft_offset
                desc.setdefault('frames', {})[frame] = {
                    'parent': robot.feet[name].wrench_frame, 'xyz': [float(v) for v in xyz],
                    'rpy': [float(v) for v in rpy]}
                f['ft_frame'] = frame
            if self.sole_sensors is not None and robot.feet[name].contact == 'flat':
                f['force_sensors'] = [
                    {'topic': self.sole_sensor_topic.format(foot=name, k=j),
                     'name': self.sole_sensor_name.format(foot=name, k=j),
                     'xyz': [float(p[0]), float(p[1]), 0.0]}
                    for j, p in enumerate(self.sole_sensors)]
        names = {j: self.joint_name(j) for j in robot.actuated_joint_names}
        if any(b != j for j, b in names.items()):
            desc['joint_name_map'] = {b: j for j, b in names.items()}
        return desc


#: Setups in conventions other than the project's (tests): forces in world or foot axes, an
#: IMU on another topic mounted rotated (rpy [rad]) with a heading [rad], both, and an IMU
#: mounted 90 deg about z whose heading drifts [rad/s] with world-axes forces.
OTHER_CONVENTIONS = {
    'world': Readout(force_topic='feet/{foot}/force', force_expressed_in='world'),
    'foot': Readout(force_topic='feet/{foot}/force', force_expressed_in='foot',
                    force_frame_id='{foot}_link'),
    'imu': Readout(imu_topic='/imu/data', imu_frame_id='imu_link', imu_rpy=(0.1, -0.2, 1.5),
                   imu_heading_rad=0.7),
    'imu_world': Readout(imu_topic='/imu/data', imu_rpy=(0.1, -0.2, 1.5), imu_heading_rad=0.7,
                         force_topic='feet/{foot}/force', force_expressed_in='world'),
    'imu_drift_world': Readout(imu_topic='/imu/data', imu_rpy=(0.0, 0.0, np.pi / 2),
                               imu_heading_rad=0.4, imu_drift_rad_s=0.01,
                               force_topic='feet/{foot}/force', force_expressed_in='world'),
}


def _foot_rotations(robot, rec: Recording, foot: str) -> Tuple[np.ndarray, np.ndarray]:
    """True rotations (N, 3, 3) of the foot's F/T frame and link in the world."""
    model, data = robot.model, robot.model.createData()
    ft = robot.frame_id(robot.feet[foot].wrench_frame)
    link = robot.frame_id(robot.feet[foot].link)
    r_ft, r_link = np.zeros((rec.n, 3, 3)), np.zeros((rec.n, 3, 3))
    q = pin.neutral(model)
    for k in range(rec.n):
        q[:7] = rec.base_pose_true[k]
        q[7:] = rec.q[k]
        pin.framesForwardKinematics(model, data, q)
        r_ft[k], r_link[k] = data.oMf[ft].rotation, data.oMf[link].rotation
    return r_ft, r_link


def move_wrench(w: np.ndarray, placement: pin.SE3) -> np.ndarray:
    """Wrenches (N, 6) ``[f, n]`` about a frame's origin, in its axes -> about the origin and
    in the axes of a frame at ``placement`` in it (a new array)."""
    rot, p = placement.rotation, placement.translation
    return np.hstack([w[:, :3] @ rot, (w[:, 3:] - np.cross(p, w[:, :3])) @ rot])


def keep_air_force(wrenches: Dict[str, np.ndarray], force_n: float) -> None:
    """Every foot wrench's normal force (its frame's z) at least ``force_n`` [N], in place."""
    for w in wrenches.values():
        w[:, 2] = np.maximum(w[:, 2], force_n)


def sole_sensor_forces(robot, foot: str, wrench: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """Normal forces (N, k) [N] of sole sensors at ``xy`` (k, 2) in the sole frame [m] that
    carry the foot's wrench (N, 6) (F/T frame): their sum is its normal force and their
    moments its moments about the sole frame's x and y (least norm for k > 3)."""
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.neutral())
    f_t = data.oMf[robot.frame_id(robot.feet[foot].wrench_frame)]
    f_s = data.oMf[robot.frame_id(robot.feet[foot].sole_frame)]
    w = move_wrench(wrench, f_t.actInv(f_s))
    xy = np.asarray(xy, float)
    a = np.vstack([np.ones(len(xy)), xy[:, 1], -xy[:, 0]])  # [fz, nx, ny] of unit forces
    return w[:, [2, 3, 4]] @ np.linalg.pinv(a).T


def _imu(out: Recording, rec: Recording, readout: Readout) -> None:
    r_fs = pin.rpy.rpyToMatrix(*readout.imu_rpy)  # sensor axes in the IMU frame
    heading = readout.imu_heading_rad + readout.imu_drift_rad_s * (rec.t - rec.t[0])
    if any(readout.imu_rpy) or np.any(heading):
        r_wf = Rotation.from_quat(rec.imu_quat)
        r_ws = Rotation.from_euler('z', -heading[:, None]) * r_wf * Rotation.from_matrix(r_fs)
        quat = r_ws.as_quat()
        out.imu_quat = quat * np.sign(quat[:, 3:4] + 1e-12)
        out.imu_gyro = rec.imu_gyro @ r_fs
        out.imu_acc = rec.imu_acc @ r_fs


def _forces(out: Recording, rec: Recording, robot, readout: Readout) -> None:
    for foot, w in rec.foot_wrench.items():
        w = readout.force_gain * w
        if readout.ft_offset is not None:
            xyz, rpy = readout.ft_offset
            w = move_wrench(w, pin.SE3(pin.rpy.rpyToMatrix(*rpy), np.asarray(xyz, float)))
        if readout.air_force_n > 0:
            keep_air_force({foot: w}, readout.air_force_n)
        expressed = 'world' if readout.normal_only else readout.force_expressed_in
        if expressed != 'sensor':
            r_ft, r_link = _foot_rotations(robot, rec, foot)
            rot = r_ft if expressed == 'world' else \
                np.einsum('nji,njk->nik', r_link, r_ft)  # R_link^T R_ft
            w = np.hstack([np.einsum('nij,nj->ni', rot, w[:, :3]),
                           np.einsum('nij,nj->ni', rot, w[:, 3:])])
        if readout.normal_only:
            w = np.hstack([np.zeros((len(w), 2)), w[:, 2:3], np.zeros((len(w), 3))])
        out.foot_wrench[foot] = w
    out.fsr = {f: readout.force_gain * x for f, x in rec.fsr.items()}
    if readout.sole_sensors is not None:
        out.fsr = {f: sole_sensor_forces(robot, f, readout.force_gain * rec.foot_wrench[f],
                                         np.asarray(readout.sole_sensors))
                   for f, foot in robot.feet.items() if foot.contact == 'flat'
                   and f in rec.foot_wrench}


def readout_window(step: int) -> np.ndarray:
    """Weights of a sensor's averaging over one readout period of ``step`` run samples,
    centred on the sample it is stamped with (symmetric: ``step + 1`` weights with halves at
    the ends when ``step`` is even)."""
    w = np.ones(step + 1 - step % 2)
    if step % 2 == 0:
        w[[0, -1]] = 0.5
    return w / step


def averaged(rec: Recording, step: int) -> Recording:
    """The run with its measured signals (joint velocities and efforts, IMU rates and
    orientation, foot and sole forces) averaged over a readout period of ``step`` samples (a
    copy): a sensor read out at a lower rate filters what it samples (an ADC's or an F/T
    box's anti-aliasing; an IMU's orientation is its filter's state, integrated at its own
    rate), so two rates of one run carry the same noise below their Nyquist frequencies.
    Joint positions (encoders latch them) and the truth are kept as sampled."""
    out = rec.slice(0, rec.n)
    if step <= 1:
        return out
    w = readout_window(step)

    def avg(x):
        return None if x is None else convolve1d(np.asarray(x, float), w, axis=0,
                                                 mode='nearest')
    out.qd, out.tau, out.imu_gyro, out.imu_acc = (avg(rec.qd), avg(rec.tau),
                                                  avg(rec.imu_gyro), avg(rec.imu_acc))
    out.foot_wrench = {k: avg(v) for k, v in rec.foot_wrench.items()}
    out.fsr = {k: avg(v) for k, v in rec.fsr.items()}
    if rec.imu_quat is not None:
        out.imu_quat = smooth_quaternions(rec.imu_quat, avg)
    out.ankle_ft = {k: avg(v) for k, v in rec.ankle_ft.items()}
    return out


def read_out(rec: Recording, robot, readout: Readout) -> Recording:
    """The run ``rec`` of ``robot`` as the setup ``readout`` records it (a copy).

    Needs the run's true base pose (``rec.base_pose_true``) for world or foot axes.
    """
    step = 1
    if readout.rate_hz:
        step = int(round(rec.rate / readout.rate_hz))
        if step < 1 or abs(rec.rate / step - readout.rate_hz) > 1e-6 * readout.rate_hz:
            raise ValueError(f'rate {readout.rate_hz} Hz does not divide {rec.rate:.1f} Hz')
    rec = averaged(rec, step).slice(0, rec.n, step)
    out = rec.slice(0, rec.n)
    _imu(out, rec, readout)
    _forces(out, rec, robot, readout)
    out.joint_names = [readout.joint_name(j) for j in rec.joint_names]
    out.meta['readout'] = {k: v for k, v in readout.__dict__.items()}
    out.meta['rate_hz'] = float(rec.rate)
    return out


def message_plan(readout: Readout, n: int, n_joints: int) -> dict:
    """Per-message facts of the setup's bag for a recording of ``n`` samples: ``joint_order``
    (n, n_joints) (the columns each joint-state message lists, in order) and
    ``log_delay_s`` (n,) (late arrival of each sample's messages [s]); None where the setup
    has none. Keywords of :func:`legid_ros.bag.recording_io.write_bag`."""
    rng = np.random.default_rng([readout.seed, 24])
    order = np.argsort(rng.random((n, n_joints)), axis=1) if readout.shuffle_joints else None
    delay = rng.uniform(0.0, readout.stamp_jitter_s, n) if readout.stamp_jitter_s > 0 else None
    return {'joint_order': order, 'log_delay_s': delay}
