"""Row assembly of the buffer: queued joint-state samples -> rows of the window schema.

For a batch of joint-state samples (see :class:`legid_ros.core.buffer.sensor_buffer.Buffer`)
the auxiliary streams (IMU, foot wrenches or sole sensors) are sampled at the joint-state
stamps, joint velocities and accelerations are causally filtered (first-order lags over
backward differences, the state carried from batch to batch), the measured ZMP, contacts and
base pose come from the kinematics object and the ZMP goes through its own lag. The columns
follow :meth:`legid_ros.core.buffer.schema.ChannelSchema.for_config`.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from legid_ros.core.buffer.schema import SUPPORT_CHANNELS, BufferConfig
from legid_ros.core.buffer.stream import Lag, Stream


class RowAssembler:
    """Turns joint-state samples into processed rows, carrying the filter state between batches.

    Args:
        cfg: Buffer settings.
        imu: The IMU stream (10 values a sample).
        force: Force streams by key: foot name (wrench mode) or ``'<foot>.<k>'`` (fsr mode).
        kinematics: Object with ``rows(q, imu_quat, forces) -> (zmp [m] (n, 2), contact
            (n, nf), base pose [m, quaternion] (n, 7))`` and ``extra`` (n, 5), e.g.
            :class:`legid_ros.core.buffer.kinematics.StreamKinematics`; None leaves those NaN.
        count: ``count(kind, n)`` adds ``n`` to the event counter ``kind``.
        ankle: Raw ankle F/T streams by foot (``cfg.ankle_ft_feet``; optional channels: NaN
            where not fresh, stale rows counted only once the stream has started).
    """

    def __init__(self, cfg: BufferConfig, imu: Stream, force: Dict[str, Stream], kinematics,
                 count: Callable[[str, int], None], ankle: Optional[Dict[str, Stream]] = None):
        self.cfg = cfg
        self.kin = kinematics
        self.nj = len(cfg.joint_names)
        self._imu = imu
        self._force = force
        self._ankle = ankle or {}
        self._count = count
        self._vel = Lag(cfg.velocity_cutoff_hz)
        self._acc = Lag(cfg.acceleration_cutoff_hz)
        self._zmp = Lag(cfg.zmp_cutoff_hz)
        self._prev_t: Optional[float] = None  # last row of the previous batch
        self._prev_q: Optional[np.ndarray] = None
        self._prev_qd: Optional[np.ndarray] = None

    def reset(self) -> None:
        """Start a new segment: forget the previous row, the filter states and the kinematics'."""
        self._prev_t = None
        self._prev_q = None
        self._prev_qd = None
        for lag in (self._vel, self._acc, self._zmp):
            lag.reset()
        if self.kin is not None and hasattr(self.kin, 'reset'):
            self.kin.reset()

    def _count_stale(self, stream: str, fresh: np.ndarray) -> None:
        """Count rows where ``stream`` had no fresh sample (event ``stale_<stream>``)."""
        n = int(np.size(fresh) - np.count_nonzero(fresh))
        if n:
            self._count(f'stale_{stream}', n)

    def __call__(self, ts: List[float],
                 samples: Sequence[Tuple[np.ndarray, np.ndarray, np.ndarray]]) -> np.ndarray:
        """Rows (n, channels) for the stamps ``ts`` [s] and their ``(q, qd, tau)`` samples."""
        cfg = self.cfg
        t = np.array(ts)
        n = len(t)
        q = np.array([s[0] for s in samples])
        qd = np.array([s[1] for s in samples])
        tau = np.array([s[2] for s in samples])
        stale = cfg.stale_after_s
        imu, ok = self._imu.sample(t, stale)
        self._count_stale('imu', ok)
        forces = {}
        for foot in cfg.feet:
            if cfg.force_mode == 'wrench':
                f, fresh = self._force[foot].sample(t, stale)
            else:
                parts = [self._force[f'{foot}.{k}'].sample(t, stale)
                         for k in range(cfg.fsr_count[foot])]
                f = np.hstack([p[0] for p in parts])
                fresh = np.logical_and.reduce([p[1] for p in parts])
            f[~fresh] = np.nan
            forces[foot] = f
            self._count_stale(f'force_{foot}', fresh)
            ok = ok & fresh
        qd_f, qdd_f, dt_mean = self._derivatives(t, q, qd)
        if self.kin is not None:
            zmp_raw, contact, base = self.kin.rows(q, imu[:, :4], forces)
            extra = self.kin.extra
        else:
            zmp_raw = np.full((n, 2), np.nan)
            contact = np.zeros((n, len(cfg.feet)))
            base = np.full((n, 7), np.nan)
            extra = np.full((n, len(SUPPORT_CHANNELS)), np.nan)
        zmp_f = self._zmp(zmp_raw, dt_mean)
        ankle = []
        for foot in cfg.ankle_ft_feet:
            stream = self._ankle[foot]
            w, fresh = stream.sample(t, stale)
            w[~fresh] = np.nan
            if stream.t:
                self._count_stale(f'ankle_ft_{foot}', fresh)
            ankle.append(w)
        return np.hstack([t[:, None], ok[:, None].astype(float), q, qd_f, qdd_f, tau, imu,
                          *[forces[f] for f in cfg.feet], zmp_f, zmp_raw, contact, base, extra,
                          *ankle])

    def _derivatives(self, t: np.ndarray, q: np.ndarray,
                     qd: np.ndarray) -> Tuple[np.ndarray, np.ndarray, float]:
        """Filtered velocities [rad/s], accelerations [rad/s^2] and the mean step [s].

        Measured velocities are used where finite, backward differences of ``q`` elsewhere.
        """
        t_prev = np.concatenate([[self._prev_t if self._prev_t is not None else np.nan], t[:-1]])
        dt = t - t_prev
        q_prev = np.vstack([self._prev_q if self._prev_q is not None
                            else np.full(self.nj, np.nan), q[:-1]])
        with np.errstate(invalid='ignore', divide='ignore'):
            diff = (q - q_prev) / dt[:, None]
        dt_mean = float(np.nanmean(dt)) if np.isfinite(dt).any() else 0.0
        qd_f = self._vel(np.where(np.isfinite(qd), qd, diff), dt_mean)
        qd_prev = np.vstack([self._prev_qd if self._prev_qd is not None
                             else np.full(self.nj, np.nan), qd_f[:-1]])
        with np.errstate(invalid='ignore', divide='ignore'):
            qdd_f = self._acc((qd_f - qd_prev) / dt[:, None], dt_mean)
        self._prev_t, self._prev_q, self._prev_qd = t[-1], q[-1], qd_f[-1]
        return qd_f, qdd_f, dt_mean
