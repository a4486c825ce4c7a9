"""``legid check``: a robot description against a rosbag2 recording.

Prints one line per problem (topics missing or of another type, with the bag's topics of the
right type suggested; joint names, frame ids, rates; the IMU's topic and units) with the
description key and the fix, then the physical checks of the recording read as ``legid
identify`` reads it, with the force sensing identify will use
(:mod:`legid_ros.core.conventions.consistency`: forces against the weight, sign and frame;
IMU mounting; swapped feet; sole-sensor positions). Exits 0 when there is none, 1 otherwise.
"""

from __future__ import annotations

import argparse

SAMPLES = 2000  # messages decoded per topic for frame ids and statistics


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``legid check``."""
    parser.add_argument('--robot', required=True,
                        help='robot description YAML (or a built-in robot name)')
    parser.add_argument('--bag', required=True, help='rosbag2 directory or storage file')
    parser.add_argument('--zmp-source', default='auto', choices=('auto', 'fsr', 'wrench'),
                        help='the force sensing to check, as legid identify --zmp-source '
                             '(auto: the description\'s force_sensing if recorded, else sole '
                             'sensors if present, else wrenches)')


def _facts(bag, imu_topic: str = '/imu'):
    """RecordingFacts of a bag (every topic counted, up to SAMPLES messages decoded each)."""
    import numpy as np
    from rosbags.typesys import Stores, get_typestore

    from legid_ros.bag.codec import collect
    from legid_ros.bag.discover import locate_bag
    from legid_ros.bag.reader import read_with
    from legid_ros.core.description.check import (JOINT_STATES, WRENCH_TYPE, RecordingFacts,
                                                  TopicFacts)

    ts = get_typestore(Stores.ROS2_HUMBLE)
    wanted = {'sensor_msgs/msg/JointState', 'sensor_msgs/msg/Imu', WRENCH_TYPE}

    def work(reader):
        all_topics = {c.topic: c.msgtype for c in reader.connections}
        data = collect(reader, wanted)
        return all_topics, data

    all_topics, data = read_with(locate_bag(bag), work, 'check')
    facts = RecordingFacts(topics={})
    for topic, mtype in all_topics.items():
        logs, raws = (data[topic][1], data[topic][2]) if topic in data else ([], [])
        logs = np.asarray(logs, np.int64)
        span = (logs[-1] - logs[0]) * 1e-9 if logs.size > 1 else 0.0
        tf = TopicFacts(msgtype=mtype, count=int(logs.size),
                        rate_hz=float((logs.size - 1) / span) if span > 0 else 0.0)
        pick = np.unique(np.linspace(0, len(raws) - 1, min(SAMPLES, len(raws))).astype(int)) \
            if len(raws) else []
        msgs, logged = [], []
        for k in pick:
            try:
                msgs.append(ts.deserialize_cdr(bytes(raws[k]), mtype))
                logged.append(logs[k])
            except Exception:  # malformed message: rosbags raises several types
                continue
        tf.frame_ids = sorted({m.header.frame_id for m in msgs if hasattr(m, 'header')})
        if msgs and hasattr(msgs[0], 'header'):
            stamp_ns = np.array([m.header.stamp.sec * 10 ** 9 + m.header.stamp.nanosec
                                 for m in msgs], np.int64)
            tf.stamped = bool(np.any(stamp_ns != 0))
            if tf.stamped:
                tf.stamp_offset_s = 1e-9 * float(np.median(stamp_ns - np.asarray(logged)))
        if mtype == WRENCH_TYPE and msgs:
            f = np.array([[m.wrench.force.x, m.wrench.force.y, m.wrench.force.z] for m in msgs])
            tf.force_norm, tf.force_z = np.linalg.norm(f, axis=1), f[:, 2]
            tf.stamps_s = np.array([m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec
                                    for m in msgs])
        if topic == JOINT_STATES and msgs:
            facts.joint_names = list(msgs[0].name)
            facts.joint_motion = _joint_motion(msgs)
        if topic == imu_topic and mtype == 'sensor_msgs/msg/Imu' and msgs:
            quat = np.array([[m.orientation.x, m.orientation.y, m.orientation.z,
                              m.orientation.w] for m in msgs])
            acc = np.array([[m.linear_acceleration.x, m.linear_acceleration.y,
                             m.linear_acceleration.z] for m in msgs])
            facts.imu_quat_norm = float(np.median(np.linalg.norm(quat, axis=1)))
            facts.imu_acc_norm = float(np.median(np.linalg.norm(acc, axis=1)))
        facts.topics[topic] = tf
    return facts


def _joint_motion(msgs) -> dict:
    """Per joint name, the span of its position over the joint states ``msgs`` (1st to 99th
    percentile) [rad or m]; each message's names say its order."""
    import numpy as np

    values: dict = {}
    for m in msgs:
        for name, p in zip(m.name, m.position):
            values.setdefault(name, []).append(p)
    return {name: float(np.subtract(*np.nanpercentile(v, [99, 1]))) for name, v in
            values.items() if np.isfinite(v).any()}


def _physical(args, robot, facts):
    """Problems of the bag read as identify reads it (None when it cannot be read so)."""
    from legid_ros.bag.recording_io import read_bag
    from legid_ros.core.conventions.consistency import physical_problems
    from legid_ros.core.description.check import force_source
    from legid_ros.core.errors import BadInputError

    try:
        rec = read_bag(args.bag, robot)
    except BadInputError:
        return None
    return physical_problems(robot, rec, force_source(robot, facts, args.zmp_source).source)


def run(args: argparse.Namespace) -> int:
    """Print the problems; 0 if none, 1 otherwise."""
    from legid_ros.core.description.check import check_recording, force_source
    from legid_ros.core.description.soles import contact_point_problems
    from legid_ros.core.robot import load_robot

    robot = load_robot(args.robot)
    facts = _facts(args.bag, robot.imu.topic)
    physical = _physical(args, robot, facts)
    problems = check_recording(robot, facts, args.zmp_source, load_check=physical is None)
    if not any(line.startswith('locked_joints.') for line in problems):
        problems += physical or []  # (a moving joint locked: the model's posture is wrong)
    problems += contact_point_problems(robot)
    for line in problems:
        print(line)
    source = force_source(robot, facts, args.zmp_source)
    if not problems:
        print(f'ok: {args.bag} matches {robot.name} ({len(facts.topics)} topics, '
              f'{len(robot.actuated_joint_names)} joints, {len(robot.feet)} feet; identify '
              f'will use {source.source}: {source.reason})')
    return 1 if problems else 0
