"""A rosbag2 through the buffer's core as the buffer node receives it (no ROS).

:func:`bag_windows` reads a bag's messages in the order they were logged (their arrival) and
hands each to :class:`legid_ros.core.buffer.sensor_buffer.Buffer` with its header stamp, as
the buffer node's callbacks do: joint states one message at a time under the names (and in
the order) each lists, the IMU and foot forces in the description's conventions (converted by
the buffer), flushed every ``flush_every`` joint states. Unlike
:func:`legid_ros.core.pipeline.replay.recording_windows` (a recording already aligned), the
buffer sees the bag's own timing: late, out-of-order arrivals and per-message joint orders.
"""

from __future__ import annotations

from typing import Iterator, Optional

from rosbags.typesys import Stores, get_typestore

from legid_ros.bag.reader import open_bag
from legid_ros.bag.recording_io import foot_topics
from legid_ros.core.buffer.window import WindowData, unpack_window
from legid_ros.core.contact import ContactThresholds
from legid_ros.core.errors import BadInputError
from legid_ros.core.pipeline.replay import make_buffer
from legid_ros.core.robot import Robot

_TS = get_typestore(Stores.ROS2_HUMBLE)


def _sec(stamp) -> float:
    return stamp.sec + 1e-9 * stamp.nanosec


def bag_windows(bag, robot: Robot, force_mode: Optional[str] = None, flush_every: int = 50,
                thresholds: Optional[ContactThresholds] = None,
                **config) -> Iterator[WindowData]:
    """Windows the buffer cuts from the bag's messages, in logged order.

    Args:
        bag: rosbag2 path (as :func:`legid_ros.bag.recording_io.read_bag` takes).
        robot: The bag's description (topics, joint names, conventions).
        force_mode: 'wrench' or 'fsr' (default: the description's ``force_sensing``, else
            'wrench').
        flush_every: Joint states between two flushes (the node's default 50).
        thresholds: The contact rule's thresholds (default: the node's).
        **config: Other :class:`BufferConfig` fields.

    Raises:
        BadInputError: The bag lacks a force topic of ``force_mode``.
    """
    mode = force_mode or getattr(robot, 'force_sensing', None) or 'wrench'
    topics = foot_topics(robot)
    handlers = {}
    fsr_count = {}
    for foot, tp in topics.items():
        if mode == 'wrench':
            handlers[tp['wrench']] = ('wrench', foot, 0)
        else:
            fsr_count[foot] = len(tp['fsr'])
            handlers.update({t: ('fsr', foot, k) for k, t in enumerate(tp['fsr'])})
    handlers[robot.imu.topic] = ('imu', None, 0)
    handlers['/joint_states'] = ('joint_state', None, 0)
    buf = make_buffer(robot, mode, fsr_count, [], thresholds, conventions=True, **config)
    with open_bag(bag) as reader:
        conns = [c for c in reader.connections if c.topic in handlers]
        missing = sorted(set(handlers) - {c.topic for c in conns})
        if missing:
            raise BadInputError(f'bag {bag} lacks {", ".join(missing)}')
        count = 0
        for conn, _, raw in reader.messages(connections=conns):
            kind, foot, k = handlers[conn.topic]
            msg = _TS.deserialize_cdr(raw, conn.msgtype)
            t = _sec(msg.header.stamp)
            if kind == 'joint_state':
                buf.add_joint_state(t, list(msg.name), msg.position, msg.velocity, msg.effort)
                count += 1
                if count % flush_every == 0:
                    for win in buf.flush():
                        yield unpack_window(win, buf.schema)
            elif kind == 'imu':
                o, w, a = msg.orientation, msg.angular_velocity, msg.linear_acceleration
                buf.add_imu(t, (o.x, o.y, o.z, o.w), (w.x, w.y, w.z), (a.x, a.y, a.z))
            else:
                f, n = msg.wrench.force, msg.wrench.torque
                if kind == 'wrench':
                    buf.add_wrench(foot, t, (f.x, f.y, f.z, n.x, n.y, n.z))
                else:
                    buf.add_fsr(foot, k, t, f.z)
    for win in buf.flush(force=True, final=True):
        yield unpack_window(win, buf.schema)
