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

from legid_ros.core.conventions.stamps import clock_offset_s, describe_offset
from legid_ros.core.robot import Robot

GRAVITY = 9.81  # [m/s^2]
JOINT_STATES = '/joint_states'
IMU_TYPE = 'sensor_msgs/msg/Imu'
WRENCH_TYPE = 'geometry_msgs/msg/WrenchStamped'
MIN_RATE_HZ = 50.0  # [Hz] slowest usable joint-state and force rate
LOAD_TOLERANCE = 0.25  # [-] median total contact force within 25 % of the weight
LOCKED_MOTION_MAX = 0.0175  # [rad] span of a locked joint's position (1 deg: servo jitter)


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
        stamped: Whether any decoded message has a header stamp other than 0 (None: the
            type has no header, or nothing was decoded).
        stamp_offset_s: Median header stamp minus receive (log) time of the decoded
            messages [s] (None when not stamped).
    """

    msgtype: str
    count: int
    rate_hz: float
    frame_ids: List[str] = field(default_factory=list)
    force_norm: np.ndarray = field(default_factory=lambda: np.zeros(0))
    force_z: np.ndarray = field(default_factory=lambda: np.zeros(0))
    stamps_s: np.ndarray = field(default_factory=lambda: np.zeros(0))
    stamped: Optional[bool] = None
    stamp_offset_s: Optional[float] = None


@dataclass
class RecordingFacts:
    """What a recording holds.

    Attributes:
        topics: Absolute topic name -> its facts.
        joint_names: Joint names of the joint-state messages (first message).
        imu_quat_norm: Median |orientation quaternion| of the IMU [-] (NaN if no IMU).
        imu_acc_norm: Median |linear acceleration| of the IMU [m/s^2] (NaN if no IMU).
        joint_motion: Per joint of the joint-state messages, the span of its position (1st
            to 99th percentile of the sampled messages) [rad or m].
    """

    topics: Dict[str, TopicFacts]
    joint_names: List[str] = field(default_factory=list)
    joint_motion: Dict[str, float] = field(default_factory=dict)
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
        moved = facts.joint_motion.get(name, 0.0)
        if name in robot.locked_joints and moved > LOCKED_MOTION_MAX:
            out.append(f'locked_joints.{name}: the joint moves by {np.degrees(moved):.1f} deg '
                       f'in {JOINT_STATES} (1st to 99th percentile); it is not locked; fix: '
                       f'remove {name} from locked_joints')
        elif name not in known:
            out.append(f'joint {name!r} in {JOINT_STATES} is not in the description; add it '
                       'to locked_joints if it does not move, or map it in joint_name_map')
    return out


def _other_robot(robot: Robot, facts: RecordingFacts) -> Optional[str]:
    """One line when the joint states name none of the description's joints (by their
    robot or their URDF names), and the description none of theirs: the bag is another
    robot's (or every name differs)."""
    bag = list(facts.joint_names)
    # a bag that kept the URDF names of a description that renames them: _joints says so
    known = (set(robot.actuated_joint_names) | set(robot.locked_joints)
             | set(robot.joint_name_map.values()))
    if not bag or known & set(bag):
        return None
    shown = ', '.join(bag[:6]) + (f' and {len(bag) - 6} more' if len(bag) > 6 else '')
    return (f'{JOINT_STATES} names none of the {len(robot.actuated_joint_names)} joints of '
            f'{robot.name!r} (its {len(bag)}: {shown}): the bag is of another robot, or every '
            'name differs; fix: the right --robot, or a description written from this bag '
            '(legid describe --bag BAG, --joint-map BAG=URDF)')


def typed_topics(facts: RecordingFacts, msgtype: str, exclude=()) -> List[str]:
    """Topics of the bag of type ``msgtype`` (absolute names), but those in ``exclude``."""
    return sorted(t for t, tf in facts.topics.items() if tf.msgtype == msgtype
                  and t not in exclude)


def _closest(name: str, candidates: List[str], hint: str = '') -> Optional[str]:
    """The candidate topic sharing the most name tokens with ``name`` and ``hint``."""
    def tokens(x):
        return {t for t in x.lower().replace('-', '/').replace('_', '/').replace(' ', '/')
                .split('/') if t}
    want = tokens(name) | tokens(hint)
    scored = sorted(candidates, key=lambda c: (-len(tokens(c) & want), c))
    return scored[0] if scored else None


