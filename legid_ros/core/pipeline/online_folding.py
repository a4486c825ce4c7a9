"""Folding the buffer's overlapping windows into the online estimator, each row once (no ROS).

The estimator node's input logic: windows overlap (a new window every ``hop`` rows); they are
stitched into one stream by stamp (each row once), and a row is folded once half the longest
Savitzky-Golay window (and ``transition_s``) of the stream lies after it and half a window
before it, whatever the windows' length in rows (the buffer's 200-row windows are 0.2 s at
1 kHz, 1 s at 200 Hz: filters cut at a window's edge made the online result depend on the
sampling rate). The window's joint
positions (and optionally the ZMP) get zero-phase Savitzky-Golay derivatives; new rows are
folded at ``fold_rate_hz`` (every k-th, k from the window's own sampling rate: 100 Hz of a 1 kHz
or of a 200 Hz stream alike) with their ankle F/T reading (swinging feet), contact flags and
support foot. Rows near a sampling gap or with a stale stream lose their force (so they are
dropped and counted by the estimator), never the window.

Both the node (:mod:`legid_ros.ros.estimator_node`) and the in-process replay of
``legid bench online`` use :class:`WindowFolder`, so the benchmark measures the node's path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Tuple

import numpy as np

from legid_ros.core import signals
from legid_ros.core.errors import BadInputError
from legid_ros.core.buffer.window import WindowData
from legid_ros.core.contact import measured_cop, stance_base_state
from legid_ros.core.contact.base_state import imu_linear_acceleration, support_base_state
from legid_ros.core.contact.choices import ContactTally, PreparationChoice, base_source
from legid_ros.core.identification.online import OnlineEstimator


BASE_ACC = ('contacts', 'imu')  # where the base's linear acceleration comes from
#: [s] Most of the stream kept behind the newest row; windows further apart start a new
#: stream (the buffer's segments restart there too)
MAX_CONTEXT_S = 10.0


@dataclass
class FoldSettings:
    """How windows are folded.

    Attributes:
        margin_rows: Rows at the end of a full window left for the next one [rows]; at least
            half the longest Savitzky-Golay window and ``transition_s`` wait in any case.
        derivative_window_s: Savitzky-Golay window for q, its derivatives and the ZMP [s].
        smooth_zmp: Smooth the measured ZMP with the same window as q (on the contacts'
            base, the foot forces it is recomputed from).
        fold_rate_hz: Rows folded per second [Hz]: every ``round(rate / fold_rate_hz)``-th new
            row, the rate from the window's median sampling step (:func:`fold_stride`; 0:
            every row).
        use_ankle_ft: Fold the swinging feet's raw ankle F/T readings.
        jump_back_s: A window this much older than the last folded row is a clock jump [s].
        base: 'support' (the support sole flat and still, Wu & Gao 2021), 'contacts' (IMU
            orientation and rates, every stance contact still:
            :func:`legid_ros.core.contact.base_state.stance_base_state`; the
            measured ZMP recomputed in that frame from the window's foot forces) or 'auto'
            (chosen from the contacts of the rows seen so far, as ``prepare`` chooses:
            :mod:`legid_ros.core.contact.choices`).
        gyro_window_s: Savitzky-Golay window of the gyro and its derivative (base
            'contacts') [s].
        base_acc: The base's linear acceleration from 'contacts' (the stance feet still:
            the joint kinematics' second derivative) or 'imu' (the IMU's accelerometer,
            :func:`legid_ros.core.contact.base_state.imu_linear_acceleration`, as
            ``prepare``'s ``base_acc``: fast motions such as a trot, whose stance contacts'
            double derivative is mostly 10-20 Hz content), smoothed with the joints' and the
            ZMP's ``derivative_window_s``; rows whose accelerometer is not finite lose their
            force.
        transition_s: Rows closer than this to a change of any foot's contact state (the
            buffer's rule) lose their force, as ``prepare``'s ``transition_s`` drops them [s]
            (0: off, the default; None: chosen from the contacts of the rows seen so far, as
            ``prepare`` chooses); a row waits until the margin (the longest one tried, when
            chosen) of the stream lies after it, so every change within it is seen, whatever
            the window length.
        min_contacts: Rows with fewer feet in contact (the buffer's contact flags) lose their
            force, as ``prepare``'s ``min_contacts`` drops them (0: off; a trot's two-foot
            rows: 4).
    """

    margin_rows: int = 50
    derivative_window_s: float = 0.1
    smooth_zmp: bool = True
    fold_rate_hz: float = 100.0
    use_ankle_ft: bool = True
    jump_back_s: float = 0.5
    base: str = 'auto'
    gyro_window_s: float = 0.3
    transition_s: Optional[float] = 0.0
    base_acc: str = 'contacts'
    min_contacts: int = 0


@dataclass
class FoldOutcome:
    """What one window gave.

    Attributes:
        new_rows: Rows newer than the last folded one (before ``fold_rate_hz``).
        folded: Samples the estimator folded.
        events: ``(kind, message)`` of anything abnormal (clock jump, dropped rows, ...).
        view_row: Index of the newest folded-or-waiting row to display (or None).
        qd, qdd: Smoothed joint velocities and accelerations of the whole window.
    """

    new_rows: int = 0
    folded: int = 0
    events: List[Tuple[str, str]] = field(default_factory=list)
    view_row: Optional[int] = None
    qd: Optional[np.ndarray] = None
    qdd: Optional[np.ndarray] = None


def fold_stride(t: np.ndarray, rate_hz: float) -> int:
    """Every how many rows of stamps ``t`` [s] to fold for ``rate_hz`` rows a second [rows]
    (1 for ``rate_hz`` 0, fewer than 2 rows or a stream slower than ``rate_hz``)."""
    if not rate_hz > 0 or len(t) < 2:
        return 1
    step = float(np.median(np.diff(t)))
    return max(1, int(round(1.0 / (step * rate_hz)))) if step > 0 else 1


def stamp_tie(t: np.ndarray) -> float:
    """A quarter of the median step of stamps ``t`` [s] (0 for fewer than two): a time
    boundary within it of a row's stamp holds that row whatever the stamps' round-off
    (absolute ROS stamps, 1.7e9 s, decided otherwise than stamps from 0)."""
    return 0.25 * float(np.median(np.diff(t))) if len(t) > 1 else 0.0


def near_uniform(t: np.ndarray, window_s: float) -> np.ndarray:
    """Rows whose derivative window holds no sampling gap (> 1.5 median step) [bool]."""
    ok = np.ones(len(t), bool)
    if len(t) < 3:
        return ok
    dt = np.diff(t)
    med = float(np.median(dt))
    gaps = np.flatnonzero(dt > 1.5 * med)
    half = int(np.ceil(0.5 * window_s / med)) if med > 0 else 0
    for g in gaps:
        ok[max(g - half + 1, 0):g + half + 1] = False
    return ok


class WindowFolder:
    """Feeds windows to an :class:`OnlineEstimator`, each row at most once.

    Args:
        settings: Folding settings (read at every window: they may change at run time).
    """

    def __init__(self, settings: Optional[FoldSettings] = None):
        self.settings = settings or FoldSettings()
        if self.settings.base_acc not in BASE_ACC:
            raise BadInputError(f'base_acc must be one of {BASE_ACC}, not '
                                f'{self.settings.base_acc!r}')
        self.reset()

    def reset(self) -> None:
        """Forget the last folded stamp and the stitched rows (a new segment or an estimator
        reset)."""
        self.last_t = -np.inf
        self.longest = 0
        self.stream: Optional[WindowData] = None
        self.start_t = -np.inf
        self.tally = ContactTally(self.settings.transition_s)
        self.choice: Optional[PreparationChoice] = None  # the latest, for diagnostics

    def context_s(self, robot) -> float:
        """Half the longest Savitzky-Golay window of the folding [s]: a row is folded once
        that much of the stream lies on both sides of it (:meth:`fold`)."""
        s = self.settings
        longest = s.derivative_window_s
        if base_source(robot, s.base, 1.0) == 'contacts':  # 'auto' may choose it
            longest = max(longest, s.gyro_window_s)
        return 0.5 * float(longest)

    def _stitch(self, data: WindowData, keep_s: float) -> WindowData:
        """The stream so far with the rows of ``data`` after it, trimmed to what the next
        folds need: the rows not folded yet and ``keep_s`` [s] before them."""
        if self.stream is None or not self.stream.same_layout(data) or \
                data.t[0] > self.stream.t[-1] + MAX_CONTEXT_S:
            self.stream, self.start_t = data, float(data.t[0])
        else:
            self.stream = self.stream.extended(data)
        t = self.stream.t
        first = int(np.searchsorted(t, max(min(self.last_t, t[-1]) - keep_s,
                                           t[-1] - MAX_CONTEXT_S), 'left'))
        if first > 0:
            self.stream = self.stream.take(slice(first, None))
        return self.stream

    def fold(self, est: OnlineEstimator, data: WindowData) -> FoldOutcome:
        """Fold the new rows of ``data`` into ``est``.

        The windows are stitched into one stream (each row once, by stamp), and the filters
        (:meth:`context_s`) run over it: a row is folded once half the longest filter window
        lies on both sides of it in the stream, whatever the windows' length in rows (the
        buffer's 200-row windows span 0.2 s at 1 kHz, less than the gyro's 0.3 s). The rows of
        a segment's first half window are not folded (their fits are one-sided); those of its
        last window are (the recording ends there).

        Raises:
            BadInputError: Stamps not finite and increasing, or from the estimator (wrong
                shapes); the window is lost, the stream so far kept.
        """
        s = self.settings
        out = FoldOutcome()
        if data.n == 0:
            return out
        if not (np.all(np.isfinite(data.t)) and np.all(np.diff(data.t) > 0)):
            raise BadInputError('window stamps are not finite and increasing: window not used')
        if data.t[-1] < self.last_t - s.jump_back_s:
            out.events.append(('clock_jump_back', 'window stamps jumped back: new segment'))
            self.reset()
        self.longest = max(self.longest, data.n)
        full = data.n >= self.longest
        half = self.context_s(est.robot)
        if self.tally.transition_s != s.transition_s:  # changed at run time: count afresh
            self.tally = ContactTally(s.transition_s)
        # a row waits for its filters' windows and for any contact change within the margin
        wait = max(half, self.tally.wait_s)
        stream = self._stitch(data, max(2.0 * half, wait))
        t = stream.t
        # a boundary on a row's stamp (0.5 s after it is 250 rows at 500 Hz): a hop of rows
        # went to another update when the stamps' round-off decided
        tie = stamp_tie(t)
        new = (t > self.last_t) & (t >= self.start_t + half - tie)
        end = t[-1]
        if full:  # the window's last rows wait for the next one
            end = min(t[-1] - wait, data.t[max(data.n - int(s.margin_rows), 1) - 1]) + tie
            new &= t <= end
        out.view_row = max(int(np.searchsorted(data.t, end, 'right')) - 1, 0)
        idx = np.flatnonzero(new)
        if idx.size == 0:
            return out
        self.last_t = float(t[idx[-1]])
        out.new_rows = int(idx.size)
        loaded = stream.contact > 0.5 if stream.contact is not None else None
        near = self.tally.add(t, loaded, idx) if loaded is not None else None
        choice = self.choice = self.tally.choice(est.robot, s.base)
        win_s = s.derivative_window_s
        q_s, qd, qdd = signals.savgol_derivatives(t, stream.q, win_s)
        out.qd, out.qdd = self._window_rows(t, data, qd, qdd, win_s)
        zmp = signals.savgol_derivatives(t, stream.zmp_support, win_s)[0] \
            if s.smooth_zmp else stream.zmp_support
        idx = idx[::fold_stride(t, s.fold_rate_hz)]
        usable = stream.ok & near_uniform(t, 2.0 * half)
        if not usable[idx].all():
            out.events.append(('irregular_sampling', 'rows near missing joint states (drops) '
                               'or stale sensors were not used'))
        if choice.transition_s > 0 and near is not None:
            usable &= ~near[self.tally.margins.index(choice.transition_s)]
        if s.min_contacts > 0 and stream.contact is not None:
            usable &= (stream.contact > 0.5).sum(axis=1) >= s.min_contacts
        fz = np.where(usable, stream.fz, np.nan)
        col = {f: i for i, f in enumerate(stream.feet)}
        contact = {f: stream.contact[idx, col[f]] > 0.5 for f in stream.feet} \
            if stream.contact is not None else None
        ankle, swing = None, None
        if s.use_ankle_ft and stream.ankle_ft:
            ankle = {f: w[idx] for f, w in stream.ankle_ft.items()}
            swing = {f: ~contact[f] for f in ankle} if contact else None
        zmp, base_state, fz = zmp[idx], None, fz[idx]
        imu = self._orientation(t, stream.imu_quat, idx)
        if choice.base == 'contacts' and loaded is not None:
            zmp, base_state = self._contacts(est.robot, stream, idx, q_s, qd, qdd, imu)
        if s.base_acc == 'imu':
            base_state, fz = self._imu_acceleration(est.robot, stream, idx, q_s, qd, qdd,
                                                    base_state, fz, imu)
        out.folded = est.add_window(
            t[idx], q_s[idx], qd[idx], qdd[idx], zmp=zmp, fz=fz,
            imu_quat=imu, support=stream.support[idx], base_state=base_state,
            tau=self._smoothed(t, stream.tau, idx, True) if est.method != 'zmp' else None,
            foot_wrench={f: w[idx] for f, w in stream.foot_wrench.items()} or None,
            ankle_ft=ankle, swing=swing, contact=contact)
        if out.folded < idx.size:
            out.events.append(('rows_dropped', f'{idx.size - out.folded} rows without valid '
                               'data were not used'))
        return out

    @staticmethod
    def _window_rows(t, data: WindowData, qd, qdd, win_s: float):
        """The stream's smoothed velocities and accelerations at the window's rows (its own
        fits if a row of the window is not in the stream)."""
        rows = np.clip(np.searchsorted(t, data.t), 0, len(t) - 1)
        if np.array_equal(t[rows], data.t):
            return qd[rows], qdd[rows]
        return signals.savgol_derivatives(data.t, data.q, win_s)[1:]

    def _contacts(self, robot, data: WindowData, idx, q_s, qd, qdd, imu):
        """Base state from the stance contacts and the IMU, and the ZMP in its frame."""
        order = [data.feet.index(f) for f in robot.feet]
        stance = data.contact[idx][:, order] > 0.5
        gyro, gyro_dot, _ = signals.savgol_derivatives(data.t, data.imu_gyro,
                                                       self.settings.gyro_window_s)
        st = stance_base_state(robot, q_s[idx], qd[idx], qdd[idx], stance,
                               imu, gyro[idx], gyro_dot[idx],
                               rates_from_imu=True)
        src, raw = ('wrench', data.foot_wrench) if data.foot_wrench else ('fsr', data.fsr)
        # smoothed as the ZMP is (smooth_zmp): every row's forces count, not only the folded
        # rows' (a 500 Hz stream folded at 100 Hz kept the noise of a fifth of its samples)
        force = {f: self._smoothed(data.t, w, idx) for f, w in raw.items()}
        zmp, _ = measured_cop(robot, src, force, stance, q=st['q'])
        return zmp, st

    def _smoothed(self, t: np.ndarray, x: np.ndarray, idx: np.ndarray,
                  always: bool = False) -> np.ndarray:
        """``x`` at rows ``idx``, Savitzky-Golay smoothed over ``derivative_window_s`` when
        ``smooth_zmp`` or ``always`` (as read where the stream is too short for the fit).

        The efforts and the IMU's orientation are smoothed ``always``: the same filter as the
        joint positions whose derivatives the rows' regressors read (parallel filtering), so a
        row's two sides see the same bandwidth and their noise does not grow with the rate.
        """
        x = np.asarray(x, float)
        if not (self.settings.smooth_zmp or always):
            return x[idx]
        try:
            return signals.savgol_derivatives(t, x, self.settings.derivative_window_s,
                                              at=idx)[0]
        except BadInputError:
            return x[idx]

    def _orientation(self, t: np.ndarray, quat, idx: np.ndarray):
        """The IMU's orientation at rows ``idx``, smoothed by the joint positions' fit
        (``derivative_window_s``): the base's position coordinates beside the joints'
        (parallel filtering; raw, its white jitter entered every row at the stream's rate).
        None without an IMU."""
        if quat is None:
            return None
        return signals.smooth_quaternions(quat, lambda x: self._smoothed(t, x, idx, True))

    def _imu_acceleration(self, robot, data: WindowData, idx, q_s, qd, qdd, base_state, fz,
                          imu):
        """(base state with the accelerometer's linear acceleration, vertical force with the
        rows whose accelerometer is not finite unloaded)."""
        if base_state is None:  # the estimator's own: the support sole flat and still
            base_state = support_base_state(robot, q_s[idx], qd[idx], qdd[idx],
                                            data.support[idx], imu)
        acc = signals.savgol_derivatives(data.t, data.imu_acc,
                                         self.settings.derivative_window_s)[0]
        acc = acc[idx]
        bad = ~np.isfinite(acc).all(axis=1)
        st = {k: np.array(v, float) for k, v in base_state.items() if k in ('q', 'v', 'a')}
        st['a'][:, :3] = imu_linear_acceleration(robot, st['q'], st['v'], st['a'],
                                                 np.where(bad[:, None], 0.0, acc))
        return st, np.where(bad, np.nan, fz)

