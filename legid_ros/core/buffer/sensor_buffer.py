"""Streaming alignment, causal filtering and windowing of a legged robot's sensor streams.

Pure logic behind the buffer node (no ROS): joint states define the clock; every other stream
(IMU, foot wrenches or sole sensors) is linearly interpolated onto each joint-state stamp once
a sample at or after that stamp has arrived, or held (zero-order) once ``max_delay_s`` of
joint-state time has passed without one (with a ``clock``, a live node's: and ``max_delay_s``
of wall time since the row first waited, so that a burst of joint states after a stall of
the machine does not outrun the other streams of the same instants). Rows then go through
causal filters (first-order lag, backward differences), get the measured ZMP and contact states
(:mod:`legid_ros.core.buffer.kinematics`; both in :mod:`legid_ros.core.buffer.rows`) and are
cut into overlapping windows of ``length`` rows every ``hop`` rows, so every accepted row
appears in at least one window.

Bad input never raises: it is counted in :attr:`Buffer.events` (name -> count) and the row is
either dropped (non-finite or missing joint positions, duplicate or late stamp) or kept with
``ok = 0`` (a force or IMU stream missing or stale at that stamp).

IMU samples are brought to the internal convention as they are added (``imu``: the
description's mounting rotation and heading, :func:`legid_ros.core.conventions.convert.
imu_to_internal`, the offline conversion's function; the auxiliary streams' input methods are
in :mod:`legid_ros.core.buffer.auxiliary`); foot wrenches in foot or world axes are turned to
their F/T frame's axes row by row by the kinematics (its ``expressed_in``).

Raw ankle F/T readings (``BufferConfig.ankle_ft_feet``) are optional streams: interpolated
the same way into channels ``ankle_ft.<foot>.<axis>``, but they hold rows back (and are
reported silent) only once they have delivered a sample, and never set ``ok = 0``; a missing
or stale reading is NaN.
"""

from __future__ import annotations

import bisect
import math
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

import numpy as np

from legid_ros.core.buffer.auxiliary import AuxiliaryInput
from legid_ros.core.buffer.schema import (ANKLE_FT_PREFIX, BASE_CHANNELS,  # noqa
                                             IMU_CHANNELS, LABEL_PREFIX, SUPPORT_CHANNELS,
                                             WRENCH_AXES, BufferConfig, ChannelSchema)
from legid_ros.core.buffer.rows import RowAssembler
from legid_ros.core.buffer.stream import Stream
from legid_ros.core.conventions.spec import ImuSpec

__all__ = ['Buffer', 'BufferConfig', 'ChannelSchema', 'IMU_CHANNELS', 'WRENCH_AXES',
           'BASE_CHANNELS', 'SUPPORT_CHANNELS', 'LABEL_PREFIX', 'ANKLE_FT_PREFIX']


#: Distinct joint-name lists whose index maps the buffer keeps (memory bound) [-].
MAX_NAME_MAPS = 64


