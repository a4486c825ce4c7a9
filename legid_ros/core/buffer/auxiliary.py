"""The buffer's auxiliary inputs: IMU, foot wrench, sole sensor and ankle F/T samples.

Every stream other than the joint states (the clock) is added here, one sample or a batch at a
time, to its time-sorted :class:`legid_ros.core.buffer.stream.Stream`; bad samples are counted,
never raised. IMU samples are converted from the description's mounting rotation and heading to
the internal convention as they are added (:func:`legid_ros.core.conventions.convert.
imu_to_internal`). :class:`AuxiliaryInput` is a base of :class:`legid_ros.core.buffer.
sensor_buffer.Buffer`, which aligns these streams on the joint-state clock.
"""

from __future__ import annotations

import math

import numpy as np

from legid_ros.core.buffer.stream import Stream
from legid_ros.core.conventions.convert import imu_to_internal
from legid_ros.core.conventions.stamps import clock_offset_s


class AuxiliaryInput:
    """Methods adding the auxiliary streams' samples (a base of ``Buffer``).

    Uses the buffer's ``cfg`` (settings), ``imu`` (the description's IMU stream or None),
    ``_imu_t0`` (first IMU stamp converted [s]), its streams ``_imu``, ``_force`` (per foot, or
    per ``'<foot>.<k>'`` sole sensor) and ``_ankle`` (per foot), and ``_event(kind)`` (counts
    an abnormal input in ``events``); with a wall ``_clock`` (a live node), ``_offered``,
    ``_fresh`` and ``stamp_offsets`` (:meth:`_judge_clocks`).
    """

    def _note_offer(self, what: str, stamp: float) -> None:
        """Remember a live stream's newest header stamp [s] and that minus its arrival
        time [s]."""
        if self._clock is not None and math.isfinite(stamp):
            self._offered[what] = (stamp, stamp - self._clock())
            self._fresh.add(what)

    def _judge_clocks(self) -> None:
        """Per stream heard since the last pass, whether its stamps are on the joint states'
        clock (:mod:`legid_ros.core.conventions.stamps`): if not, its offset [s] goes into
        ``stamp_offsets`` (``inf`` when its stamp is 0: not stamped) and the event
        ``stamps_apart_<stream>`` is counted (once per pass; its rows are stale: they cannot
        be aligned)."""
        if 'joint_states' not in self._offered:
            return
        ref = self._offered['joint_states'][1]
        for what in self._fresh - {'joint_states'}:
            stamp, offset = self._offered[what]
            off = clock_offset_s(offset, ref)
            if off is None:
                self.stamp_offsets.pop(what, None)
            else:
                self.stamp_offsets[what] = math.inf if stamp == 0.0 else off
                self._event(f'stamps_apart_{what}')
        self._fresh.clear()

    def _add_aux_batch(self, stream: Stream, stamps: np.ndarray, values: np.ndarray,
                       what: str) -> int:
        if len(stamps):
            self._note_offer(what, float(stamps[-1]))
        if (len(stamps) and np.isfinite(values).all() and np.isfinite(stamps).all()
                and np.all(np.diff(stamps) > 0) and stamps[0] > stream.newest()):
            stream.t.extend(stamps.tolist())
            stream.v.extend(values)
            if len(stream.t) > 2 * stream.history:
                del stream.t[:-stream.history]
                del stream.v[:-stream.history]
            return len(stamps)
        return sum(self._add_aux(stream, float(t), tuple(v), what)
                   for t, v in zip(stamps, values))

    def add_imus(self, stamps, quat_xyzw, gyro, acc) -> int:
        """Batch of IMU samples (see :meth:`add_imu`), arrays (n, 4), (n, 3), (n, 3)."""
        quat_xyzw, gyro, acc = self._imu_internal(quat_xyzw, gyro, acc, stamps)
        return self._add_aux_batch(self._imu, np.asarray(stamps, float),
                                   np.hstack([quat_xyzw, gyro, acc]), 'imu')

    def add_wrenches(self, foot: str, stamps, wrenches) -> int:
        """Batch of foot wrenches (see :meth:`add_wrench`), (n, 6)."""
        stream = self._force.get(foot) if self.cfg.force_mode == 'wrench' else None
        if stream is None:
            self._event('unexpected_wrench')
            return 0
        return self._add_aux_batch(stream, np.asarray(stamps, float), np.asarray(wrenches),
                                   f'wrench_{foot}')

    def add_ankle_fts(self, foot: str, stamps, wrenches) -> int:
        """Batch of raw ankle F/T readings (see :meth:`add_ankle_ft`), (n, 6)."""
        stream = self._ankle.get(foot)
        if stream is None:
            self._event('unexpected_ankle_ft')
            return 0
        return self._add_aux_batch(stream, np.asarray(stamps, float), np.asarray(wrenches),
                                   f'ankle_ft_{foot}')

    def add_fsrs(self, foot: str, k: int, stamps, forces_n) -> int:
        """Batch of normal forces [N] of sole sensor ``k`` (see :meth:`add_fsr`)."""
        stream = self._force.get(f'{foot}.{k}')
        if stream is None:
            self._event('unexpected_fsr')
            return 0
        return self._add_aux_batch(stream, np.asarray(stamps, float),
                                   np.asarray(forces_n, float).reshape(-1, 1), f'fsr_{foot}')

    def _add_aux(self, stream: Stream, stamp: float, values, what: str) -> bool:
        self._note_offer(what, stamp)
        if len(values) != stream.width:
            self._event(f'bad_length_{what}')
            return False
        if stamp < stream.newest() - self.cfg.jump_back_s:
            self._event(f'clock_jump_back_{what}')
            stream.reset()
        event = stream.add(stamp, values)
        if event:
            self._event(f'{event}_{what}')
        return event in ('', 'out_of_order_stamp')

    def _imu_internal(self, quat, gyro, acc, stamps):
        """IMU arrays (n, 4), (n, 3), (n, 3) at ``stamps`` [s] in the internal convention
        (unchanged when no conversion is set or their shapes are wrong: the length check
        counts those); a drifting heading counts from the first IMU stamp."""
        if self.imu is None:
            return quat, gyro, acc
        try:
            quat, gyro, acc = (np.asarray(x, float) for x in (quat, gyro, acc))
        except (TypeError, ValueError):
            return quat, gyro, acc
        if not (quat.ndim == gyro.ndim == acc.ndim == 2 and quat.shape[1] == 4
                and gyro.shape[1] == acc.shape[1] == 3):
            return quat, gyro, acc
        t_s = None
        if self.imu.heading_drift_rad_s:
            stamps = np.asarray(stamps, float).reshape(-1)
            if self._imu_t0 is None and stamps.size and np.isfinite(stamps[0]):
                self._imu_t0 = float(stamps[0])
            t_s = stamps - (self._imu_t0 if self._imu_t0 is not None else 0.0)
            t_s = np.where(np.isfinite(t_s), t_s, 0.0) if t_s.size == len(quat) else None
        return imu_to_internal(quat, gyro, acc, self.imu, canonical=False, t_s=t_s)

    def add_imu(self, stamp: float, quat_xyzw, gyro, acc) -> bool:
        """Add an IMU sample: orientation [x, y, z, w], rate [rad/s], specific force [m/s^2]
        (in the sensor's conventions: converted with ``imu``)."""
        if self.imu is not None and len(quat_xyzw) == 4 and len(gyro) == len(acc) == 3:
            quat, g, a = self._imu_internal([quat_xyzw], [gyro], [acc], [stamp])
            quat_xyzw, gyro, acc = quat[0], g[0], a[0]
        return self._add_aux(self._imu, stamp, (*quat_xyzw, *gyro, *acc), 'imu')

    def add_wrench(self, foot: str, stamp: float, wrench) -> bool:
        """Add a foot wrench ``[fx, fy, fz, tx, ty, tz]`` [N, N.m] (wrench mode)."""
        stream = self._force.get(foot) if self.cfg.force_mode == 'wrench' else None
        if stream is None:
            self._event('unexpected_wrench')
            return False
        return self._add_aux(stream, stamp, tuple(wrench), f'wrench_{foot}')

    def add_ankle_ft(self, foot: str, stamp: float, wrench) -> bool:
        """Add a raw ankle F/T reading ``[fx, fy, fz, tx, ty, tz]`` [N, N.m] in the F/T frame."""
        stream = self._ankle.get(foot)
        if stream is None:
            self._event('unexpected_ankle_ft')
            return False
        return self._add_aux(stream, stamp, tuple(wrench), f'ankle_ft_{foot}')

    def add_fsr(self, foot: str, k: int, stamp: float, force_n: float) -> bool:
        """Add the normal force [N] of sole sensor ``k`` of ``foot`` (fsr mode)."""
        stream = self._force.get(f'{foot}.{k}')
        if stream is None:
            self._event('unexpected_fsr')
            return False
        return self._add_aux(stream, stamp, (float(force_n),), f'fsr_{foot}')
