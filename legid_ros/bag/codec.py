"""Fast CDR encoding/decoding of fixed-layout ROS 2 messages with ``rosbags``.

A stamped message whose strings and array lengths do not change (same frame, same joint
names) has the same byte layout in every sample: only the stamp and the float64 fields move.
:class:`FixedLayout` finds those offsets once (serialising a template holding distinct
sentinel values with ``rosbags``), then writes or reads whole time series with numpy. Every
layout checks itself against ``rosbags`` serialisation when built; decoding falls back to
``rosbags`` per message whenever a message does not match the layout byte for byte.
"""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np
import yaml

from legid_ros.bag.cdr import CdrLayout
from legid_ros.bag.mcap_scan import scan_mcap, scan_mcap_indexed
from legid_ros.core.errors import BadInputError

TYPES = {'joint_state': 'sensor_msgs/msg/JointState', 'imu': 'sensor_msgs/msg/Imu',
         'wrench': 'geometry_msgs/msg/WrenchStamped', 'point': 'geometry_msgs/msg/PointStamped',
         'pose': 'geometry_msgs/msg/PoseStamped', 'array': 'std_msgs/msg/Float64MultiArray',
         'string': 'std_msgs/msg/String'}


class make:  # noqa: N801 (namespace of message builders)
    """Builders of rosbags message objects from flat float vectors."""

    @staticmethod
    def header(ts, stamp_ns: int, frame: str, sec: Optional[int] = None,
               nsec: Optional[int] = None):
        """std_msgs/Header at ``stamp_ns`` [ns] (or explicit sec/nsec)."""
        if sec is None:
            sec, nsec = divmod(int(stamp_ns), 10 ** 9)
        time = ts.types['builtin_interfaces/msg/Time'](sec=int(sec), nanosec=int(nsec))
        return ts.types['std_msgs/msg/Header'](stamp=time, frame_id=frame)

    @staticmethod
    def message(ts, typename: str, header, values: np.ndarray, names: List[str]):
        """Message of ``typename`` with its float slots set from ``values``."""
        t = ts.types
        vec = t['geometry_msgs/msg/Vector3']
        v = [float(x) for x in values]
        if typename == TYPES['joint_state']:
            nj = len(names)
            return t[typename](header=header, name=list(names),
                               position=np.array(v[:nj]), velocity=np.array(v[nj:2 * nj]),
                               effort=np.array(v[2 * nj:3 * nj]))
        if typename == TYPES['imu']:
            quat = t['geometry_msgs/msg/Quaternion'](x=v[0], y=v[1], z=v[2], w=v[3])
            return t[typename](header=header, orientation=quat,
                               orientation_covariance=np.zeros(9),
                               angular_velocity=vec(x=v[4], y=v[5], z=v[6]),
                               angular_velocity_covariance=np.zeros(9),
                               linear_acceleration=vec(x=v[7], y=v[8], z=v[9]),
                               linear_acceleration_covariance=np.zeros(9))
        if typename == TYPES['wrench']:
            wrench = t['geometry_msgs/msg/Wrench'](force=vec(x=v[0], y=v[1], z=v[2]),
                                                   torque=vec(x=v[3], y=v[4], z=v[5]))
            return t[typename](header=header, wrench=wrench)
        if typename == TYPES['point']:
            return t[typename](header=header, point=t['geometry_msgs/msg/Point'](
                x=v[0], y=v[1], z=v[2]))
        if typename == TYPES['pose']:
            pose = t['geometry_msgs/msg/Pose'](
                position=t['geometry_msgs/msg/Point'](x=v[0], y=v[1], z=v[2]),
                orientation=t['geometry_msgs/msg/Quaternion'](x=v[3], y=v[4], z=v[5], w=v[6]))
            return t[typename](header=header, pose=pose)
        raise BadInputError(f'no fixed layout for {typename}')

    @staticmethod
    def parameters(ts, pi: np.ndarray, names: List[str]):
        """Float64MultiArray holding a parameter vector, names in ``dim[0].label``."""
        t = ts.types
        dim = t['std_msgs/msg/MultiArrayDimension'](
            label='parameters:' + ','.join(names), size=len(pi), stride=len(pi))
        layout = t['std_msgs/msg/MultiArrayLayout'](dim=[dim], data_offset=0)
        return t[TYPES['array']](layout=layout, data=np.asarray(pi, float))

    @staticmethod
    def string(ts, text: str):
        """std_msgs/String."""
        return ts.types[TYPES['string']](data=text)


