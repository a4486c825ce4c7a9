"""Messages <-> numpy arrays for the buffer, estimator, sim and replay nodes.

The only place (with other ``conversions_<x>.py`` modules) where message fields are read or
written. Layout conventions of ``std_msgs/Float64MultiArray``:

- window: ``dim[0]`` label ``samples`` (size = rows), ``dim[1]`` label
  ``channels:<name>,<name>,...`` (size = channels); row-major data.
- parameters / ground truth: one dim labelled ``parameters:<name>,<name>,...``.
"""

from __future__ import annotations

import array
import struct
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import Point, PointStamped, WrenchStamped
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension

from legid_ros.core.buffering import ChannelSchema
from legid_ros.core.errors import BadInputError

PARAMETERS_PREFIX = 'parameters:'


def fsr_topic(prefix: str, k: int) -> str:
    """ROS topic of sole sensor ``k``: ``<prefix>/sensor_<k>``.

    ROS 2 topic tokens may not start with a digit, so ``<prefix>/<k>`` (the bag files' name) is
    not a valid ROS topic; :func:`ros_topic_name` maps one to the other.
    """
    return f'{prefix}/sensor_{int(k)}'


def ros_topic_name(topic: str) -> str:
    """A valid ROS 2 topic for a bag topic: tokens that start with a digit get ``sensor_``."""
    parts = topic.split('/')
    return '/'.join(f'sensor_{p}' if p[:1].isdigit() else p for p in parts)


def stamp_to_sec(stamp) -> float:
    """builtin_interfaces/Time -> seconds [s]."""
    return stamp.sec + stamp.nanosec * 1e-9


def sec_to_stamp(t: float) -> Time:
    """Seconds [s] -> builtin_interfaces/Time (rounded to the nanosecond)."""
    ns = int(round(t * 1e9))
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def _doubles(values) -> array.array:
    """A float64 ``array.array`` (the fast path of rclpy's sequence setters)."""
    return array.array('d', np.ascontiguousarray(values, dtype=np.float64).tobytes())


# ------------------------------------------------------------------ sensors
def joint_state_fields(msg: JointState):
    """(stamp [s], names, positions, velocities, efforts) of a JointState."""
    return (stamp_to_sec(msg.header.stamp), msg.name, msg.position, msg.velocity, msg.effort)


def imu_fields(msg: Imu):
    """(stamp [s], quaternion [x y z w], angular velocity [rad/s], specific force [m/s^2])."""
    o, w, a = msg.orientation, msg.angular_velocity, msg.linear_acceleration
    return (stamp_to_sec(msg.header.stamp), (o.x, o.y, o.z, o.w), (w.x, w.y, w.z),
            (a.x, a.y, a.z))


def wrench_fields(msg: WrenchStamped):
    """(stamp [s], [fx fy fz tx ty tz] [N, N.m]) of a WrenchStamped."""
    f, t = msg.wrench.force, msg.wrench.torque
    return stamp_to_sec(msg.header.stamp), (f.x, f.y, f.z, t.x, t.y, t.z)


def joint_state_msg(t: float, names: Sequence[str], q, qd=None, tau=None,
                    frame_id: str = '') -> JointState:
    """JointState at ``t`` [s]; NaN velocity/effort columns are left empty."""
    msg = JointState()
    msg.header.stamp = sec_to_stamp(t)
    msg.header.frame_id = frame_id
    msg.name = list(names)
    msg.position = _doubles(q)
    if qd is not None and np.all(np.isfinite(qd)):
        msg.velocity = _doubles(qd)
    if tau is not None and np.all(np.isfinite(tau)):
        msg.effort = _doubles(tau)
    return msg


def imu_msg(t: float, frame_id: str, quat_xyzw, gyro, acc) -> Imu:
    """Imu at ``t`` [s] (covariances left unknown: zero)."""
    msg = Imu()
    msg.header.stamp = sec_to_stamp(t)
    msg.header.frame_id = frame_id
    o = msg.orientation
    o.x, o.y, o.z, o.w = (float(x) for x in quat_xyzw)
    w = msg.angular_velocity
    w.x, w.y, w.z = (float(x) for x in gyro)
    a = msg.linear_acceleration
    a.x, a.y, a.z = (float(x) for x in acc)
    return msg


