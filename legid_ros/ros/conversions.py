"""Messages <-> numpy arrays for the buffer, estimator, sim and replay nodes.

The only place (with other ``conversions_<x>.py`` modules) where message fields are read or
written. Layout conventions of ``std_msgs/Float64MultiArray``:

- window: ``dim[0]`` label ``samples`` (size = rows), ``dim[1]`` label
  ``channels:<name>,<name>,...`` (size = channels); row-major data.
- parameters / ground truth: one dim labelled ``parameters:<name>,<name>,...``.
"""

from __future__ import annotations

import array
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import Point, PointStamped, WrenchStamped
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension

from legid_ros.core.buffer.sensor_buffer import ChannelSchema
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


def transform_msg(t: float, parent: str, child: str, pose):
    """geometry_msgs/TransformStamped from a pose ``[x, y, z, qx, qy, qz, qw]`` [m]."""
    from geometry_msgs.msg import TransformStamped

    msg = TransformStamped()
    msg.header.stamp = sec_to_stamp(t)
    msg.header.frame_id = parent
    msg.child_frame_id = child
    tr, rot = msg.transform.translation, msg.transform.rotation
    tr.x, tr.y, tr.z, rot.x, rot.y, rot.z, rot.w = (float(v) for v in pose)
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


# ------------------------------------------------------------------ markers
def markers_msg(t: float, frame_id: str, scene, offset, zmp_measured, zmp_predicted):
    """visualization_msgs/MarkerArray of a :class:`legid_ros.core.pipeline.scene.Scene`.

    Markers (namespace 'legid'): 0 support polygon (line strip), 1 measured ZMP (green
    sphere), 2 predicted ZMP (red sphere), 3 whole-body CoM (blue sphere), 4 CoM ground
    projection, 100+ link COMs (orange spheres, diameter ~ cube root of the mass), 200+ their
    uncertainty (translucent grey spheres, diameter twice the COM standard deviation, when the
    scene has one).
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
        std = scene.link_com_std[i] if scene.link_com_std is not None else np.nan
        if np.isfinite(std):
            d = float(np.clip(2.0 * std, 0.002, 0.5))  # [m], drawn between 2 mm and 0.5 m
            u = marker(200 + i, Marker.SPHERE, (0.6, 0.6, 0.6, 0.25), (d, d, d))
            u.pose.position = point(c + off)
            out.markers.append(u)
    return out


from legid_ros.ros.conversions_raw import (RawBatch, RawPacker, decode_imu,  # noqa: E402,F401
                                          decode_joint_state, decode_wrench)