def flatten(typename: str, msg) -> np.ndarray:
    """Float slots of a deserialised message (inverse of :meth:`make.message`)."""
    if typename == TYPES['joint_state']:
        n = len(msg.name)

        def col(arr):
            arr = np.asarray(arr, float)
            return arr if arr.size == n else np.full(n, np.nan)
        return np.concatenate([col(msg.position), col(msg.velocity), col(msg.effort)])
    if typename == TYPES['imu']:
        o, w, a = msg.orientation, msg.angular_velocity, msg.linear_acceleration
        return np.array([o.x, o.y, o.z, o.w, w.x, w.y, w.z, a.x, a.y, a.z])
    if typename == TYPES['wrench']:
        f, m = msg.wrench.force, msg.wrench.torque
        return np.array([f.x, f.y, f.z, m.x, m.y, m.z])
    if typename == TYPES['point']:
        return np.array([msg.point.x, msg.point.y, msg.point.z])
    if typename == TYPES['pose']:
        p, o = msg.pose.position, msg.pose.orientation
        return np.array([p.x, p.y, p.z, o.x, o.y, o.z, o.w])
    raise BadInputError(f'no fixed layout for {typename}')


def n_slots(typename: str, n_names: int = 0) -> int:
    """Number of float slots of a fixed-layout message type."""
    return {TYPES['joint_state']: 3 * n_names, TYPES['imu']: 10, TYPES['wrench']: 6,
            TYPES['point']: 3, TYPES['pose']: 7}[typename]


#: Kind of the one CDR decoder (:mod:`legid_ros.bag.cdr`) for each fixed-layout type.
KINDS = {TYPES['joint_state']: 'joint_state', TYPES['imu']: 'imu', TYPES['wrench']: 'wrench',
         TYPES['point']: 'point', TYPES['pose']: 'pose'}