def _topic(facts, topic, what, expected_frame, out, rate_ref, key='', frame_key='',
           hint='', claimed=()) -> Optional[TopicFacts]:
    """Problems of one required wrench topic (missing, type, frame, rate); its facts if
    present. ``key`` names the description key of the topic, ``frame_key`` that of its frame
    id; a missing topic suggests a WrenchStamped topic of the bag nobody claims."""
    name = _find(facts, topic)
    if name is None:
        free = typed_topics(facts, WRENCH_TYPE, claimed)
        best = _closest(topic, free, hint)
        fix = (f'; {best} is {WRENCH_TYPE}: set {key}: {best}' if best else
               f'; the bag has no unclaimed {WRENCH_TYPE} topic')
        out.append(f'{what}: topic {_abs(topic)} is not in the bag{fix}')
        return None
    tf = facts.topics[name]
    if tf.msgtype != WRENCH_TYPE:
        out.append(f'{what}: {name} is {tf.msgtype}, expected {WRENCH_TYPE}; fix: name the '
                   f'{WRENCH_TYPE} topic in {key}')
        return None
    wrong = sorted(set(tf.frame_ids) - {expected_frame})
    if wrong:
        fix = (f'set {frame_key}: {wrong[0]} and expressed_in: world (forces in world axes)'
               if wrong[0] in ('world', 'map', 'odom') else
               f'if the values are in the axes and about the origin the description gives '
               f'them ({expected_frame!r}), set {frame_key}: {wrong[0]}; if {wrong[0]!r} is '
               'another place, define a frame at the sensor and name it in ft_frame')
        out.append(f'{what}: {name} has frame_id {wrong[0]!r}, the description expects '
                   f'{expected_frame!r}; fix: {fix}')
    if rate_ref > 0 and tf.rate_hz < 0.5 * rate_ref:
        out.append(f'{what}: {name} at {tf.rate_hz:.0f} Hz, under half the joint-state rate '
                   f'({rate_ref:.0f} Hz)')
    return tf


def force_source(robot: Robot, facts: RecordingFacts, requested: str = 'auto'):
    """The force sensing ``legid identify --zmp-source requested`` will use on this bag
    (:func:`legid_ros.core.conventions.sensing.resolve_zmp_source`)."""
    from legid_ros.core.conventions.sensing import resolve_zmp_source

    feet = robot.feet.values()
    has_wrench = all(_find(facts, f.wrench_topic) is not None for f in feet)
    has_fsr = all(f.force_sensors and all(_find(facts, s.topic) is not None
                                          for s in f.force_sensors) for f in feet)
    return resolve_zmp_source(robot, requested, has_fsr, has_wrench)


def _feet(robot: Robot, facts: RecordingFacts, rate_ref: float, out: List[str],
          requested: str = 'auto'):
    """Problems of the force topics identify will use; per foot the total normal force."""
    source = force_source(robot, facts, requested)
    if source.declared and source.source != source.declared and requested == 'auto':
        lack = [_abs(t) for f in robot.feet.values() for t in (
            [s.topic for s in f.force_sensors] if source.declared == 'fsr' else
            [f.wrench_topic]) if _find(facts, t) is None]
        missing = '; '.join(f'{t} is not in the bag' for t in lack[:4]) or 'a foot lacks it'
        out.append(f'force_sensing: the description declares {source.declared} but '
                   f'{missing}; identify '
                   f'will use {source.source}; fix: record '
                   f'the {source.declared} topics, name them in the description, or set '
                   f'force_sensing: {source.source}')
    claimed = {_abs(f.wrench_topic) for f in robot.feet.values()} | {
        _abs(s.topic) for f in robot.feet.values() for s in f.force_sensors}
    claimed = {t for t in claimed if t in facts.topics}
    loads = []
    for name, foot in robot.feet.items():
        if source.source == 'fsr' and not foot.force_sensors:
            out.append(f'feet.{name}.force_sensors: force sensing is fsr but the foot lists '
                       'none; fix: list them or set force_sensing: wrench')
            continue
        if source.source == 'fsr':
            parts = [_topic(facts, s.topic, f'foot {name} force sensor {s.name}', s.frame, out,
                            rate_ref, f'feet.{name}.force_sensors[{k}].topic',
                            f'feet.{name}.force_sensors[{k}].frame', name, claimed)
                     for k, s in enumerate(foot.force_sensors)]
            parts = [p for p in parts if p is not None and p.force_z.size]
            if len(parts) == len(foot.force_sensors) and parts:
                n = min(p.force_z.size for p in parts)
                loads.append(sum(p.force_z[:n] for p in parts))
        else:
            tf = _topic(facts, foot.wrench_topic, f'foot {name} wrench', foot.frame_id
                        or foot.wrench_frame, out, rate_ref,
                        f'feet.{name}.wrench_topic', f'feet.{name}.frame_id',
                        f'{name} {foot.link}', claimed)
            if tf is not None and tf.force_norm.size:
                loads.append(tf.force_norm)
    return loads


