"""Streaming alignment, causal filtering and windowing of a legged robot's sensor streams.

Pure logic behind the buffer node (no ROS): joint states define the clock; every other stream
(IMU, foot wrenches or sole sensors) is linearly interpolated onto each joint-state stamp once
a sample at or after that stamp has arrived, or held (zero-order) once ``max_delay_s`` of
joint-state time has passed without one. Rows then go through causal filters (first-order
lag, backward differences), get the measured ZMP and contact states
(:mod:`legid_ros.core.buffering_kin`) and are cut into overlapping windows of ``length`` rows
every ``hop`` rows, so every accepted row appears in at least one window.

Bad input never raises: it is counted in :attr:`Buffer.events` (name -> count) and the row is
either dropped (non-finite or missing joint positions, duplicate or late stamp) or kept with
``ok = 0`` (a force or IMU stream missing or stale at that stamp).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from legid_ros.core.errors import BadInputError

IMU_CHANNELS = ('imu.qx', 'imu.qy', 'imu.qz', 'imu.qw', 'imu.wx', 'imu.wy', 'imu.wz',
                'imu.ax', 'imu.ay', 'imu.az')
WRENCH_AXES = ('fx', 'fy', 'fz', 'tx', 'ty', 'tz')
BASE_CHANNELS = ('base.x', 'base.y', 'base.z', 'base.qx', 'base.qy', 'base.qz', 'base.qw')
LABEL_PREFIX = 'channels:'


@dataclass
class BufferConfig:
    """Settings of the streaming buffer.

    Attributes:
        joint_names: Joint names in column order.
        feet: Foot names.
        force_mode: 'wrench' (one 6-axis wrench per foot) or 'fsr' (sole sensors).
        fsr_count: Number of sole sensors per foot (fsr mode).
        length: Window length [samples].
        hop: Rows between two windows [samples] (<= length, so no row is skipped).
        max_delay_s: How long a joint-state row waits for the other streams [s].
        reorder_s: How long a row waits for earlier joint states arriving late [s].
        stale_after_s: A held stream older than this makes the row not ok [s].
        jump_back_s: A stamp this much earlier than the newest one is a clock jump [s].
        velocity_cutoff_hz: First-order lag cutoff on joint velocities [Hz] (0 = off).
        acceleration_cutoff_hz: Cutoff on joint accelerations [Hz] (0 = off).
        zmp_cutoff_hz: Cutoff on the measured ZMP [Hz] (0 = off; seed 000's inertial filter).
        history: Samples kept per auxiliary stream.
    """

    joint_names: List[str]
    feet: List[str]
    force_mode: str = 'wrench'
    fsr_count: Dict[str, int] = field(default_factory=dict)
    length: int = 200
    hop: int = 100
    max_delay_s: float = 0.02
    reorder_s: float = 0.002
    stale_after_s: float = 0.05
    jump_back_s: float = 0.5
    velocity_cutoff_hz: float = 50.0
    acceleration_cutoff_hz: float = 20.0
    zmp_cutoff_hz: float = 20.0
    history: int = 512

    def __post_init__(self):
        if self.force_mode not in ('wrench', 'fsr'):
            raise BadInputError(f'force_mode must be wrench or fsr, not {self.force_mode!r}')
        if not 0 < self.hop <= self.length:
            raise BadInputError(f'need 0 < hop <= length, got hop={self.hop}, '
                                f'length={self.length}')
        if self.force_mode == 'fsr' and any(self.fsr_count.get(f, 0) < 1 for f in self.feet):
            raise BadInputError('fsr mode needs at least one sole sensor per foot')


class ChannelSchema:
    """Ordered channel names of a window and their column indices."""

    def __init__(self, names: Sequence[str]):
        self.names = list(names)
        self._index = {n: i for i, n in enumerate(self.names)}
        if len(self._index) != len(self.names):
            raise BadInputError('duplicate channel names in the window schema')

    @classmethod
    def for_config(cls, cfg: BufferConfig) -> 'ChannelSchema':
        """The schema the buffer writes for ``cfg``."""
        names = ['t', 'ok']
        for kind in ('q', 'qd', 'qdd', 'tau'):
            names += [f'{kind}.{j}' for j in cfg.joint_names]
        names += list(IMU_CHANNELS)
        for foot in cfg.feet:
            if cfg.force_mode == 'wrench':
                names += [f'wrench.{foot}.{a}' for a in WRENCH_AXES]
            else:
                names += [f'fsr.{foot}.{k}' for k in range(cfg.fsr_count[foot])]
        names += ['zmp.x', 'zmp.y', 'zmp_raw.x', 'zmp_raw.y']
        names += [f'contact.{foot}' for foot in cfg.feet]
        names += list(BASE_CHANNELS)
        return cls(names)

    def __len__(self) -> int:
        return len(self.names)

    def index(self, name: str) -> int:
        """Column of a channel; raises BadInputError if absent."""
        try:
            return self._index[name]
        except KeyError as exc:
            raise BadInputError(f'window has no channel {name!r}') from exc

    def columns(self, prefix: str) -> List[int]:
        """Columns of every channel starting with ``prefix`` (schema order)."""
        return [i for i, n in enumerate(self.names) if n.startswith(prefix)]

    def suffixes(self, prefix: str) -> List[str]:
        """Channel names after ``prefix``, e.g. joint names for ``'q.'``."""
        return [n[len(prefix):] for n in self.names if n.startswith(prefix)]

    def label(self) -> str:
        """Layout label carrying the schema: ``channels:`` + comma-separated names."""
        return LABEL_PREFIX + ','.join(self.names)

    @classmethod
    def from_label(cls, label: str) -> 'ChannelSchema':
        """Parse :meth:`label` output."""
        if not label.startswith(LABEL_PREFIX):
            raise BadInputError(f'layout label does not start with {LABEL_PREFIX!r}')
        return cls(label[len(LABEL_PREFIX):].split(','))


class _Stream:
    """Time-sorted history of one auxiliary stream (stamps [s] and values)."""

    def __init__(self, width: int, history: int):
        self.width = width
        self.history = history
        self.t: List[float] = []
        self.v: List[np.ndarray] = []

    def reset(self):
        self.t.clear()
        self.v.clear()

    def add(self, stamp: float, values: np.ndarray) -> str:
        """Insert a sample; returns '' or the name of the event it caused."""
        event = ''
        if self.t and stamp <= self.t[-1]:
            i = bisect.bisect_left(self.t, stamp)
            if i < len(self.t) and self.t[i] == stamp:
                return 'duplicate_stamp'
            self.t.insert(i, stamp)
            self.v.insert(i, values)
            event = 'out_of_order_stamp'
        else:
            self.t.append(stamp)
            self.v.append(values)
        if len(self.t) > self.history:
            del self.t[:len(self.t) - self.history]
            del self.v[:len(self.v) - self.history]
        return event

    def newest(self) -> float:
        return self.t[-1] if self.t else -np.inf

    def sample(self, stamp: float, stale_after: float) -> Tuple[np.ndarray, bool]:
        """Value at ``stamp`` (linear interpolation, or hold) and whether it is fresh."""
        if not self.t:
            return np.full(self.width, np.nan), False
        i = bisect.bisect_left(self.t, stamp)
        if i < len(self.t) and (self.t[i] == stamp or i == 0):
            fresh = self.t[i] - stamp <= stale_after
            return self.v[i], fresh
        if i == len(self.t):
            return self.v[-1], stamp - self.t[-1] <= stale_after
        t0, t1 = self.t[i - 1], self.t[i]
        w = (stamp - t0) / (t1 - t0)
        fresh = t1 - t0 <= 2 * stale_after
        return (1 - w) * self.v[i - 1] + w * self.v[i], fresh


class _Lag:
    """First-order lag ``z_k = l z_{k-1} + (1 - l) u_k`` with ``l = exp(-2 pi fc dt)``."""

    def __init__(self, cutoff_hz: float):
        self.cutoff = cutoff_hz
        self.state: Optional[np.ndarray] = None

    def reset(self):
        self.state = None

    def __call__(self, u: np.ndarray, dt: float) -> np.ndarray:
        if self.cutoff <= 0:
            return u
        if self.state is None or not np.all(np.isfinite(self.state)):
            self.state = np.array(u, float)
            return self.state.copy()
        lam = np.exp(-2 * np.pi * self.cutoff * dt) if dt > 0 else 1.0
        good = np.isfinite(u)
        self.state[good] = lam * self.state[good] + (1 - lam) * u[good]
        out = self.state.copy()
        out[~good] = np.nan
        return out


class Buffer:
    """Aligns the sensor streams on the joint-state clock and cuts them into windows.

    Args:
        cfg: Settings.
        kinematics: Object with ``row(q, imu_quat, forces) -> (zmp [m] (2,), contact (nf,),
            base pose [m, quaternion] (7,))``, e.g.
            :class:`legid_ros.core.buffering_kin.StreamKinematics`; None leaves those NaN.

    Attributes:
        events: Count of every abnormal input by kind (see module docstring).
        rows_emitted: Rows that entered a window.
        windows_emitted: Windows returned by :meth:`flush`.
    """

    def __init__(self, cfg: BufferConfig, kinematics=None):
        self.cfg = cfg
        self.schema = ChannelSchema.for_config(cfg)
        self.kin = kinematics
        self.nj = len(cfg.joint_names)
        self._joint_index = {n: i for i, n in enumerate(cfg.joint_names)}
        self._name_maps: Dict[Tuple[str, ...], Optional[np.ndarray]] = {}
        self._imu = _Stream(10, cfg.history)
        self._force: Dict[str, _Stream] = {}
        for foot in cfg.feet:
            if cfg.force_mode == 'wrench':
                self._force[foot] = _Stream(6, cfg.history)
            else:
                for k in range(cfg.fsr_count[foot]):
                    self._force[f'{foot}.{k}'] = _Stream(1, cfg.history)
        self._streams = [self._imu] + list(self._force.values())
        self._vel = _Lag(cfg.velocity_cutoff_hz)
        self._acc = _Lag(cfg.acceleration_cutoff_hz)
        self._zmp = _Lag(cfg.zmp_cutoff_hz)
        self.events: Dict[str, int] = {}
        self.rows_emitted = 0
        self.windows_emitted = 0
        self._reset_segment()

    # ----------------------------------------------------------------- input
    def _event(self, kind: str):
        self.events[kind] = self.events.get(kind, 0) + 1

    def _reset_segment(self):
        self._pending_t: List[float] = []
        self._pending: List[Tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._rows: List[np.ndarray] = []
        self._since_window = 0
        self._last_emitted = -np.inf
        self._prev_t = None
        self._prev_q = None
        self._prev_qd = None
        for lag in (self._vel, self._acc, self._zmp):
            lag.reset()
        if self.kin is not None and hasattr(self.kin, 'reset'):
            self.kin.reset()

    def _map(self, names: Sequence[str]) -> Optional[np.ndarray]:
        key = tuple(names)
        if key not in self._name_maps:
            known = [n for n in key if n in self._joint_index]
            if len(set(known)) != self.nj:
                self._name_maps[key] = None
            else:
                pos = {n: i for i, n in enumerate(key)}
                self._name_maps[key] = np.array([pos[n] for n in self.cfg.joint_names])
            if len(known) != len(key):
                self._event('unknown_joint_names')
        return self._name_maps[key]

    def add_joint_state(self, stamp: float, names: Sequence[str], position, velocity=(),
                        effort=()) -> bool:
        """Queue one joint-state sample; returns whether it was accepted.

        Args:
            stamp: Header stamp [s].
            names: Joint names of the message (any order, extra names ignored).
            position: Positions [rad or m], same order as ``names``.
            velocity: Velocities [rad/s] or empty (then differentiated).
            effort: Efforts [N.m] or empty (then NaN).
        """
        idx = self._map(names)
        if idx is None:
            self._event('missing_joints')
            return False
        n = len(names)
        pos = np.asarray(position, float)
        if pos.shape != (n,):
            self._event('bad_position_length')
            return False
        q = pos[idx]
        if not np.all(np.isfinite(q)):
            self._event('nonfinite_position')
            return False
        qd = self._optional(velocity, n, idx, 'velocity')
        tau = self._optional(effort, n, idx, 'effort')
        if not np.isfinite(stamp):
            self._event('nonfinite_stamp')
            return False
        newest = self._pending_t[-1] if self._pending_t else self._last_emitted
        if stamp < newest - self.cfg.jump_back_s:
            self._event('clock_jump_back')
            self._clock_jump(stamp)
        elif stamp <= self._last_emitted:
            self._event('late_stamp' if stamp < self._last_emitted else 'duplicate_stamp')
            return False
        i = bisect.bisect_left(self._pending_t, stamp)
        if i < len(self._pending_t) and self._pending_t[i] == stamp:
            self._event('duplicate_stamp')
            return False
        if i < len(self._pending_t):
            self._event('out_of_order_stamp')
        self._pending_t.insert(i, stamp)
        self._pending.insert(i, (q, qd, tau))
        return True

    def _optional(self, values, n, idx, what) -> np.ndarray:
        arr = np.asarray(values, float)
        if arr.size == 0:
            self._event(f'missing_{what}')
            return np.full(self.nj, np.nan)
        if arr.shape != (n,):
            self._event(f'bad_{what}_length')
            return np.full(self.nj, np.nan)
        out = arr[idx]
        if not np.all(np.isfinite(out)):
            self._event(f'nonfinite_{what}')
            out = np.where(np.isfinite(out), out, np.nan)
        return out

    def _add_aux(self, stream: _Stream, stamp: float, values: np.ndarray, what: str) -> bool:
        if not (np.isfinite(stamp) and np.all(np.isfinite(values))):
            self._event(f'nonfinite_{what}')
            return False
        if stamp < stream.newest() - self.cfg.jump_back_s:
            self._event(f'clock_jump_back_{what}')
            stream.reset()
        event = stream.add(stamp, values)
        if event:
            self._event(f'{event}_{what}')
        return event != 'duplicate_stamp'

    def add_imu(self, stamp: float, quat_xyzw, gyro, acc) -> bool:
        """Add an IMU sample: orientation [x, y, z, w], rate [rad/s], specific force [m/s^2]."""
        vals = np.concatenate([np.asarray(quat_xyzw, float), np.asarray(gyro, float),
                               np.asarray(acc, float)])
        return self._add_aux(self._imu, stamp, vals, 'imu')

    def add_wrench(self, foot: str, stamp: float, wrench) -> bool:
        """Add a foot wrench ``[fx, fy, fz, tx, ty, tz]`` [N, N.m] (wrench mode)."""
        stream = self._force.get(foot)
        if stream is None or self.cfg.force_mode != 'wrench':
            self._event('unexpected_wrench')
            return False
        return self._add_aux(stream, stamp, np.asarray(wrench, float), f'wrench_{foot}')

    def add_fsr(self, foot: str, k: int, stamp: float, force_n: float) -> bool:
        """Add the normal force [N] of sole sensor ``k`` of ``foot`` (fsr mode)."""
        stream = self._force.get(f'{foot}.{k}')
        if stream is None:
            self._event('unexpected_fsr')
            return False
        return self._add_aux(stream, stamp, np.array([force_n], float), f'fsr_{foot}')

    def _clock_jump(self, stamp: float):
        """Emit what the old segment holds, then start a new one at ``stamp`` [s]."""
        self._windows_on_jump = self.flush(force=True, final=True)
        self._reset_segment()
        for s in self._streams:
            if s.newest() > stamp + self.cfg.jump_back_s:
                s.reset()

    # ---------------------------------------------------------------- output
    @property
    def latest_row(self) -> Optional[np.ndarray]:
        """The newest processed row (None before the first)."""
        return self._rows[-1] if self._rows else None

    def stale_streams(self) -> List[str]:
        """Auxiliary streams with nothing newer than ``stale_after_s`` before the newest row."""
        if not self._pending_t and not np.isfinite(self._last_emitted):
            return []
        newest = self._pending_t[-1] if self._pending_t else self._last_emitted
        out = []
        if newest - self._imu.newest() > self.cfg.stale_after_s:
            out.append('imu')
        out += [k for k, s in self._force.items()
                if newest - s.newest() > self.cfg.stale_after_s]
        return out

    def flush(self, force: bool = False, final: bool = False) -> List[np.ndarray]:
        """Process every ready row; return the windows completed, each (rows, channels).

        Args:
            force: Process every pending row now (hold streams that lag).
            final: Also return a shorter window with the rows not yet in any window.
        """
        windows = list(getattr(self, '_windows_on_jump', []))
        self._windows_on_jump = []
        newest = self._pending_t[-1] if self._pending_t else -np.inf
        ready_all = min(s.newest() for s in self._streams)
        count = 0
        for t in self._pending_t:
            waited = newest - t
            if not (force or (t <= ready_all and waited >= self.cfg.reorder_s)
                    or waited >= self.cfg.max_delay_s):
                break
            count += 1
        for t, (q, qd, tau) in zip(self._pending_t[:count], self._pending[:count]):
            self._rows.append(self._row(t, q, qd, tau))
            self._since_window += 1
            self._last_emitted = t
            if len(self._rows) >= self.cfg.length and self._since_window >= self.cfg.hop:
                windows.append(self._window(self.cfg.length))
        del self._pending_t[:count]
        del self._pending[:count]
        if final and self._since_window > 0:
            windows.append(self._window(min(len(self._rows), max(self._since_window, 1))))
        return windows

    def _window(self, n: int) -> np.ndarray:
        win = np.vstack(self._rows[-n:])
        del self._rows[:max(0, len(self._rows) - self.cfg.length)]
        self.rows_emitted += self._since_window
        self._since_window = 0
        self.windows_emitted += 1
        return win

    def _row(self, t, q, qd, tau) -> np.ndarray:
        stale = self.cfg.stale_after_s
        imu, ok = self._imu.sample(t, stale)
        forces = {}
        for foot in self.cfg.feet:
            if self.cfg.force_mode == 'wrench':
                f, fresh = self._force[foot].sample(t, stale)
            else:
                parts = [self._force[f'{foot}.{k}'].sample(t, stale)
                         for k in range(self.cfg.fsr_count[foot])]
                f = np.array([p[0][0] for p in parts])
                fresh = all(p[1] for p in parts)
            forces[foot] = f if fresh else np.full(len(f), np.nan)
            ok = ok and fresh
        dt = 0.0 if self._prev_t is None else t - self._prev_t
        if self._prev_q is not None and dt > 0:
            diff = (q - self._prev_q) / dt
        else:
            diff = np.full(self.nj, np.nan)
        qd_f = self._vel(np.where(np.isfinite(qd), qd, diff), dt)
        if self._prev_qd is not None and dt > 0:
            qdd_f = self._acc((qd_f - self._prev_qd) / dt, dt)
        else:
            qdd_f = np.full(self.nj, np.nan)
        self._prev_t, self._prev_q, self._prev_qd = t, q, qd_f
        if self.kin is not None:
            zmp_raw, contact, base = self.kin.row(q, imu[:4], forces)
        else:
            zmp_raw, contact, base = (np.full(2, np.nan), np.zeros(len(self.cfg.feet)),
                                      np.full(7, np.nan))
        zmp_f = self._zmp(np.asarray(zmp_raw, float), dt)
        force_cols = [forces[f] for f in self.cfg.feet]
        return np.concatenate([[t, 1.0 if ok else 0.0], q, qd_f, qdd_f, tau, imu, *force_cols,
                               zmp_f, zmp_raw, contact, base])
