"""Turn decoded bag topics into a Recording aligned on the ``/joint_states`` clock, in the
internal convention (:func:`legid_ros.core.conventions.convert.to_internal`).

Streams are aligned on their header stamps. A topic whose header stamps are all 0 or on
another clock than the joint states' (the rule of :mod:`legid_ros.core.conventions.stamps`)
is put on the joint states' clock through the bag's receive times instead (its receive time
plus the joint states' median stamp-to-receive offset), with one warning line per topic; the
names are in the Recording's ``meta['stamps_from_receive_time']``.
"""

from __future__ import annotations

import json
import logging
from typing import Dict, List, Optional

import numpy as np

from legid_ros.core.conventions.convert import to_internal
from legid_ros.core.conventions.stamps import clock_offset_s, describe_offset
from legid_ros.core.errors import BadInputError
from legid_ros.core.recording import Recording
from legid_ros.core.robot import Robot

GT_TOPIC = '/legid/sim/ground_truth'
CAD_TOPIC = '/legid/sim/cad_parameters'
ZMP_TOPIC = '/legid/sim/zmp'
POSE_TOPIC = '/legid/sim/base_pose'
META_TOPIC = '/legid/sim/meta'
LOG = logging.getLogger(__name__)


def stamp_offset_ns(topic: dict) -> Optional[float]:
    """Median header stamp minus receive time of a decoded topic [ns]; None when its stamps
    are all 0 (not stamped) or it has none."""
    stamps = np.asarray(topic.get('stamp', ()), np.int64)
    if stamps.size == 0 or not np.any(stamps != 0):
        return None
    return float(np.median(stamps - np.asarray(topic['log'], np.int64)))


def _clock(topic: dict, ref_offset_ns: Optional[float] = None, name: str = '',
           retimed: Optional[List[str]] = None):
    """(sorted unique stamps [ns], matching value rows) of a decoded topic.

    ``ref_offset_ns``: the joint states' :func:`stamp_offset_ns`; a topic not stamped, or
    stamped on another clock, gets its receive times plus that offset (and ``name`` is
    appended to ``retimed``). None: the topic is the reference (not stamped: receive times).
    """
    stamps = topic['stamp']
    own = stamp_offset_ns(topic)
    if ref_offset_ns is None:  # the reference: its receive times if it is not stamped
        if own is None:
            stamps = topic['log']
    else:
        off = clock_offset_s(None if own is None else own * 1e-9, ref_offset_ns * 1e-9)
        if off is not None:
            stamps = topic['log'] + int(round(ref_offset_ns))
            if retimed is not None:
                retimed.append(name)
                LOG.warning('%s: header stamps %s: aligned by receive time instead (the live '
                            'buffer needs every stream stamped from one clock)', name,
                            describe_offset(off))
    order = np.argsort(stamps, kind='stable')
    stamps, values = stamps[order], topic['values'][order]
    keep = np.concatenate([[True], np.diff(stamps) > 0])
    return stamps[keep], values[keep]


def _align_quat(quat: np.ndarray) -> np.ndarray:
    """Flip quaternion signs so consecutive samples lie in the same hemisphere."""
    quat = quat.copy()
    flips = np.cumsum(np.concatenate([[0], np.sum(quat[1:] * quat[:-1], axis=1) < 0])) % 2
    quat[flips == 1] *= -1
    return quat


def resample(topic: Optional[dict], ref_ns: np.ndarray, width: int,
             quat_cols: Optional[slice] = None, ref_offset_ns: Optional[float] = None,
             name: str = '', retimed: Optional[List[str]] = None) -> Optional[np.ndarray]:
    """Values of a topic at the reference stamps: linear interpolation, held at the ends.

    Quaternion columns are interpolated linearly after sign alignment, then normalised.
    ``ref_offset_ns``, ``name``, ``retimed``: see :func:`_clock`. Returns None when the topic
    is absent or empty.
    """
    if topic is None or len(topic.get('stamp', ())) == 0:
        return None
    stamps, values = _clock(topic, ref_offset_ns, name, retimed)
    if values.shape[1] < width:
        raise BadInputError(f'topic has {values.shape[1]} values per message, need {width}')
    values = values[:, :width]
    if quat_cols is not None:
        values = values.copy()
        values[:, quat_cols] = _align_quat(values[:, quat_cols])
    if stamps.shape == ref_ns.shape and np.array_equal(stamps, ref_ns):
        out = values.copy()
    else:
        x = (stamps - ref_ns[0]) * 1e-9
        xr = (ref_ns - ref_ns[0]) * 1e-9
        out = np.column_stack([np.interp(xr, x, values[:, i]) for i in range(width)])
        if quat_cols is not None:
            qv = out[:, quat_cols]
            out[:, quat_cols] = qv / np.linalg.norm(qv, axis=1, keepdims=True)
    return out