class FixedLayout:
    """Byte layout of one message type with a fixed frame (and joint names), for writing.

    A template is serialised once with ``rosbags``; its layout is read by the one CDR decoder
    (:class:`legid_ros.bag.cdr.CdrLayout`), which then writes or reads whole time series. The
    layout checks itself against ``rosbags`` serialisation when built.

    Args:
        ts: rosbags typestore.
        typename: Message type.
        frame: Header frame id.
        names: Joint names (JointState only).
    """

    def __init__(self, ts, typename: str, frame: str, names: Optional[List[str]] = None):
        if typename not in KINDS:
            raise BadInputError(f'no fixed layout for {typename}')
        self.typename = typename
        self.names = list(names or [])
        self.frame = frame
        self.ts = ts
        self.slots = n_slots(typename, len(self.names))
        probe = np.random.default_rng(0).normal(size=(1, self.slots))
        stamp = np.array([1_700_000_001_250_000_000])
        raw = self._serialize(probe[0], stamp_ns=stamp[0])
        self.layout = CdrLayout.learn(KINDS[typename], raw)
        if self.layout is None or bytes(self.layout.pack(stamp, probe)[0]) != raw:
            raise BadInputError(f'fixed layout of {typename} does not match rosbags')
        self.itemsize = self.layout.itemsize

    def _serialize(self, values, stamp_ns: int = 0) -> bytes:
        header = make.header(self.ts, stamp_ns, self.frame)
        msg = make.message(self.ts, self.typename, header, values, self.names)
        return bytes(self.ts.serialize_cdr(msg, self.typename))

    def pack(self, stamps_ns: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Serialised messages, one row of bytes per sample, (N, itemsize) uint8."""
        return self.layout.pack(stamps_ns, values)

    def unpack(self, raws):
        """(stamps [ns], values (N, slots)) if every message matches the layout, else None.

        ``raws``: list of serialised messages, or an (N, L) uint8 matrix of them.
        """
        ok, stamps, values = self.layout.unpack_rows(raws)
        return (stamps, values) if ok.all() else None

    def unpack_rows(self, raws):
        """(mask of the messages matching the layout, their stamps [ns], their values)."""
        return self.layout.unpack_rows(raws)


def _storage_files(reader):
    """(storage id, storage files) of an uncompressed bag, or ('', []).

    A reader may state them (``storage_files``); a bare ``.mcap`` file is its own storage.
    """
    known = getattr(reader, 'storage_files', None)
    if known is not None:
        return known
    bag = Path(reader.path)
    if bag.is_file():
        return ('mcap', [bag]) if bag.suffix == '.mcap' else ('', [])
    try:
        meta = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        return '', []
    if meta.get('compression_mode'):
        return '', []
    return (str(meta.get('storage_identifier', '')),
            [bag / p for p in meta.get('relative_file_paths', [])])


def _merge(blocks: list):
    """One (N, L) uint8 matrix if every block is a matrix of the same width, else a list of
    byte strings (scan_mcap gives a flat list of payloads already)."""
    if blocks and all(isinstance(b, np.ndarray) for b in blocks):
        if len({b.shape[1] for b in blocks}) == 1:
            return np.vstack(blocks)
    if not any(isinstance(b, (np.ndarray, list)) for b in blocks):
        return blocks
    out = []
    for b in blocks:
        out.extend(bytes(r) for r in b) if isinstance(b, (np.ndarray, list)) else out.append(b)
    return out


def _trim_heap() -> None:
    """Give the heap's free pages back to the system (glibc; elsewhere nothing): the scan's
    many small payload blocks, once merged, would otherwise keep their pages resident."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass


def collect(reader, typenames) -> dict:
    """One pass over a bag: ``{topic: (type, [log stamps ns], [raw bytes])}`` for the types.

    MCAP bags are scanned directly (falls back to ``rosbags`` on anything
    unexpected, including a message count differing from the bag's index).
    """
    conns = [c for c in reader.connections if c.msgtype in typenames]
    types = {c.topic: c.msgtype for c in conns}
    counts: Dict[str, int] = {}
    for c in conns:
        counts[c.topic] = counts.get(c.topic, 0) + int(c.msgcount)
    storage, files = _storage_files(reader)
    scans = {'mcap': (scan_mcap_indexed, scan_mcap)}
    for scan in scans.get(storage, ()) if files else ():
        try:
            found = scan(files, set(types))
        except Exception:  # McapScanError, or anything unexpected: the next reader tries
            continue
        if all(len(found.get(t, ([], []))[0]) == n for t, n in counts.items()):
            merged = {}
            for t in types:  # each topic's blocks freed once merged (peak: one copy)
                logs, blocks = found.pop(t, (np.zeros(0, np.int64), []))
                merged[t] = (types[t], np.asarray(logs, np.int64), _merge(blocks))
                del blocks
                _trim_heap()
            return merged
    out = {c.topic: (c.msgtype, [], []) for c in conns}
    for conn, log, raw in reader.messages(connections=conns):
        entry = out[conn.topic]
        entry[1].append(log)
        entry[2].append(bytes(raw))
    return out


def _deserialize(ts, raw, typename: str):
    """The message, or None when its bytes are not valid CDR of the type."""
    try:
        return ts.deserialize_cdr(bytes(raw), typename)
    except Exception:  # malformed CDR: rosbags raises several types
        return None


def _template(ts, typename: str, raws):
    """(message, its index) of the first message that deserialises; for joint states, of the
    first three that do, the first whose joint names the most of them share (a damaged name
    does not set the layout). (None, -1) when none does."""
    found = []
    for i, raw in enumerate(raws):
        msg = _deserialize(ts, raw, typename)
        if msg is not None:
            found.append((msg, i))
            if typename != TYPES['joint_state'] or len(found) == 3:
                break
    if not found:
        return None, -1
    if typename != TYPES['joint_state']:
        return found[0]
    names = [list(m.name) for m, _ in found]
    return max(found, key=lambda f: names.count(list(f[0].name)))


def _reordered(msg, names: List[str]):
    """A joint state listing the joints ``names`` in that order (its arrays permuted alike;
    an empty velocity or effort array stays empty)."""
    index = {n: k for k, n in enumerate(msg.name)}
    cols = np.array([index[n] for n in names])
    msg.name = list(names)
    for key in ('position', 'velocity', 'effort'):
        arr = np.asarray(getattr(msg, key))
        if len(arr) == len(cols):
            setattr(msg, key, arr[cols])
    return msg


def decode_topic(ts, topic: str, typename: str, logs: List[int], raws: List[bytes]) -> dict:
    """All messages of one topic. A message whose bytes do not deserialise is left out and
    counted in ``'undecodable'``; so is a joint state naming other joints than the rest, in
    ``'foreign'``, when they are at most a tenth (damaged names). A joint state listing the
    same joints in another order (a driver that does not keep one) is read in the first's.

    Returns:
        For fixed-layout types: ``{'stamp': ns (N,), 'log': ns (N,), 'values': (N, slots),
        'frame': str, 'names': [...]}``; for the others ``{'messages': [...], 'log': ...}``.

    Raises:
        BadInputError: Over a tenth of the joint states name other joints than the first.
    """
    out = {'log': np.array(logs, np.int64), 'type': typename, 'undecodable': 0, 'foreign': 0}
    if typename in (TYPES['array'], TYPES['string']):
        msgs = [_deserialize(ts, r, typename) for r in raws]
        keep = np.array([m is not None for m in msgs], bool).reshape(len(msgs))
        out['messages'] = [m for m in msgs if m is not None]
        out['log'], out['undecodable'] = out['log'][keep], int(np.sum(~keep))
        return out
    first, at = _template(ts, typename, raws)
    if first is None:
        out.update(stamp=np.zeros(0, np.int64), values=np.zeros((0, 0)), frame='', names=[],
                   log=np.zeros(0, np.int64), undecodable=len(raws))
        return out
    names = list(getattr(first, 'name', []))
    out['frame'], out['names'] = first.header.frame_id, names
    ok = np.zeros(len(raws), bool)
    layout = CdrLayout.learn(KINDS[typename], bytes(raws[at]))
    if layout is not None:
        ok, fast_stamps, fast_values = layout.unpack_rows(raws)
        if ok.all():
            out['stamp'], out['values'] = fast_stamps, fast_values
            return out
    stamps = np.zeros(len(raws), np.int64)
    values = np.zeros((len(raws), n_slots(typename, len(names))))
    if ok.any():
        stamps[ok], values[ok] = fast_stamps, fast_values
    keep, foreign = ok.copy(), 0
    for i in np.flatnonzero(~ok):
        msg = _deserialize(ts, raws[i], typename)
        if msg is None:
            continue
        if typename == TYPES['joint_state'] and list(msg.name) != names:
            if sorted(msg.name) != sorted(names):
                foreign += 1
                continue
            msg = _reordered(msg, names)  # the same joints listed in another order
        stamps[i] = msg.header.stamp.sec * 10 ** 9 + msg.header.stamp.nanosec
        values[i], keep[i] = flatten(typename, msg), True
    if foreign > 0.1 * len(raws):  # not a few damaged names: the topic mixes joint sets
        raise BadInputError(f'{topic}: joint names change between messages')
    out['stamp'], out['values'], out['log'] = stamps[keep], values[keep], out['log'][keep]
    out['undecodable'], out['foreign'] = int(np.sum(~keep)) - foreign, foreign
    return out