def wrench_msg(t: float, frame_id: str, wrench) -> WrenchStamped:
    """WrenchStamped at ``t`` [s] from ``[fx fy fz tx ty tz]`` [N, N.m]."""
    msg = WrenchStamped()
    msg.header.stamp = sec_to_stamp(t)
    msg.header.frame_id = frame_id
    f, m = msg.wrench.force, msg.wrench.torque
    f.x, f.y, f.z, m.x, m.y, m.z = (float(x) for x in wrench)
    return msg


def point_msg(t: float, frame_id: str, x: float, y: float, z: float = 0.0) -> PointStamped:
    """PointStamped at ``t`` [s]."""
    msg = PointStamped()
    msg.header.stamp = sec_to_stamp(t)
    msg.header.frame_id = frame_id
    msg.point = Point(x=float(x), y=float(y), z=float(z))
    return msg


# ------------------------------------------------------------------ windows
def window_msg(window: np.ndarray, schema: ChannelSchema) -> Float64MultiArray:
    """Float64MultiArray of a (rows, channels) window with the schema in the layout."""
    rows, cols = window.shape
    if cols != len(schema):
        raise BadInputError(f'window has {cols} columns, schema {len(schema)}')
    msg = Float64MultiArray()
    msg.layout.dim = [MultiArrayDimension(label='samples', size=rows, stride=rows * cols),
                      MultiArrayDimension(label=schema.label(), size=cols, stride=cols)]
    msg.data = _doubles(window.ravel())
    return msg


_schema_cache: Dict[str, ChannelSchema] = {}


def window_from_msg(msg: Float64MultiArray) -> Tuple[np.ndarray, ChannelSchema]:
    """(rows, channels) array and schema of a window message; BadInputError if malformed."""
    dims = msg.layout.dim
    if len(dims) != 2:
        raise BadInputError(f'window layout has {len(dims)} dims, expected 2')
    label = dims[1].label
    schema = _schema_cache.get(label)
    if schema is None:
        schema = ChannelSchema.from_label(label)
        if len(_schema_cache) < 16:
            _schema_cache[label] = schema
    rows, cols = int(dims[0].size), int(dims[1].size)
    data = np.frombuffer(msg.data, dtype=np.float64) if isinstance(msg.data, array.array) \
        else np.asarray(msg.data, float)
    if cols != len(schema) or data.size != rows * cols:
        raise BadInputError(f'window of {data.size} values does not fit {rows} x {cols} '
                            f'with {len(schema)} channels')
    return data.reshape(rows, cols).copy(), schema


# --------------------------------------------------------------- parameters
def parameters_msg(values, names: Sequence[str]) -> Float64MultiArray:
    """Float64MultiArray of named values, names in ``layout.dim[0].label``."""
    values = np.asarray(values, float).ravel()
    if values.size != len(names):
        raise BadInputError(f'{values.size} values for {len(names)} names')
    msg = Float64MultiArray()
    msg.layout.dim = [MultiArrayDimension(label=PARAMETERS_PREFIX + ','.join(names),
                                          size=values.size, stride=values.size)]
    msg.data = _doubles(values)
    return msg


def parameters_from_msg(msg: Float64MultiArray) -> Tuple[np.ndarray, List[str]]:
    """(values, names) of a named Float64MultiArray."""
    if not msg.layout.dim or not msg.layout.dim[0].label.startswith(PARAMETERS_PREFIX):
        raise BadInputError(f'layout label does not start with {PARAMETERS_PREFIX!r}')
    names = msg.layout.dim[0].label[len(PARAMETERS_PREFIX):].split(',')
    values = np.asarray(msg.data, float)
    if values.size != len(names):
        raise BadInputError(f'{values.size} values for {len(names)} names')
    return values, names


# -------------------------------------------------------------- diagnostics
LEVELS = {'ok': DiagnosticStatus.OK, 'warn': DiagnosticStatus.WARN,
          'error': DiagnosticStatus.ERROR, 'stale': DiagnosticStatus.STALE}


def diagnostic_msg(t: float, name: str, hardware_id: str, level: str, message: str,
                   values: Optional[Dict[str, object]] = None) -> DiagnosticArray:
    """DiagnosticArray with one status; ``values`` become KeyValue strings."""
    status = DiagnosticStatus(level=LEVELS[level], name=name, message=message,
                              hardware_id=hardware_id)
    status.values = [KeyValue(key=str(k), value=_fmt(v)) for k, v in (values or {}).items()]
    msg = DiagnosticArray()
    msg.header.stamp = sec_to_stamp(t)
    msg.status = [status]
    return msg


