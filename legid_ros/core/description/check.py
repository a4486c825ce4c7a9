"""A robot description against what a recording holds (``legid check``).

The facts of a recording (:class:`RecordingFacts`: topics, types, rates, frame ids, joint
names, force and IMU statistics) are gathered by ``legid_ros/commands/check.py`` from a
rosbag2; this module only compares them with the description and says, one line per
problem, what does not match and what to change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np

from legid_ros.core.robot import Robot

GRAVITY = 9.81  # [m/s^2]
JOINT_STATES = '/joint_states'
IMU = '/imu'
WRENCH_TYPE = 'geometry_msgs/msg/WrenchStamped'
MIN_RATE_HZ = 50.0  # [Hz] slowest usable joint-state and force rate
LOAD_TOLERANCE = 0.25  # [-] median total contact force within 25 % of the weight


@dataclass
class TopicFacts:
    """One topic of a recording.

    Attributes:
        msgtype: Message type.
        count: Messages.
        rate_hz: Mean rate [Hz].
        frame_ids: Header frame ids seen.
        force_norm: Per sampled message, |force| [N] (wrench topics), else empty.
        force_z: Per sampled message, force.z [N] (wrench topics), else empty.
        stamps_s: Sample times of ``force_norm`` [s].
    """

    msgtype: str
    count: int
    rate_hz: float
    frame_ids: List[str] = field(default_factory=list)
    force_norm: np.ndarray = field(default_factory=lambda: np.zeros(0))
    force_z: np.ndarray = field(default_factory=lambda: np.zeros(0))
    stamps_s: np.ndarray = field(default_factory=lambda: np.zeros(0))


@dataclass
class RecordingFacts:
    """What a recording holds.

    Attributes:
        topics: Absolute topic name -> its facts.
        joint_names: Joint names of the joint-state messages (first message).
        imu_quat_norm: Median |orientation quaternion| of the IMU [-] (NaN if no IMU).
        imu_acc_norm: Median |linear acceleration| of the IMU [m/s^2] (NaN if no IMU).
    """

    topics: Dict[str, TopicFacts]
    joint_names: List[str] = field(default_factory=list)
    imu_quat_norm: float = float('nan')
    imu_acc_norm: float = float('nan')


def _abs(topic: str) -> str:
    return topic if topic.startswith('/') else '/' + topic


def sensor_topic_names(topic: str) -> List[str]:
    """Names a force-sensor topic may have in a bag (``<p>/sensor_<k>`` or older ``<p>/<k>``)."""
    topic = _abs(topic)
    head, _, last = topic.rpartition('/')
    if last.startswith('sensor_') and last[7:].isdigit():
        return [topic, f'{head}/{last[7:]}']
    return [topic]


def _find(facts: RecordingFacts, topic: str) -> Optional[str]:
    return next((t for t in sensor_topic_names(topic) if t in facts.topics), None)


def _joints(robot: Robot, facts: RecordingFacts) -> List[str]:
    out = []
    bag = set(facts.joint_names)
    to_urdf = robot.joint_name_map
    for name in robot.actuated_joint_names:
        if name not in bag:
            urdf = to_urdf.get(name)
            hint = (f'the bag names it {urdf!r}: drop its joint_name_map entry' if urdf in bag
                    else 'map the bag\'s name to it in joint_name_map')
            out.append(f'joint {name!r} of the description is not in {JOINT_STATES}; {hint}')
    known = set(robot.actuated_joint_names) | set(robot.locked_joints)
    for name in facts.joint_names:
        if name not in known:
            out.append(f'joint {name!r} in {JOINT_STATES} is not in the description; add it '
                       'to locked_joints if it does not move, or map it in joint_name_map')
    return out


def _topic(facts, topic, what, expected_frame, out, rate_ref) -> Optional[TopicFacts]:
    """Problems of one required topic (missing, type, frame, rate); its facts if present."""
    name = _find(facts, topic)
    if name is None:
        out.append(f'{what}: topic {_abs(topic)} is not in the bag')
        return None
    tf = facts.topics[name]
    if tf.msgtype != WRENCH_TYPE:
        out.append(f'{what}: {name} is {tf.msgtype}, expected {WRENCH_TYPE}')
        return None
    wrong = sorted(set(tf.frame_ids) - {expected_frame})
    if wrong:
        out.append(f'{what}: {name} has frame_id {wrong[0]!r}, the description says '
                   f'{expected_frame!r}')
    if rate_ref > 0 and tf.rate_hz < 0.5 * rate_ref:
        out.append(f'{what}: {name} at {tf.rate_hz:.0f} Hz, under half the joint-state rate '
                   f'({rate_ref:.0f} Hz)')
    return tf


def _feet(robot: Robot, facts: RecordingFacts, rate_ref: float, out: List[str]):
    """Problems of the feet's force topics; per foot the total normal force per sample."""
    sensing = robot.description.get('force_sensing')
    loads = []
    for name, foot in robot.feet.items():
        wrench_there = _find(facts, foot.wrench_topic) is not None
        sensors_there = bool(foot.force_sensors) and all(
            _find(facts, s.topic) is not None for s in foot.force_sensors)
        use_fsr = sensing == 'fsr' or (sensing is None and sensors_there and not wrench_there)
        if use_fsr and not foot.force_sensors:
            out.append(f'foot {name}: force_sensing is fsr but the foot lists no force_sensors')
            continue
        if use_fsr:
            parts = [_topic(facts, s.topic, f'foot {name} force sensor {s.name}', s.frame, out,
                            rate_ref) for s in foot.force_sensors]
            parts = [p for p in parts if p is not None and p.force_z.size]
            if len(parts) == len(foot.force_sensors) and parts:
                n = min(p.force_z.size for p in parts)
                loads.append(sum(p.force_z[:n] for p in parts))
        else:
            tf = _topic(facts, foot.wrench_topic, f'foot {name} wrench',
                        foot.ft_frame or foot.link, out, rate_ref)
            if tf is not None and tf.force_norm.size:
                loads.append(tf.force_norm)
    return loads