def _imu(robot: Robot, facts: RecordingFacts, out: List[str]) -> None:
    """Problems of the IMU topic (missing: the bag's sensor_msgs/Imu topics suggested)."""
    topic = robot.imu.topic
    imu = facts.topics.get(topic)
    if imu is None or imu.msgtype != IMU_TYPE:
        others = typed_topics(facts, IMU_TYPE)
        fix = (f'{others[0]} is {IMU_TYPE}: set imu.topic: {others[0]}' if others else
               'record the IMU (the floating base needs it)')
        what = 'is not in the bag' if imu is None else f'is {imu.msgtype}'
        out.append(f'imu.topic: {topic} {what}; {fix}')
        return
    wrong = sorted(set(imu.frame_ids) - {robot.imu.frame_id})
    if wrong:
        out.append(f'imu.frame_id: {topic} has frame_id {wrong[0]!r}, the description '
                   f'expects {robot.imu.frame_id!r}; fix: set imu.frame_id: {wrong[0]} (and '
                   'imu.frame / imu.rpy to where and how the IMU is mounted)')
    if abs(facts.imu_quat_norm - 1.0) > 1e-3:
        out.append(f'{topic} orientation is not a unit quaternion (median norm '
                   f'{facts.imu_quat_norm:.3g}): no orientation estimate?')
    if not abs(facts.imu_acc_norm - GRAVITY) < 2.0:
        out.append(f'{topic} specific force median {facts.imu_acc_norm:.3g} m/s^2, expected '
                   f'about {GRAVITY} (units in g, or gravity removed?)')


def _stamps(robot: Robot, facts: RecordingFacts, zmp_source: str, out: List[str]) -> None:
    """Problems of the header stamps of the topics identify and the live buffer read: each
    must be on the joint states' clock (:mod:`legid_ros.core.conventions.stamps`)."""
    js = facts.topics.get(JOINT_STATES)
    if js is None or js.stamped is None:
        return
    if not js.stamped:
        out.append(f'{JOINT_STATES}: header stamps are all 0 (the driver does not stamp); '
                   'legid identify aligns the streams by receive time, the live buffer drops '
                   'such joint states as duplicates; fix: stamp them where they are read')
    ref = js.stamp_offset_s if js.stamped else None
    source = force_source(robot, facts, zmp_source).source
    topics = [robot.imu.topic]
    for foot in robot.feet.values():
        topics += [s.topic for s in foot.force_sensors] if source == 'fsr' else \
            [foot.wrench_topic]
        topics += [foot.ankle_ft_topic] if foot.ankle_ft_topic else []
    for topic in dict.fromkeys(topics):
        name = _find(facts, topic)
        tf = facts.topics.get(name) if name else None
        if tf is None or tf.stamped is None:
            continue
        off = clock_offset_s(tf.stamp_offset_s if tf.stamped else None, ref)
        if off is not None:
            out.append(f'{name}: header stamps {describe_offset(off)}; legid identify aligns '
                       'it by its receive times, the live buffer cannot (its rows go stale); '
                       "fix: stamp it from the joint states' clock")


def check_recording(robot: Robot, facts: RecordingFacts, zmp_source: str = 'auto',
                    load_check: bool = True) -> List[str]:
    """Problems of a description against a recording, one line each (empty: they match).

    ``load_check``: compare the force norms' sum with the weight (off when the recording's
    forces are checked in the world, :mod:`legid_ros.core.conventions.consistency`).
    """
    out: List[str] = []
    js = facts.topics.get(JOINT_STATES)
    if js is None:
        out.append(f'topic {JOINT_STATES} is not in the bag')
        rate = 0.0
    else:
        rate = js.rate_hz
        if rate < MIN_RATE_HZ:
            out.append(f'{JOINT_STATES} at {rate:.0f} Hz, under {MIN_RATE_HZ:.0f} Hz')
        other = _other_robot(robot, facts)
        if other:  # every further line would propose another robot's topics as fixes
            return [other]
        out += _joints(robot, facts)
    _imu(robot, facts, out)
    loads = _feet(robot, facts, rate, out, zmp_source)
    _stamps(robot, facts, zmp_source, out)
    if load_check and loads and len(loads) == len(robot.feet):
        n = min(x.size for x in loads)
        total = float(np.median(sum(x[:n] for x in loads)))
        weight = robot.total_mass * GRAVITY
        if abs(total - weight) > LOAD_TOLERANCE * weight:
            out.append(f'contact forces sum to {total:.0f} N (median), the description weighs '
                       f'{weight:.0f} N: missing feet, wrong units, or wrong masses / '
                       'locked_joints')
    return out