def _fmt(v) -> str:
    if isinstance(v, float):
        return f'{v:.6g}'
    return str(v)


def diagnostic_values(msg: DiagnosticArray, name: str) -> Optional[Tuple[int, str, dict]]:
    """(level, message, values) of the status called ``name``, or None."""
    for st in msg.status:
        if st.name == name:
            level = st.level if isinstance(st.level, int) else int.from_bytes(st.level, 'little')
            return level, st.message, {kv.key: kv.value for kv in st.values}
    return None


# ------------------------------------------- serialized (raw) subscriptions
# The buffer subscribes with ``raw=True`` and decodes the CDR bytes here: about half the CPU
# of rclpy's deserialisation into Python message objects at 1 kHz per topic.
_U32 = struct.Struct('<I')
_STAMP = struct.Struct('<iI')


def _header(raw: bytes) -> Tuple[float, int]:
    """(stamp [s], offset after the header) of a CDR message starting with a std_msgs/Header."""
    if len(raw) < 16 or raw[1] != 1:
        raise BadInputError('not a little-endian CDR message')
    sec, nsec = _STAMP.unpack_from(raw, 4)
    (n,) = _U32.unpack_from(raw, 12)
    return sec + nsec * 1e-9, 16 + n


def _align(off: int, k: int) -> int:
    rel = off - 4
    return off + (-rel) % k


def _doubles_at(raw: bytes, off: int, count: int) -> Tuple[np.ndarray, int]:
    off = _align(off, 8)
    end = off + 8 * count
    if end > len(raw):
        raise BadInputError('truncated CDR message')
    return np.frombuffer(raw, '<f8', count, off), end


def _sequence(raw: bytes, off: int) -> Tuple[np.ndarray, int]:
    off = _align(off, 4)
    (n,) = _U32.unpack_from(raw, off)
    if n == 0:
        return np.empty(0), off + 4
    return _doubles_at(raw, off + 4, n)


_names_cache: Dict[bytes, Tuple[Tuple[str, ...], int]] = {}


def decode_joint_state(raw: bytes):
    """(stamp [s], names, positions, velocities, efforts) of a serialized JointState."""
    t, off = _header(raw)
    off = _align(off, 4)
    (count,) = _U32.unpack_from(raw, off)
    start = off
    off += 4
    cached = None
    for key, value in _names_cache.items():
        if raw.startswith(key, start):
            cached = value
            break
    if cached is not None:
        names, off = cached[0], start + cached[1]
    else:
        names = []
        for _ in range(count):
            off = _align(off, 4)
            (n,) = _U32.unpack_from(raw, off)
            names.append(raw[off + 4:off + 3 + n].decode())
            off += 4 + n
        names = tuple(names)
        if len(_names_cache) < 8:
            _names_cache[bytes(raw[start:off])] = (names, off - start)
    pos, off = _sequence(raw, off)
    vel, off = _sequence(raw, off)
    eff, off = _sequence(raw, off)
    return t, names, pos, vel, eff


def decode_wrench(raw: bytes):
    """(stamp [s], [fx fy fz tx ty tz]) of a serialized WrenchStamped."""
    t, off = _header(raw)
    values, _ = _doubles_at(raw, off, 6)
    return t, values


def decode_imu(raw: bytes):
    """(stamp [s], quaternion [x y z w], angular velocity, specific force) of a serialized Imu."""
    t, off = _header(raw)
    values, _ = _doubles_at(raw, off, 4 + 9 + 3 + 9 + 3)
    return t, values[0:4], values[13:16], values[25:28]


