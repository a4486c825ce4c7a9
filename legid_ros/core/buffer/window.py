"""Reading the buffer's windows back into named arrays (the estimator side of the schema)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Dict, List, Optional

import numpy as np

from legid_ros.core.buffer.sensor_buffer import (ANKLE_FT_PREFIX, IMU_CHANNELS, WRENCH_AXES,
                                                 ChannelSchema)
from legid_ros.core.errors import BadInputError
from legid_ros.core.recording import Recording


@dataclass
class WindowData:
    """Named arrays of one window (rows = samples).

    Attributes:
        t: Stamps [s] (n,).
        ok: Whether every stream was fresh at the row (n,) bool.
        joint_names: Joint names (column order of q, qd, qdd, tau).
        q, qd, qdd, tau: Joint positions [rad], causally filtered velocities [rad/s] and
            accelerations [rad/s^2], efforts [N.m] (NaN if not measured), (n, nj).
        imu_quat, imu_gyro, imu_acc: IMU orientation [x y z w], rate [rad/s], specific force.
        feet: Foot names.
        foot_wrench: Per foot (n, 6) [N, N.m] in the F/T frame (wrench mode), else empty.
        fsr: Per foot (n, k) sole-sensor forces [N] (fsr mode), else empty.
        zmp_world: Measured ZMP in the world (unfiltered) [m] (n, 2).
        zmp_filtered: Measured ZMP after the causal lag (world) [m] (n, 2).
        zmp_support: Measured ZMP in the support-sole frame (world minus the anchor, turned
            by minus the anchor's heading ``anchor.yaw``; 0 in windows without it) [m].
        anchor: Support sole centre in the world [m] (n, 2).
        heading: Support sole heading in the world [rad] (n,) (0 in windows without
            ``anchor.yaw``); a support-frame point ``p`` is ``anchor + Rz(heading) p`` in the
            world (:func:`support_to_world`).
        fz: Total measured normal force [N] (n,).
        support: Support foot name per row (n,) object array.
        contact: Per foot contact flag (n, nf).
        base: Estimated base pose [x y z qx qy qz qw] in the world (n, 7).
        ankle_ft: Per foot whose window carries it, the raw ankle F/T reading (leg-on-foot
            wrench in its F/T frame) (n, 6) [N, N.m], NaN where not fresh; else empty.
    """

    t: np.ndarray
    ok: np.ndarray
    joint_names: List[str]
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    imu_quat: np.ndarray
    imu_gyro: np.ndarray
    imu_acc: np.ndarray
    feet: List[str]
    foot_wrench: Dict[str, np.ndarray] = field(default_factory=dict)
    fsr: Dict[str, np.ndarray] = field(default_factory=dict)
    zmp_world: Optional[np.ndarray] = None
    zmp_filtered: Optional[np.ndarray] = None
    zmp_support: Optional[np.ndarray] = None
    anchor: Optional[np.ndarray] = None
    heading: Optional[np.ndarray] = None
    fz: Optional[np.ndarray] = None
    support: Optional[np.ndarray] = None
    contact: Optional[np.ndarray] = None
    base: Optional[np.ndarray] = None
    ankle_ft: Dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def n(self) -> int:
        """Number of rows."""
        return len(self.t)

    def take(self, idx) -> 'WindowData':
        """Rows ``idx`` (slice or index array) of every array."""
        return self._per_row(lambda name, x: x[idx])

    def same_layout(self, other: 'WindowData') -> bool:
        """Whether ``other`` has this window's channels (joints, feet, force streams)."""
        return (all(getattr(self, k) == getattr(other, k) for k in _SHARED)
                and all(getattr(self, k).keys() == getattr(other, k).keys() for k in _DICTS)
                and all((getattr(self, f.name) is None) == (getattr(other, f.name) is None)
                        for f in fields(self)))

    def extended(self, other: 'WindowData') -> 'WindowData':
        """These rows followed by the rows of ``other`` stamped after the last of them (the
        next of overlapping windows: each row once). Both must have :meth:`same_layout`."""
        new = other.take(slice(int(np.searchsorted(other.t, self.t[-1], 'right')), None)) \
            if self.n else other
        if new.n == 0:
            return self
        return self._per_row(lambda name, x: np.concatenate([x, _array(new, name)]))

    def _per_row(self, fn) -> 'WindowData':
        """A window of ``fn(name, array)`` for every per-row array (``name`` a field, or
        (field, key) in the per-foot dicts); names and None fields kept."""
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name in _SHARED or v is None:
                out[f.name] = v
            elif f.name in _DICTS:
                out[f.name] = {k: fn((f.name, k), x) for k, x in v.items()}
            else:
                out[f.name] = fn(f.name, v)
        return WindowData(**out)


_SHARED = ('joint_names', 'feet')  # the same for every row
_DICTS = ('foot_wrench', 'fsr', 'ankle_ft')  # per foot (n, k) arrays


def _array(w: WindowData, name):
    """The per-row array ``name`` of ``w`` (a field, or (field, key) of a per-foot dict)."""
    return getattr(w, name[0])[name[1]] if isinstance(name, tuple) else getattr(w, name)


def unpack_window(window: np.ndarray, schema: ChannelSchema) -> WindowData:
    """Split a (rows, channels) window into :class:`WindowData`."""
    window = np.asarray(window, float)
    if window.ndim != 2 or window.shape[1] != len(schema):
        raise BadInputError(f'window of shape {window.shape} does not match {len(schema)} '
                            f'channels')

    def cols(names):
        return window[:, [schema.index(n) for n in names]]
    joints = schema.suffixes('q.')
    feet = schema.suffixes('contact.')
    imu = cols(IMU_CHANNELS)
    wrench, fsr = {}, {}
    for foot in feet:
        if schema.columns(f'wrench.{foot}.'):
            wrench[foot] = cols([f'wrench.{foot}.{a}' for a in WRENCH_AXES])
        if schema.columns(f'fsr.{foot}.'):
            fsr[foot] = window[:, schema.columns(f'fsr.{foot}.')]
    ankle = {foot: cols([f'{ANKLE_FT_PREFIX}.{foot}.{a}' for a in WRENCH_AXES])
             for foot in feet if schema.columns(f'{ANKLE_FT_PREFIX}.{foot}.')}
    zmp = cols(['zmp_raw.x', 'zmp_raw.y'])
    anchor = cols(['anchor.x', 'anchor.y'])
    heading = (window[:, schema.index('anchor.yaw')] if schema.columns('anchor.yaw')
               else np.zeros(len(window)))
    c, s = np.cos(heading), np.sin(heading)
    d = zmp - anchor
    zmp_support = np.column_stack([c * d[:, 0] + s * d[:, 1], -s * d[:, 0] + c * d[:, 1]])
    sup_idx = window[:, schema.index('support')]
    support = np.array([feet[int(i)] if np.isfinite(i) and 0 <= i < len(feet) else feet[0]
                        for i in sup_idx], dtype=object)
    return WindowData(
        t=window[:, 0].copy(), ok=window[:, schema.index('ok')] > 0.5, joint_names=joints,
        q=cols([f'q.{j}' for j in joints]), qd=cols([f'qd.{j}' for j in joints]),
        qdd=cols([f'qdd.{j}' for j in joints]), tau=cols([f'tau.{j}' for j in joints]),
        imu_quat=imu[:, :4], imu_gyro=imu[:, 4:7], imu_acc=imu[:, 7:10], feet=feet,
        foot_wrench=wrench, fsr=fsr, zmp_world=zmp, zmp_filtered=cols(['zmp.x', 'zmp.y']),
        zmp_support=zmp_support, anchor=anchor, heading=heading,
        fz=window[:, schema.index('fz')].copy(), support=support,
        contact=cols([f'contact.{f}' for f in feet]),
        base=cols(['base.x', 'base.y', 'base.z', 'base.qx', 'base.qy', 'base.qz', 'base.qw']),
        ankle_ft=ankle)


def support_to_world(points: np.ndarray, anchor: np.ndarray, heading) -> np.ndarray:
    """Points of the support-sole frame (n, 2|3) [m] in the buffer's world: ``anchor + Rz(heading)
    p`` (z unchanged), with ``anchor`` (n|1, 2) [m] and ``heading`` (n,) or scalar [rad]."""
    p = np.atleast_2d(np.asarray(points, float))
    c, s = np.cos(heading), np.sin(heading)
    out = p.copy()
    out[:, 0] = c * p[:, 0] - s * p[:, 1] + np.asarray(anchor)[..., 0]
    out[:, 1] = s * p[:, 0] + c * p[:, 1] + np.asarray(anchor)[..., 1]
    return out


def window_to_recording(data: WindowData, robot: str = 'biped') -> Recording:
    """A :class:`Recording` of a window's sensor columns (for the batch methods)."""
    return Recording(robot=robot, t=data.t, joint_names=list(data.joint_names), q=data.q,
                     qd=data.qd, tau=data.tau, imu_quat=data.imu_quat, imu_gyro=data.imu_gyro,
                     imu_acc=data.imu_acc, foot_wrench=dict(data.foot_wrench),
                     fsr=dict(data.fsr), ankle_ft=dict(data.ankle_ft),
                     meta={'source': 'legid buffer window'})
