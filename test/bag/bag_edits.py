"""Bag edits for the tests: a bag written message by message, a topic's header stamps moved
(a driver on another clock), with plain rosbags (not the code under test)."""

from rosbags.rosbag2 import Reader, StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

TS = get_typestore(Stores.ROS2_HUMBLE)


def write_raw(path, topics):
    """Write a bag from {topic: (type, [(log ns, message)])} with plain rosbags."""
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        conns = {t: writer.add_connection(t, mtype, typestore=TS)
                 for t, (mtype, _) in topics.items()}
        events = sorted((log, t, msg) for t, (_, msgs) in topics.items() for log, msg in msgs)
        for log, topic, msg in events:
            writer.write(conns[topic], log, TS.serialize_cdr(msg, topics[topic][0]))


def restamp(src, dst, shifts):
    """Copy bag ``src`` to ``dst`` with the header stamps of each topic of ``shifts`` moved by
    its value [ns] (None: set to 0, a driver that does not stamp); receive times unchanged."""
    topics = {}
    with Reader(src) as reader:
        for conn, log, raw in reader.messages():
            msg = TS.deserialize_cdr(raw, conn.msgtype)
            if conn.topic in shifts:
                shift = shifts[conn.topic]
                ns = 0 if shift is None else (msg.header.stamp.sec * 10 ** 9
                                              + msg.header.stamp.nanosec + shift)
                msg.header.stamp = TS.types['builtin_interfaces/msg/Time'](
                    sec=ns // 10 ** 9, nanosec=ns % 10 ** 9)
            topics.setdefault(conn.topic, (conn.msgtype, []))[1].append((log, msg))
    write_raw(dst, topics)