class RawBatch:
    """Decodes a batch of serialized messages of one type with numpy (no per-message Python).

    Messages of one topic normally share one byte layout (same frame id, same joint names and
    array lengths): the layout is found from the first message of each length, then every
    message of that layout is read as one structured array. Messages whose layout differs
    (other names, missing velocity) are decoded one by one.

    Args:
        kind: 'joint_state', 'imu' or 'wrench'.
    """

    def __init__(self, kind: str):
        if kind not in ('joint_state', 'imu', 'wrench'):
            raise BadInputError(f'no raw decoder for {kind!r}')
        self.kind = kind
        self._layouts: Dict[Tuple[int, bytes], Tuple[np.dtype, tuple]] = {}

    def _layout(self, raw: bytes):
        """(structured dtype, extra) for messages shaped like ``raw``, or None."""
        _, off = _header(raw)
        if self.kind == 'wrench':
            start = _align(off, 8)
            fields = [('v', '<f8', (6,))]
            offsets = [start]
            key_end = off
            extra = ()
        elif self.kind == 'imu':
            start = _align(off, 8)
            fields = [('v', '<f8', (28,))]
            offsets = [start]
            key_end = off
            extra = ()
        else:
            t, names, pos, vel, eff = decode_joint_state(raw)
            n = len(names)
            if len(pos) != n or len(vel) not in (0, n) or len(eff) not in (0, n):
                return None
            key_end = _align(off, 4)
            (count,) = _U32.unpack_from(raw, key_end)
            o = key_end + 4
            for _ in range(count):
                o = _align(o, 4)
                (ln,) = _U32.unpack_from(raw, o)
                o += 4 + ln
            key_end = o
            fields, offsets = [], []
            for name, arr in (('p', pos), ('v', vel), ('e', eff)):
                o = _align(o, 4) + 4
                if len(arr):
                    o = _align(o, 8)
                    fields.append((name, '<f8', (n,)))
                    offsets.append(o)
                    o += 8 * n
            extra = (names, len(vel) > 0, len(eff) > 0)
        dtype = np.dtype({'names': ['sec', 'nsec'] + [f[0] for f in fields],
                          'formats': ['<i4', '<u4'] + [(f[1], f[2]) for f in fields],
                          'offsets': [4, 8] + offsets, 'itemsize': len(raw)})
        return dtype, extra, key_end

    def decode(self, raws: List[bytes]):
        """Decode a list of serialized messages.

        Returns:
            A list of groups ``(stamps [s] (n,), values)``: for 'wrench' values (n, 6); for
            'imu' (quat (n, 4), gyro (n, 3), acc (n, 3)); for 'joint_state'
            (names, positions (n, k), velocities (n, k) or empty, efforts or empty).
            Malformed messages raise BadInputError only if every message is malformed; the
            others are counted in :attr:`bad`.
        """
        self.bad = 0
        groups: Dict[Tuple[int, bytes], List[bytes]] = {}
        for raw in raws:
            key = (len(raw), bytes(raw[12:76]) if self.kind == 'joint_state' else b'')
            groups.setdefault(key, []).append(raw)
        out = []
        for key, members in groups.items():
            layout = self._layouts.get(key)
            if layout is None:
                try:
                    layout = self._layout(members[0])
                except (BadInputError, struct.error, UnicodeDecodeError, IndexError):
                    layout = None
                if layout is not None and len(self._layouts) < 64:
                    self._layouts[key] = layout
            if layout is None or (self.kind == 'joint_state' and not all(
                    m[12:layout[2]] == members[0][12:layout[2]] for m in members[1:])):
                out += self._one_by_one(members)
                continue
            dtype, extra, _ = layout
            arr = np.frombuffer(b''.join(members), dtype=dtype)
            stamps = arr['sec'] + arr['nsec'] * 1e-9
            if self.kind == 'wrench':
                out.append((stamps, np.array(arr['v'])))
            elif self.kind == 'imu':
                v = arr['v']
                out.append((stamps, (np.array(v[:, 0:4]), np.array(v[:, 13:16]),
                                     np.array(v[:, 25:28]))))
            else:
                names, has_v, has_e = extra
                empty = np.empty((len(members), 0))
                out.append((stamps, (names, np.array(arr['p']),
                                     np.array(arr['v']) if has_v else empty,
                                     np.array(arr['e']) if has_e else empty)))
        return out

    def _one_by_one(self, members):
        out = []
        for raw in members:
            try:
                if self.kind == 'wrench':
                    t, v = decode_wrench(raw)
                    out.append((np.array([t]), v[None, :]))
                elif self.kind == 'imu':
                    t, qq, g, a = decode_imu(raw)
                    out.append((np.array([t]), (qq[None], g[None], a[None])))
                else:
                    t, names, p, v, e = decode_joint_state(raw)
                    out.append((np.array([t]), (names, p[None], v[None], e[None])))
            except (BadInputError, struct.error, UnicodeDecodeError, IndexError, ValueError):
                self.bad += 1
        return out