def check_recording(robot: Robot, facts: RecordingFacts) -> List[str]:
    """Problems of a description against a recording, one line each (empty: they match)."""
    out: List[str] = []
    js = facts.topics.get(JOINT_STATES)
    if js is None:
        out.append(f'topic {JOINT_STATES} is not in the bag')
        rate = 0.0
    else:
        rate = js.rate_hz
        if rate < MIN_RATE_HZ:
            out.append(f'{JOINT_STATES} at {rate:.0f} Hz, under {MIN_RATE_HZ:.0f} Hz')
        out += _joints(robot, facts)
    imu = facts.topics.get(IMU)
    if imu is None:
        out.append(f'topic {IMU} is not in the bag (the floating base needs it)')
    else:
        wrong = sorted(set(imu.frame_ids) - {robot.imu_frame})
        if wrong:
            out.append(f'{IMU} has frame_id {wrong[0]!r}, the description\'s imu_frame is '
                       f'{robot.imu_frame!r}')
        if abs(facts.imu_quat_norm - 1.0) > 1e-3:
            out.append(f'{IMU} orientation is not a unit quaternion (median norm '
                       f'{facts.imu_quat_norm:.3g}): no orientation estimate?')
        if not abs(facts.imu_acc_norm - GRAVITY) < 2.0:
            out.append(f'{IMU} specific force median {facts.imu_acc_norm:.3g} m/s^2, expected '
                       f'about {GRAVITY} (units in g, or gravity removed?)')
    loads = _feet(robot, facts, rate, out)
    if loads and len(loads) == len(robot.feet):
        n = min(x.size for x in loads)
        total = float(np.median(sum(x[:n] for x in loads)))
        weight = robot.total_mass * GRAVITY
        if abs(total - weight) > LOAD_TOLERANCE * weight:
            out.append(f'contact forces sum to {total:.0f} N (median), the description weighs '
                       f'{weight:.0f} N: missing feet, wrong units, or wrong masses / '
                       'locked_joints')
    return out
