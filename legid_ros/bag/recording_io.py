"""rosbag2 files of a legged robot's sensors (mcap or sqlite3), via ``rosbags`` (no rclpy).

Topics (standard messages only), names from the robot description:

- ``/joint_states`` sensor_msgs/msg/JointState: position [rad], velocity [rad/s], effort [N.m].
- ``imu.topic`` (default ``/imu``) sensor_msgs/msg/Imu (frame = ``imu.frame_id``):
  orientation, angular velocity [rad/s], specific force [m/s^2].
- ``/<wrench_topic>`` per foot, geometry_msgs/msg/WrenchStamped (frame = F/T frame):
  ground-on-foot wrench [N, N.m].
- ``/<ankle_ft_topic>`` per foot (default ``/<wrench_topic>_raw``),
  geometry_msgs/msg/WrenchStamped (frame = F/T frame): raw ankle F/T reading, the wrench the
  leg exerts on the foot [N, N.m] (``Recording.ankle_ft``; written when the recording has it).
- per force sensor, its topic: the description's ``feet.<foot>.force_sensors[k].topic`` (any
  name, also one a live ROS 2 node could not use, such as ``left_foot/fsr/0``), else
  ``/<fsr_topic_prefix>/sensor_<k>`` (bags of older versions named these ``<prefix>/<k>`` and
  still read), geometry_msgs/msg/WrenchStamped (frame = sensor frame): ``force.z`` = normal
  force [N].
- Ground truth (simulation only): ``/legid/sim/ground_truth`` and ``/legid/sim/cad_parameters``
  std_msgs/msg/Float64MultiArray (one message, ``layout.dim[0].label`` =
  ``'parameters:' + ','.join(names)``), ``/legid/sim/zmp`` geometry_msgs/msg/PointStamped
  (frame 'world') [m], ``/legid/sim/base_pose`` geometry_msgs/msg/PoseStamped (frame 'world'),
  ``/legid/sim/meta`` std_msgs/msg/String (JSON of ``Recording.meta``, one message).

Header stamps are the sample times from a fixed epoch (:data:`EPOCH_NS`). Values are written
as the recording holds them, named and framed as the robot's description says (topics,
``frame_id``); a description with other conventions (``imu.rpy``, ``expressed_in``, see
:mod:`legid_ros.core.conventions.spec`) describes a recording already in them. Reading
brings them to the internal convention (:mod:`legid_ros.core.conventions.convert`).

The paths a bag is written to and read from are those of :mod:`legid_ros.bag.discover`; an
MCAP cut short is read as far as it goes (:mod:`legid_ros.bag.repair`). :func:`bag_info`
(:mod:`legid_ros.bag.summary`) and :func:`open_bag` (:mod:`legid_ros.bag.reader`) are
re-exported here.
"""

from __future__ import annotations

import json
import logging
import shutil
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Dict, Optional, Union

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

from legid_ros.core.errors import BadInputError
from legid_ros.core.recording import Recording
from legid_ros.core.robot import Robot, load_robot
from legid_ros.bag.align import (CAD_TOPIC, GT_TOPIC, META_TOPIC, POSE_TOPIC, ZMP_TOPIC,
                                   assemble)
from legid_ros.bag.codec import TYPES, FixedLayout, collect, decode_topic, make
from legid_ros.bag.discover import locate_bag, output_bag
from legid_ros.bag.reader import open_bag, read_with
from legid_ros.bag.summary import BagInfo, TopicInfo, bag_info

__all__ = ['EPOCH_NS', 'BagInfo', 'TopicInfo', 'bag_info', 'foot_topics', 'open_bag',
           'read_bag', 'write_bag']

EPOCH_NS = 1_700_000_000 * 10 ** 9  # [ns] stamp of sample time 0
_TS = get_typestore(Stores.ROS2_HUMBLE)
LOG = logging.getLogger(__name__)


def _abs_topic(name: str) -> str:
    return name if name.startswith('/') else '/' + name


def foot_topics(robot: Robot) -> Dict[str, dict]:
    """Per foot: its wrench topic, raw ankle F/T topic (None if the robot names none), F/T
    frame, force-sensor topics (the description's ``force_sensors``, any names, else
    ``<fsr_topic_prefix>/sensor_<k>``) and their frames."""
    out = {}
    for name, foot in robot.feet.items():
        raw = foot.ankle_ft_topic
        out[name] = {'wrench': _abs_topic(foot.wrench_topic),
                     'ankle_ft': _abs_topic(raw) if raw else None,
                     'ft_frame': foot.frame_id or foot.wrench_frame,
                     'fsr': [_abs_topic(t) for t in foot.fsr_topics],
                     'fsr_frames': list(foot.sensor_frames)}
    return out


def _stamps(t: np.ndarray) -> np.ndarray:
    return EPOCH_NS + np.round(np.asarray(t) * 1e9).astype(np.int64)


