"""rosbag2 files of a legged robot's sensors (mcap or sqlite3), via ``rosbags`` (no rclpy).

Topics (standard messages only), names from the robot description:

- ``/joint_states`` sensor_msgs/msg/JointState: position [rad], velocity [rad/s], effort [N.m].
- ``/imu`` sensor_msgs/msg/Imu (frame = IMU frame): orientation, angular velocity [rad/s],
  specific force [m/s^2].
- ``/<wrench_topic>`` per foot, geometry_msgs/msg/WrenchStamped (frame = F/T frame):
  ground-on-foot wrench [N, N.m].
- ``/<ankle_ft_topic>`` per foot (default ``/<wrench_topic>_raw``),
  geometry_msgs/msg/WrenchStamped (frame = F/T frame): raw ankle F/T reading, the wrench the
  leg exerts on the foot [N, N.m] (``Recording.ankle_ft``; written when the recording has it).
- ``/<fsr_topic_prefix>/sensor_<k>`` per sole sensor (a ROS 2 name token may not start with a
  digit; bags of older versions named them ``<prefix>/<k>`` and still read),
  geometry_msgs/msg/WrenchStamped (frame = sensor frame): ``force.z`` = normal force [N].
- Ground truth (simulation only): ``/legid/sim/ground_truth`` and ``/legid/sim/cad_parameters``
  std_msgs/msg/Float64MultiArray (one message, ``layout.dim[0].label`` =
  ``'parameters:' + ','.join(names)``), ``/legid/sim/zmp`` geometry_msgs/msg/PointStamped
  (frame 'world') [m], ``/legid/sim/base_pose`` geometry_msgs/msg/PoseStamped (frame 'world'),
  ``/legid/sim/meta`` std_msgs/msg/String (JSON of ``Recording.meta``, one message).

Header stamps are the sample times from a fixed epoch (:data:`EPOCH_NS`).
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Union

import numpy as np
from rosbags.rosbag2 import Reader, StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

from legid_ros.core.errors import BadInputError
from legid_ros.core.recording import Recording
from legid_ros.core.robot import Robot, load_robot
from legid_ros.bag.align import (CAD_TOPIC, GT_TOPIC, META_TOPIC, POSE_TOPIC, ZMP_TOPIC,
                                   assemble)
from legid_ros.bag.codec import TYPES, FixedLayout, collect, decode_topic, make

EPOCH_NS = 1_700_000_000 * 10 ** 9  # [ns] stamp of sample time 0
_TS = get_typestore(Stores.ROS2_HUMBLE)


def _abs_topic(name: str) -> str:
    return name if name.startswith('/') else '/' + name


def foot_topics(robot: Robot) -> Dict[str, dict]:
    """Per foot: its wrench topic, raw ankle F/T topic (None if the robot names none), F/T
    frame, FSR topics and frames."""
    out = {}
    for name, foot in robot.feet.items():
        prefix = _abs_topic(foot.fsr_topic_prefix)
        raw = foot.ankle_ft_topic
        out[name] = {'wrench': _abs_topic(foot.wrench_topic),
                     'ankle_ft': _abs_topic(raw) if raw else None,
                     'ft_frame': foot.ft_frame or foot.link,
                     'fsr': [f'{prefix}/sensor_{k}' for k in range(len(foot.sensor_frames))],
                     'fsr_frames': list(foot.sensor_frames)}
    return out


@dataclass
class TopicInfo:
    """One topic of a bag.

    Attributes:
        name: Topic name.
        msgtype: Message type.
        count: Number of messages.
        rate_hz: Mean message rate [Hz] (0 for fewer than 2 messages).
        start_ns: First receive time [ns since the epoch].
        end_ns: Last receive time [ns since the epoch].
    """

    name: str
    msgtype: str
    count: int
    rate_hz: float
    start_ns: int
    end_ns: int


@dataclass
class BagInfo:
    """Summary of a bag.

    Attributes:
        path: Bag directory.
        storage: 'mcap' or 'sqlite3'.
        start_ns: First message time [ns since the epoch].
        end_ns: Last message time [ns since the epoch].
        message_count: Total messages.
        topics: Per topic facts, sorted by name.
    """

    path: str
    storage: str
    start_ns: int
    end_ns: int
    message_count: int
    topics: List[TopicInfo] = field(default_factory=list)

    @property
    def duration_s(self) -> float:
        """Time span [s]."""
        return (self.end_ns - self.start_ns) * 1e-9

    def table(self) -> str:
        """Readable table of the topics."""
        width = max([len(t.name) for t in self.topics] + [5])
        twidth = max([len(t.msgtype) for t in self.topics] + [4])
        lines = [f'bag:      {self.path}', f'storage:  {self.storage}',
                 f'span:     {self.duration_s:.3f} s  (start {self.start_ns * 1e-9:.3f} s, '
                 f'end {self.end_ns * 1e-9:.3f} s)', f'messages: {self.message_count}', '',
                 f'{"topic":<{width}}  {"type":<{twidth}}  {"count":>8}  {"rate [Hz]":>10}']
        for t in self.topics:
            lines.append(f'{t.name:<{width}}  {t.msgtype:<{twidth}}  {t.count:>8d}  '
                         f'{t.rate_hz:>10.2f}')
        return '\n'.join(lines)


def _bag_dir(path: Union[str, Path]) -> Path:
    """Bag directory for a path (the directory, or a storage file inside it)."""
    p = Path(path)
    if not p.exists():
        raise BadInputError(f'bag not found: {p}')
    if p.is_file() and (p.parent / 'metadata.yaml').is_file():
        return p.parent
    if p.is_dir() and (p / 'metadata.yaml').is_file():
        return p
    raise BadInputError(f'not a rosbag2 (no metadata.yaml): {p}')


def _open(path) -> Reader:
    bag = _bag_dir(path)
    try:
        reader = Reader(bag)
        reader.open()
    except Exception as exc:  # rosbags raises several unrelated types on bad files
        raise BadInputError(f'cannot read bag {bag}: {exc}'.splitlines()[0]) from exc
    return reader


def bag_info(path: Union[str, Path]) -> BagInfo:
    """Topics with type, count, rate [Hz] and time span of a bag.

    Raises:
        BadInputError: Missing or unreadable bag.
    """
    reader = _open(path)
    try:
        first, last, count, types = {}, {}, {}, {}
        by_topic = {}
        for conn in reader.connections:
            types[conn.topic] = conn.msgtype
            count[conn.topic] = count.get(conn.topic, 0) + int(conn.msgcount)
            by_topic.setdefault(conn.topic, []).append(conn)
        try:
            _first_last(reader, by_topic, first, last)
        except Exception as exc:  # corrupt storage: rosbags raises many types
            raise BadInputError(f'cannot read bag {path}: {exc}'.splitlines()[0]) from exc
        storage = 'mcap' if any(Path(reader.path).glob('*.mcap')) else 'sqlite3'
        topics = []
        for name in sorted(types):
            n = count[name]
            f_ns, l_ns = first.get(name, 0), last.get(name, 0)
            rate = (n - 1) * 1e9 / (l_ns - f_ns) if n > 1 and l_ns > f_ns else 0.0
            topics.append(TopicInfo(name, types[name], n, rate, int(f_ns), int(l_ns)))
        starts = [t.start_ns for t in topics if t.count]
        ends = [t.end_ns for t in topics if t.count]
        return BagInfo(str(_bag_dir(path)), storage, min(starts, default=0),
                       max(ends, default=0), sum(count.values()), topics)
    finally:
        reader.close()


def _first_last(reader: Reader, by_topic: dict, first: dict, last: dict,
                window_ns: int = 10 ** 9) -> None:
    """First and last receive time [ns] per topic: scan 1 s windows at the bag's ends, then
    the whole bag only for the topics not seen there."""
    start, end = reader.start_time, reader.end_time
    for conn, stamp, _raw in reader.messages(start=start, stop=start + window_ns):
        first.setdefault(conn.topic, stamp)
        first[conn.topic] = min(first[conn.topic], stamp)
    for conn, stamp, _raw in reader.messages(start=max(start, end - window_ns), stop=end + 1):
        last[conn.topic] = max(last.get(conn.topic, stamp), stamp)
    rest = [c for topic, conns in by_topic.items() if topic not in first or topic not in last
            for c in conns]
    if rest:
        for conn, stamp, _raw in reader.messages(connections=rest):
            first[conn.topic] = min(first.get(conn.topic, stamp), stamp)
            last[conn.topic] = max(last.get(conn.topic, stamp), stamp)


def _stamps(t: np.ndarray) -> np.ndarray:
    return EPOCH_NS + np.round(np.asarray(t) * 1e9).astype(np.int64)


def write_bag(recording: Recording, path: Union[str, Path], storage: str = 'mcap',
              robot: Optional[Robot] = None, overwrite: bool = False,
              progress: Optional[bool] = None) -> Path:
    """Write a Recording as a rosbag2 directory.

    Args:
        recording: Data to write.
        path: Bag directory to create.
        storage: 'mcap' or 'sqlite3'.
        robot: Robot giving the topic and frame names (default: ``recording.robot``).
        overwrite: Replace an existing bag at ``path``.
        progress: Show a tqdm bar (default: only for long recordings on a TTY).

    Returns:
        The bag directory.

    Raises:
        BadInputError: Unknown storage, path exists, recording does not match the robot.
    """
    from tqdm import tqdm

    plugins = {'mcap': StoragePlugin.MCAP, 'sqlite3': StoragePlugin.SQLITE3}
    if storage not in plugins:
        raise BadInputError(f'unknown storage {storage!r}; use mcap or sqlite3')
    robot = robot or load_robot(recording.robot)
    path = Path(path)
    if path.exists():
        if not overwrite:
            raise BadInputError(f'{path} exists; choose another path or overwrite')
        if not (path / 'metadata.yaml').is_file() and any(path.iterdir()):
            raise BadInputError(f'refusing to overwrite {path}: not a rosbag2 directory')
        shutil.rmtree(path)
    rec = recording
    stamps = _stamps(rec.t)
    n = rec.n
    imu_frame = robot.imu_frame
    streams = [('/joint_states', 'sensor_msgs/msg/JointState',
                FixedLayout(_TS, 'sensor_msgs/msg/JointState', '', names=rec.joint_names),
                np.hstack([rec.q, rec.qd, rec.tau])),
               ('/imu', 'sensor_msgs/msg/Imu', FixedLayout(_TS, 'sensor_msgs/msg/Imu', imu_frame),
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
                stamp = int(stamps[k])
                for conn, rows in pairs:
                    write(conn, stamp, rows[k].data)
    except (OSError, ValueError) as exc:
        raise BadInputError(f'cannot write bag {path}: {exc}') from exc
    return path


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

    Args:
        path: Bag directory (or a storage file inside it).
        robot: Robot name, description YAML or :class:`Robot` (topic names, joint order).

    Raises:
        BadInputError: Missing/unreadable bag, no joint states, joints missing.
    """
    robot = load_robot(robot) if not isinstance(robot, Robot) else robot
    reader = _open(path)
    try:
        topics = {c.topic: c.msgtype for c in reader.connections}
        if '/joint_states' not in topics:
            raise BadInputError(f'bag {path} has no /joint_states topic')
        try:
            data = {name: decode_topic(_TS, name, mtype, logs, raws) for name, (mtype, logs, raws)
                    in collect(reader, set(TYPES.values())).items()}
        except BadInputError:
            raise
        except Exception as exc:  # corrupt data: rosbags raises many types
            raise BadInputError(f'cannot decode bag {path}: {exc}'.splitlines()[0]) from exc
    finally:
        reader.close()
    return assemble(data, robot, foot_topics(robot), path)