# ------------------------------------------------------------------ markers
def markers_msg(t: float, frame_id: str, scene, offset, zmp_measured, zmp_predicted):
    """visualization_msgs/MarkerArray of a :class:`legid_ros.core.pipeline_viz.Scene`.

    Markers (namespace 'legid'): 0 support polygon (line strip), 1 measured ZMP (green
    sphere), 2 predicted ZMP (red sphere), 3 whole-body CoM (blue sphere), 4 CoM ground
    projection, 100+ link COMs (orange spheres, diameter ~ cube root of the mass).
    ``offset`` [m] shifts every position (support-sole frame -> world).
    """
    from visualization_msgs.msg import Marker, MarkerArray

    stamp = sec_to_stamp(t)
    off = np.asarray(offset, float)
    out = MarkerArray()

    def marker(mid, kind, rgba, scale):
        m = Marker()
        m.header.stamp = stamp
        m.header.frame_id = frame_id
        m.ns = 'legid'
        m.id = mid
        m.type = kind
        m.action = Marker.ADD
        m.pose.orientation.w = 1.0
        m.scale.x, m.scale.y, m.scale.z = scale
        m.color.r, m.color.g, m.color.b, m.color.a = rgba
        return m

    def point(p):
        return Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))

    poly = marker(0, Marker.LINE_STRIP, (1.0, 1.0, 0.2, 1.0), (0.004, 0.0, 0.0))
    if len(scene.polygon):
        pts = list(scene.polygon) + [scene.polygon[0]]
        poly.points = [point(p + off + [0, 0, 0.001]) for p in pts]
    out.markers.append(poly)
    for mid, zmp, rgba in ((1, zmp_measured, (0.1, 0.8, 0.1, 1.0)),
                           (2, zmp_predicted, (0.9, 0.1, 0.1, 1.0))):
        m = marker(mid, Marker.SPHERE, rgba, (0.02, 0.02, 0.02))
        if zmp is not None and np.all(np.isfinite(zmp)):
            m.pose.position = point(np.array([zmp[0], zmp[1], 0.0]) + off)
        else:
            m.action = Marker.DELETE
        out.markers.append(m)
    com = marker(3, Marker.SPHERE, (0.1, 0.3, 1.0, 1.0), (0.04, 0.04, 0.04))
    com.pose.position = point(scene.com + off)
    out.markers.append(com)
    proj = marker(4, Marker.CYLINDER, (0.1, 0.3, 1.0, 0.6), (0.02, 0.02, 0.002))
    proj.pose.position = point(np.array([scene.com[0], scene.com[1], 0.0]) + off)
    out.markers.append(proj)
    for i, (c, mass) in enumerate(zip(scene.link_coms, scene.link_masses)):
        d = 0.03 * max(float(mass), 0.0) ** (1.0 / 3.0)
        m = marker(100 + i, Marker.SPHERE, (1.0, 0.55, 0.0, 0.8), (d, d, d))
        m.pose.position = point(c + off)
        out.markers.append(m)
    return out


class RawPacker:
    """Serializes many messages of one fixed layout at once (numpy), for 1 kHz publishing.

    A template message is serialized once by rclpy; :meth:`pack` writes the stamps and float
    fields of N messages into copies of it. ``Publisher.publish(bytes)`` sends them as they are.

    Args:
        kind: 'joint_state', 'imu' or 'wrench'.
        template: A message of that type with the final frame id (and joint names).
    """

    def __init__(self, kind: str, template):
        from rclpy.serialization import serialize_message

        raw = serialize_message(template)
        layout = RawBatch(kind)._layout(raw)
        if layout is None:
            raise BadInputError(f'no fixed layout for this {kind} template')
        self.kind = kind
        self.dtype = layout[0]
        self.template = np.frombuffer(raw, np.uint8)

    def pack(self, stamps: np.ndarray, **fields) -> np.ndarray:
        """(N, bytes) serialized messages; fields: wrench ``v`` (N, 6); imu ``quat``, ``gyro``,
        ``acc``; joint_state ``p``, ``v``, ``e`` (N, nj)."""
        n = len(stamps)
        rows = np.tile(self.template, (n, 1))
        arr = rows.view(self.dtype).reshape(n)
        ns = np.round(np.asarray(stamps, float) * 1e9).astype(np.int64)
        arr['sec'], arr['nsec'] = np.divmod(ns, 10 ** 9)
        if self.kind == 'imu':
            v = np.zeros((n, 28))
            v[:, 0:4], v[:, 13:16], v[:, 25:28] = fields['quat'], fields['gyro'], fields['acc']
            arr['v'] = v
        else:
            for key, value in fields.items():
                arr[key] = value
        return rows