def write_bag(recording: Recording, path: Union[str, Path], storage: Optional[str] = None,
              robot: Optional[Robot] = None, overwrite: bool = False,
              progress: Optional[bool] = None, joint_order: Optional[np.ndarray] = None,
              log_delay_s: Optional[np.ndarray] = None) -> Path:
    """Write a Recording as a rosbag2 directory.

    Args:
        recording: Data to write.
        path: Bag directory to create; a path ending in ``.mcap`` or ``.db3`` names the
            directory without the suffix (``run.mcap`` -> ``run/run.mcap``, as
            ``ros2 bag record -o run``).
        storage: 'mcap' or 'sqlite3' (default: the one the suffix names, else 'mcap').
        robot: Robot giving the topic and frame names (default: ``recording.robot``).
        overwrite: Replace an existing bag at the bag directory.
        progress: Show a tqdm bar (default: only for long recordings on a TTY).
        joint_order: Per sample, the joint columns its joint-state message lists, in that
            order (N, nj) (a driver that publishes them in any order); default: column order.
        log_delay_s: Per sample, how late its messages are logged after their header stamp
            (N,) [s] (arrival jitter; default: logged at the stamp).

    Returns:
        The bag directory written.

    Raises:
        BadInputError: Unknown storage (or one the suffix contradicts), path exists,
            recording does not match the robot.
    """
    from tqdm import tqdm

    plugins = {'mcap': StoragePlugin.MCAP, 'sqlite3': StoragePlugin.SQLITE3}
    path, storage = output_bag(path, storage)
    robot = robot or load_robot(recording.robot)
    if path.exists():
        if not overwrite:
            raise BadInputError(f'{path} exists; choose another path or overwrite')
        if not (path / 'metadata.yaml').is_file() and any(path.iterdir()):
            raise BadInputError(f'refusing to overwrite {path}: not a rosbag2 directory')
        shutil.rmtree(path)
    rec = recording
    stamps = _stamps(rec.t)
    n = rec.n
    imu = robot.imu
    streams = [('/joint_states', 'sensor_msgs/msg/JointState',
                FixedLayout(_TS, 'sensor_msgs/msg/JointState', '', names=rec.joint_names),
                np.hstack([rec.q, rec.qd, rec.tau])),
               (imu.topic, 'sensor_msgs/msg/Imu', FixedLayout(_TS, 'sensor_msgs/msg/Imu',
                                                              imu.frame_id),
                np.hstack([rec.imu_quat, rec.imu_gyro, rec.imu_acc]))]
    for foot, tp in foot_topics(robot).items():
        if foot in rec.foot_wrench:
            streams.append((tp['wrench'], TYPES['wrench'], FixedLayout(
                _TS, TYPES['wrench'], tp['ft_frame']), rec.foot_wrench[foot]))
        if foot in rec.ankle_ft and tp['ankle_ft']:
            streams.append((tp['ankle_ft'], TYPES['wrench'], FixedLayout(
                _TS, TYPES['wrench'], tp['ft_frame']), rec.ankle_ft[foot]))
        if foot in rec.fsr:
            if rec.fsr[foot].shape[1] != len(tp['fsr']):
                raise BadInputError(f'fsr of foot {foot!r} has {rec.fsr[foot].shape[1]} columns, '
                                    f'robot has {len(tp["fsr"])} sensors')
            for k, (topic, frame) in enumerate(zip(tp['fsr'], tp['fsr_frames'])):
                vals = np.zeros((n, 6))
                vals[:, 2] = rec.fsr[foot][:, k]
                streams.append((topic, TYPES['wrench'], FixedLayout(_TS, TYPES['wrench'], frame),
                                vals))
    if rec.zmp_true is not None:
        streams.append((ZMP_TOPIC, TYPES['point'], FixedLayout(_TS, TYPES['point'], 'world'),
                        np.column_stack([rec.zmp_true, np.zeros(n)])))
    if rec.base_pose_true is not None:
        streams.append((POSE_TOPIC, TYPES['pose'], FixedLayout(_TS, TYPES['pose'], 'world'),
                        rec.base_pose_true))
    packed = [layout.pack(stamps, values) for _, _, layout, values in streams]
    if joint_order is not None:
        packed[0] = _shuffled_joint_states(rec, stamps, np.asarray(joint_order, int))
    logs = stamps if log_delay_s is None else \
        stamps + np.round(np.asarray(log_delay_s) * 1e9).astype(np.int64)
    show = (n > 20000 and sys.stderr.isatty()) if progress is None else progress
    try:
        with Writer(path, version=9, storage_plugin=plugins[storage]) as writer:
            conns = [writer.add_connection(topic, mtype, typestore=_TS)
                     for topic, mtype, _, _ in streams]
            for topic, mtype, value in _single_messages(rec):
                conn = writer.add_connection(topic, mtype, typestore=_TS)
                writer.write(conn, int(stamps[0]), bytes(_TS.serialize_cdr(value, mtype)))
            pairs = list(zip(conns, packed))
            write = writer.write
            for k in tqdm(range(n), desc=f'writing {path.name}', unit='sample',
                          disable=not show, mininterval=0.5, unit_scale=True):
                stamp = int(logs[k])
                for conn, rows in pairs:
                    write(conn, stamp, rows[k] if isinstance(rows, list) else rows[k].data)
    except (OSError, ValueError) as exc:
        raise BadInputError(f'cannot write bag {path}: {exc}') from exc
    return path