def _force_topic(data: Dict[str, dict], topic: str) -> Optional[dict]:
    """A force sensor's decoded topic: under the description's name (any name, with or
    without the leading slash), else the older bags' ``<prefix>/<k>`` for ``<prefix>/sensor_<k>``.
    """
    bare = topic.lstrip('/')
    for name in ('/' + bare, bare, '/' + bare.replace('/sensor_', '/')):
        if name in data:
            return data[name]
    return None


def _parameters(topic: Optional[dict]):
    """(vector, names) from a Float64MultiArray parameter topic, or (None, [])."""
    if not topic or not topic.get('messages'):
        return None, []
    msg = topic['messages'][0]
    names = []
    if msg.layout.dim and msg.layout.dim[0].label.startswith('parameters:'):
        names = [n for n in msg.layout.dim[0].label[len('parameters:'):].split(',') if n]
    return np.array(msg.data, float), names


def assemble(data: Dict[str, dict], robot: Robot, feet: Dict[str, dict], path) -> Recording:
    """Recording from decoded topics (see :func:`legid_ros.bag.recording_io.read_bag`)."""
    js = data['/joint_states']
    if len(js.get('stamp', ())) == 0:
        raise BadInputError(f'bag {path} has no joint_states messages')
    ref, js_values = _clock(js)
    off = stamp_offset_ns(js)
    off = 0.0 if off is None else off  # joint states not stamped: their receive times
    retimed: List[str] = []
    names = js['names']
    wanted = robot.actuated_joint_names
    missing = [j for j in wanted if j not in names]
    if missing:
        raise BadInputError(f'bag {path}: joint_states lacks joints of robot {robot.name!r}: '
                            + ', '.join(missing))
    nb = len(names)
    cols = np.array([names.index(j) for j in wanted])
    n = len(ref)
    nan = np.full((n, 3), np.nan)
    imu = resample(data.get(robot.imu.topic), ref, 10, quat_cols=slice(0, 4),
                   ref_offset_ns=off, name=robot.imu.topic, retimed=retimed)
    if imu is None:
        imu = np.column_stack([np.full((n, 4), np.nan), nan, nan])
    foot_wrench, fsr, ankle_ft = {}, {}, {}
    for foot, tp in feet.items():
        w = resample(data.get(tp['wrench']), ref, 6, ref_offset_ns=off, name=tp['wrench'],
                     retimed=retimed)
        if w is not None:
            foot_wrench[foot] = w
        raw = resample(data.get(tp['ankle_ft']), ref, 6, ref_offset_ns=off,
                       name=tp.get('ankle_ft') or '', retimed=retimed) \
            if tp.get('ankle_ft') else None
        if raw is not None:
            ankle_ft[foot] = raw
        cols_f = [resample(_force_topic(data, topic), ref, 3, ref_offset_ns=off, name=topic,
                           retimed=retimed) for topic in tp['fsr']]
        if cols_f and all(c is not None for c in cols_f):
            fsr[foot] = np.column_stack([c[:, 2] for c in cols_f])
    zmp = resample(data.get(ZMP_TOPIC), ref, 2, ref_offset_ns=off)
    pose = resample(data.get(POSE_TOPIC), ref, 7, quat_cols=slice(3, 7), ref_offset_ns=off)
    pi_true, names_true = _parameters(data.get(GT_TOPIC))
    pi_cad, names_cad = _parameters(data.get(CAD_TOPIC))
    meta = {}
    meta_topic = data.get(META_TOPIC)
    if meta_topic and meta_topic.get('messages'):
        try:
            meta = dict(json.loads(meta_topic['messages'][0].data))
        except (ValueError, TypeError):
            meta = {}
    meta.update(source=str(path), stamp0_ns=int(ref[0]))
    if retimed:
        meta['stamps_from_receive_time'] = retimed
    return to_internal(Recording(
        robot=robot.name, t=(ref - ref[0]) * 1e-9, joint_names=list(wanted),
        q=js_values[:, cols], qd=js_values[:, nb + cols], tau=js_values[:, 2 * nb + cols],
        imu_quat=imu[:, :4], imu_gyro=imu[:, 4:7], imu_acc=imu[:, 7:10],
        foot_wrench=foot_wrench, fsr=fsr, ankle_ft=ankle_ft, zmp_true=zmp, base_pose_true=pose,
        pi_true=pi_true, pi_cad=pi_cad, param_names=names_true or names_cad, meta=meta), robot)