class Buffer(AuxiliaryInput):
    """Aligns the sensor streams on the joint-state clock and cuts them into windows.

    Args:
        cfg: Settings.
        kinematics: Object with ``rows(q, imu_quat, forces) -> (zmp [m] (n, 2), contact
            (n, nf), base pose [m, quaternion] (n, 7))`` and ``extra`` (n, 5), e.g.
            :class:`legid_ros.core.buffer.kinematics.StreamKinematics`; None leaves those NaN.
        imu: The description's IMU stream (``robot.imu``): samples added are converted from
            its mounting rotation and heading to the internal convention; None (or an
            internal one): taken as they are.
        clock: Wall clock [s] (e.g. ``time.monotonic``) of a live node: a row whose streams
            lag waits ``max_delay_s`` of it too (joint states delivered in a burst after a
            stall are ``max_delay_s`` of stamps apart at once, while the other topics of the
            same instants are still on their way: on a loaded 2-core machine 41 % of the
            demo's rows went out before their forces had arrived). None (offline, replays):
            stamps only, the rows then depend on the input's order alone. With a clock the
            buffer also tells a stream stamped from another clock than the joint states'
            (:mod:`legid_ros.core.conventions.stamps`, against its arrival times).

    Attributes:
        events: Count of every abnormal input by kind (see module docstring).
        rows_emitted: Rows that entered a window.
        windows_emitted: Windows returned by :meth:`flush`.
        stamp_offsets: Per stream whose header stamps are on another clock than the joint
            states' (live only), how far [s] (``inf``: its stamps are 0).
    """

    def __init__(self, cfg: BufferConfig, kinematics=None, imu: Optional[ImuSpec] = None,
                 clock: Optional[Callable[[], float]] = None):
        self.cfg = cfg
        self._clock = clock
        self._blocked_since: Optional[float] = None  # [s] wall time the head row began to wait
        self._offered: Dict[str, Tuple[float, float]] = {}  # [s] stamp, stamp - arrival
        self._fresh: Set[str] = set()  # streams heard since the last pass
        self.stamp_offsets: Dict[str, float] = {}  # [s] streams on another clock
        self.imu = imu if imu is not None and not imu.is_internal else None
        self._imu_t0 = None  # [s] first IMU stamp converted (a drifting heading's origin)
        self.schema = ChannelSchema.for_config(cfg)
        self.kin = kinematics
        self.nj = len(cfg.joint_names)
        self._joint_index = {n: i for i, n in enumerate(cfg.joint_names)}
        self._name_maps: Dict[Tuple[str, ...], Optional[np.ndarray]] = {}
        self._imu = Stream(10, cfg.history)
        self._force: Dict[str, Stream] = {}
        for foot in cfg.feet:
            if cfg.force_mode == 'wrench':
                self._force[foot] = Stream(6, cfg.history)
            else:
                for k in range(cfg.fsr_count[foot]):
                    self._force[f'{foot}.{k}'] = Stream(1, cfg.history)
        self._ankle = {foot: Stream(6, cfg.history) for foot in cfg.ankle_ft_feet}
        self._streams = [self._imu] + list(self._force.values())
        self._assemble = RowAssembler(cfg, self._imu, self._force, kinematics, self._add_events,
                                      self._ankle)
        self.events: Dict[str, int] = {}
        self.rows_emitted = 0
        self.windows_emitted = 0
        self._windows_on_jump: List[np.ndarray] = []
        self._store = np.empty((cfg.length + 8 * cfg.hop + 1024, len(self.schema)))
        self._reset_segment()

    # ----------------------------------------------------------------- input
    def _event(self, kind: str):
        self.events[kind] = self.events.get(kind, 0) + 1

    def _add_events(self, kind: str, n: int) -> None:
        self.events[kind] = self.events.get(kind, 0) + n

    def _reset_segment(self):
        self._pending_t: List[float] = []
        self._pending: List[Tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._count = 0  # rows held in self._store
        self._since_window = 0
        self._last_emitted = -math.inf
        self._blocked_since = None  # a new segment's head row waits its own max_delay_s
        self._assemble.reset()

    def _map(self, names: Sequence[str]) -> Optional[np.ndarray]:
        key = tuple(names)
        if key not in self._name_maps:
            if len(self._name_maps) >= MAX_NAME_MAPS:
                self._name_maps.clear()  # a cache, rebuilt for the names in use: memory bounded
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
        if not np.isfinite(q).all():
            self._event('nonfinite_position')
            return False
        if not math.isfinite(stamp):
            self._event('nonfinite_stamp')
            return False
        self._note_offer('joint_states', stamp)
        qd = self._optional(velocity, n, idx, 'velocity')
        tau = self._optional(effort, n, idx, 'effort')
        newest = self._pending_t[-1] if self._pending_t else self._last_emitted
        if stamp < newest - self.cfg.jump_back_s:
            self._event('clock_jump_back')
            self._clock_jump(stamp)
        elif stamp > newest + self.cfg.gap_s and math.isfinite(newest):
            self._event('stream_gap')
            self._clock_jump(stamp)
        elif stamp <= self._last_emitted:
            self._event('late_stamp' if stamp < self._last_emitted else 'duplicate_stamp')
            return False
        if self._pending_t and stamp <= self._pending_t[-1]:
            i = bisect.bisect_left(self._pending_t, stamp)
            if self._pending_t[i] == stamp:
                self._event('duplicate_stamp')
                return False
            self._event('out_of_order_stamp')
            self._pending_t.insert(i, stamp)
            self._pending.insert(i, (q, qd, tau))
        else:
            self._pending_t.append(stamp)
            self._pending.append((q, qd, tau))
        return True

    def add_joint_states(self, stamps: np.ndarray, names: Sequence[str], position: np.ndarray,
                         velocity: np.ndarray, effort: np.ndarray) -> int:
        """Queue a batch of joint states sharing one name list; returns how many were accepted.

        Same rules as :meth:`add_joint_state`; ``velocity``/``effort`` may have 0 columns.
        """
        idx = self._map(names)
        n = len(stamps)
        newest = self._pending_t[-1] if self._pending_t else self._last_emitted
        fast = (idx is not None and position.shape[1] == len(names)
                and (not math.isfinite(newest) or stamps[0] <= newest + self.cfg.gap_s)
                and np.all(np.diff(stamps) <= self.cfg.gap_s)
                and np.isfinite(position[:, idx]).all() and np.isfinite(stamps).all()
                and np.all(np.diff(stamps) > 0)
                and stamps[0] > (self._pending_t[-1] if self._pending_t else self._last_emitted)
                and velocity.shape[1] in (0, len(names)) and effort.shape[1] in (0, len(names))
                and (velocity.shape[1] == 0 or np.isfinite(velocity).all())
                and (effort.shape[1] == 0 or np.isfinite(effort).all()))
        if not fast:  # (each sample noted by add_joint_state)
            empty = ()
            return sum(self.add_joint_state(
                float(stamps[k]), names, position[k],
                velocity[k] if velocity.shape[1] else empty,
                effort[k] if effort.shape[1] else empty) for k in range(n))
        self._note_offer('joint_states', float(stamps[-1]))
        q = position[:, idx]
        nan = np.full((n, self.nj), np.nan)
        qd = velocity[:, idx] if velocity.shape[1] else nan
        tau = effort[:, idx] if effort.shape[1] else nan
        if not velocity.shape[1]:
            self.events['missing_velocity'] = self.events.get('missing_velocity', 0) + n
        if not effort.shape[1]:
            self.events['missing_effort'] = self.events.get('missing_effort', 0) + n
        self._pending_t.extend(stamps.tolist())
        self._pending.extend(zip(q, qd, tau))
        return n

    def _optional(self, values, n, idx, what) -> np.ndarray:
        if len(values) == 0:
            self._event(f'missing_{what}')
            return np.full(self.nj, np.nan)
        arr = np.asarray(values, float)
        if arr.shape != (n,):
            self._event(f'bad_{what}_length')
            return np.full(self.nj, np.nan)
        out = arr[idx]
        if not np.isfinite(out).all():
            self._event(f'nonfinite_{what}')
            out = np.where(np.isfinite(out), out, np.nan)
        return out

    def _clock_jump(self, stamp: float):
        """Emit what the old segment holds, then start a new one at ``stamp`` [s]."""
        self._windows_on_jump = self.flush(force=True, final=True)
        self._reset_segment()
        for s in self._streams + list(self._ankle.values()):
            if s.newest() > stamp + self.cfg.jump_back_s:
                s.reset()

    # ---------------------------------------------------------------- output
    @property
    def latest_row(self) -> Optional[np.ndarray]:
        """The newest processed row (None before the first)."""
        return self._store[self._count - 1].copy() if self._count else None

    @property
    def pending(self) -> int:
        """Joint-state rows waiting to be processed."""
        return len(self._pending_t)

    @property
    def rows_until_window(self) -> int:
        """Rows still needed to complete the next window."""
        if self._count < self.cfg.length:
            return self.cfg.length - self._count
        return max(self.cfg.hop - self._since_window, 1)

    def stale_streams(self) -> List[str]:
        """Auxiliary streams with nothing newer than ``stale_after_s`` before the newest row."""
        newest = self._pending_t[-1] if self._pending_t else self._last_emitted
        if not math.isfinite(newest):
            return []
        out = []
        if newest - self._imu.newest() > self.cfg.stale_after_s:
            out.append('imu')
        out += [k for k, s in self._force.items()
                if newest - s.newest() > self.cfg.stale_after_s]
        out += [f'ankle_ft_{k}' for k, s in self._ankle.items()
                if s.t and newest - s.newest() > self.cfg.stale_after_s]
        return out

    def flush(self, force: bool = False, final: bool = False) -> List[np.ndarray]:
        """Process every ready row; return the windows completed, each (rows, channels).

        Args:
            force: Process every pending row now (hold streams that lag).
            final: Also return a window ending at the newest row when some rows are not yet in
                any window: those rows plus the usual overlap (``length - hop`` earlier rows of
                the segment), so a consumer has the context its filters need; it is shorter
                than a full window.
        """
        windows = self._windows_on_jump
        self._windows_on_jump = []
        self._judge_clocks()
        count = 0
        if self._pending_t:
            newest = self._pending_t[-1]
            ready_all = min(s.newest() for s in self._streams
                            + [a for a in self._ankle.values() if a.t])
            late = self._waited_wall(self._pending_t[0] > ready_all
                                     and newest - self._pending_t[0] >= self.cfg.max_delay_s)
            for t in self._pending_t:
                waited = newest - t
                if not (force or (t <= ready_all and waited >= self.cfg.reorder_s)
                        or (waited >= self.cfg.max_delay_s and late)):
                    break
                count += 1
        if count:
            rows = self._assemble_safely(self._pending_t[:count], self._pending[:count])
            del self._pending_t[:count]
            del self._pending[:count]
            if len(rows):
                self._last_emitted = rows[-1, 0]
                windows += self._append(rows)
        if final and self._since_window > 0:
            overlap = self.cfg.length - self.cfg.hop
            windows.append(self._window(min(self._count, self._since_window + overlap)))
        return windows

    def _waited_wall(self, lagging: bool) -> bool:
        """Whether the head row, waiting on lagging streams (``lagging``), has waited
        ``max_delay_s`` of wall time too (always, without a clock)."""
        if self._clock is None:
            return True
        if not lagging:
            self._blocked_since = None
            return False
        now = self._clock()
        if self._blocked_since is None:
            self._blocked_since = now
        if now - self._blocked_since < self.cfg.max_delay_s:
            return False
        self._blocked_since = None
        return True

    def _assemble_safely(self, ts: List[float], samples) -> np.ndarray:
        """Rows of the queued samples; if the batch fails, row by row, so a sample that cannot
        be processed costs that sample only (event ``processing_error``), never the batch."""
        try:
            return self._assemble(ts, samples)
        except (ValueError, FloatingPointError, IndexError, np.linalg.LinAlgError):
            pass
        rows = []
        for k in range(len(ts)):
            try:
                rows.append(self._assemble(ts[k:k + 1], samples[k:k + 1]))
            except (ValueError, FloatingPointError, IndexError, np.linalg.LinAlgError):
                self._event('processing_error')
        return np.vstack(rows) if rows else np.empty((0, len(self.schema)))

    def _append(self, rows: np.ndarray) -> List[np.ndarray]:
        out = []
        cfg = self.cfg
        start = 0
        while start < len(rows):
            if self._count < cfg.length:
                need = cfg.length - self._count
            else:
                need = max(cfg.hop - self._since_window, 1)
            take = min(len(rows) - start, need)
            if self._count + take > len(self._store):
                keep = cfg.length
                self._store[:keep] = self._store[self._count - keep:self._count]
                self._count = keep
            self._store[self._count:self._count + take] = rows[start:start + take]
            self._count += take
            self._since_window += take
            start += take
            if self._count >= cfg.length and self._since_window >= cfg.hop:
                out.append(self._window(cfg.length))
        return out

    def _window(self, n: int) -> np.ndarray:
        win = self._store[self._count - n:self._count].copy()
        self.rows_emitted += self._since_window
        self._since_window = 0
        self.windows_emitted += 1
        return win