def _shuffled_joint_states(rec: Recording, stamps: np.ndarray, order: np.ndarray) -> list:
    """Serialised joint states, sample k listing the joints ``order[k]`` in that order."""

    if order.shape != rec.q.shape:
        raise BadInputError(f'joint_order has shape {order.shape}, expected {rec.q.shape}')
    names = np.array(rec.joint_names)
    mtype = 'sensor_msgs/msg/JointState'
    out = []
    for k, cols in enumerate(order):
        header = make.header(_TS, int(stamps[k]), '')
        values = np.concatenate([rec.q[k, cols], rec.qd[k, cols], rec.tau[k, cols]])
        msg = make.message(_TS, mtype, header, values, list(names[cols]))
        out.append(bytes(_TS.serialize_cdr(msg, mtype)))
    return out


def _single_messages(rec: Recording):
    """(topic, type, message) of the one-off ground-truth messages."""
    out = []
    for topic, pi in ((GT_TOPIC, rec.pi_true), (CAD_TOPIC, rec.pi_cad)):
        if pi is not None:
            out.append((topic, TYPES['array'], make.parameters(_TS, pi, rec.param_names)))
    if rec.meta:
        out.append((META_TOPIC, TYPES['string'], make.string(_TS, json.dumps(
            rec.meta, default=lambda o: np.asarray(o).tolist()))))
    return out


def read_bag(path: Union[str, Path], robot: Union[str, Robot] = 'biped') -> Recording:
    """Read a bag into a Recording, aligned on the ``/joint_states`` clock.

    Other topics are linearly interpolated (orientation: nearest sample) at the joint-state
    stamps, so stamps may jitter and topics may have other rates. Topics missing from the bag
    give NaN columns (IMU) or no entry (feet: ``foot_wrench``, ``fsr``, ``ankle_ft``); ground
    truth is filled when present.

    Damage costs only what it touches, said by a one-line warning and in ``Recording.meta``:
    an MCAP cut short (power loss, full disk) is read up to its last complete record
    (``meta['bag_recovery']``, see :class:`legid_ros.bag.repair.BagRecovery`); a message
    whose bytes do not deserialise is left out (``meta['undecodable_messages']``: count per
    topic), and so are a few joint states naming other joints than the rest
    (``meta['foreign_joint_states']``). None of these keys exists for a whole bag.

    Args:
        path: Bag directory, a storage file inside it, a bare ``.mcap`` / ``.db3`` file, a
            directory a recorder left without ``metadata.yaml``, or the path given to
            :func:`write_bag` (``run.mcap`` for ``run/``).
        robot: Robot name, description YAML or :class:`Robot` (topic names, joint order).

    Raises:
        BadInputError: Missing/unreadable bag, no joint states, joints missing.
    """
    robot = load_robot(robot) if not isinstance(robot, Robot) else robot

    def decode(reader):
        topics = {c.topic: c.msgtype for c in reader.connections}
        if '/joint_states' not in topics:
            raise BadInputError(f'bag {path} has no /joint_states topic')
        raw = collect(reader, set(TYPES.values()))
        decoded = {}
        for name in list(raw):  # each topic's payloads dropped once decoded
            mtype, logs, raws = raw.pop(name)
            decoded[name] = decode_topic(_TS, name, mtype, logs, raws)
            del raws
        return decoded, getattr(reader, 'recovery', None)

    data, recovery = read_with(locate_bag(path), decode, 'decode')
    rec = assemble(data, robot, foot_topics(robot), path)
    if recovery is not None:
        rec.meta['bag_recovery'] = asdict(recovery)
    lost = {name: topic['undecodable'] for name, topic in data.items()
            if topic.get('undecodable')}
    if lost:
        rec.meta['undecodable_messages'] = lost
    foreign = data['/joint_states'].get('foreign', 0)
    if foreign:
        rec.meta['foreign_joint_states'] = foreign
    if lost or foreign:
        LOG.warning('%s: left out %d undecodable messages%s%s', path, sum(lost.values()),
                    ''.join(f', {n} on {name}' for name, n in sorted(lost.items())),
                    f'; {foreign} joint states naming other joints' if foreign else '')
    return rec
