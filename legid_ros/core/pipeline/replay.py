"""A recording through the buffer's core, as the buffer node would see it (no ROS).

:func:`recording_windows` feeds a :class:`legid_ros.core.recording.Recording` (a rosbag2 read by
:func:`legid_ros.bag.recording_io.read_bag`, or a simulation) in chunks of stamps into
:class:`legid_ros.core.buffer.sensor_buffer.Buffer` with the buffer node's settings and returns
the windows it cuts; :func:`replay_online` folds windows into an online estimator and updates it
every ``update_period_s`` of data time, as the estimator node does. Benchmarks and tests use
them to run the online pipeline's exact code path (buffer -> windows ->
:mod:`legid_ros.core.pipeline.online_folding` -> estimator) on a recording without message
passing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

import numpy as np

from legid_ros.core.buffer.kinematics import StreamKinematics
from legid_ros.core.buffer.sensor_buffer import Buffer, BufferConfig
from legid_ros.core.buffer.window import WindowData, unpack_window
from legid_ros.core.contact import ContactThresholds
from legid_ros.core.errors import BadInputError
from legid_ros.core.recording import Recording
from legid_ros.core.pipeline.online_folding import stamp_tie
from legid_ros.core.robot import Robot


def make_buffer(robot: Robot, mode: str, fsr_count: Dict[str, int], ft_feet: List[str],
                thresholds: Optional[ContactThresholds] = None, conventions: bool = False,
                **config) -> Buffer:
    """The buffer's core as the buffer node builds it for ``robot``.

    Args:
        robot: The robot (joint names, feet, sensor conventions).
        mode: 'wrench' or 'fsr'.
        fsr_count: Sole sensors per foot.
        ft_feet: Feet whose raw ankle F/T readings are carried.
        thresholds: The contact rule's thresholds (default: the node's).
        conventions: Its inputs are in the description's sensor conventions (converted as the
            node does), not the internal one.
        **config: Other :class:`BufferConfig` fields.
    """
    feet = list(robot.feet)
    cfg = BufferConfig(joint_names=list(robot.actuated_joint_names), feet=feet, force_mode=mode,
                       fsr_count=fsr_count, ankle_ft_feet=ft_feet, **config)
    axes = {f: robot.feet[f].expressed_in for f in feet} if conventions else None
    return Buffer(cfg, StreamKinematics(robot, mode, thresholds, expressed_in=axes),
                  imu=robot.imu if conventions else None)


def recording_windows(rec: Recording, robot: Robot, force_mode: Optional[str] = None,
                      ankle_ft: bool = True, chunk: int = 100,
                      thresholds: Optional[ContactThresholds] = None,
                      conventions: bool = False, joint_order: Optional[np.ndarray] = None,
                      **config) -> Iterator[WindowData]:
    """Windows the buffer cuts from ``rec``, in order.

    Args:
        rec: Recording with joint states, IMU and the foot force sensors of ``force_mode``.
        robot: The robot of the recording.
        force_mode: 'wrench' or 'fsr' (default: the robot's ``force_sensing``, else 'wrench').
        ankle_ft: Carry the raw ankle F/T readings (when the recording has them).
        chunk: Stamps fed per pass (the buffer node flushes every 50 joint states by default).
        thresholds: The contact rule's thresholds (default: the buffer node's, relative to
            the robot's weight).
        conventions: ``rec`` is in the description's sensor conventions (a raw readout,
            :mod:`legid_ros.core.sim.conventions`), not the internal one (a bag read by
            ``read_bag``): the buffer converts the IMU and the foot wrenches as the buffer node
            does.
        joint_order: Per sample, the joint columns its joint-state message lists, in that
            order (N, nj) (a driver that shuffles them): fed message by message.
        **config: Other :class:`BufferConfig` fields (window ``length``, ``hop``, cutoffs ...).

    Yields:
        Unpacked windows (:class:`WindowData`).

    Raises:
        BadInputError: The recording lacks the streams of ``force_mode``.
    """
    mode = force_mode or getattr(robot, 'force_sensing', None) or 'wrench'
    feet = list(robot.feet)
    source = rec.foot_wrench if mode == 'wrench' else rec.fsr
    missing = [f for f in feet if f not in source]
    if missing:
        raise BadInputError(f'recording has no {mode} data for feet {missing}; pass the other '
                            "force_mode ('wrench' or 'fsr')")
    ft_feet = [f for f in feet if ankle_ft and f in rec.ankle_ft]
    buf = make_buffer(robot, mode, {f: rec.fsr[f].shape[1] for f in feet if f in rec.fsr},
                      ft_feet, thresholds, conventions, **config)
    for k in range(0, rec.n, chunk):
        sl = slice(k, min(k + chunk, rec.n))
        t = rec.t[sl]
        buf.add_imus(t, rec.imu_quat[sl], rec.imu_gyro[sl], rec.imu_acc[sl])
        for foot in feet:
            if mode == 'wrench':
                buf.add_wrenches(foot, t, rec.foot_wrench[foot][sl])
            else:
                for j in range(rec.fsr[foot].shape[1]):
                    buf.add_fsrs(foot, j, t, rec.fsr[foot][sl, j])
        for foot in ft_feet:
            buf.add_ankle_fts(foot, t, rec.ankle_ft[foot][sl])
        if joint_order is None:
            buf.add_joint_states(t, rec.joint_names, rec.q[sl], rec.qd[sl], rec.tau[sl])
        else:
            names = np.array(rec.joint_names)
            for i in range(sl.start, sl.stop):
                cols = joint_order[i]
                buf.add_joint_state(rec.t[i], list(names[cols]), rec.q[i, cols],
                                    rec.qd[i, cols], rec.tau[i, cols])
        for win in buf.flush():
            yield unpack_window(win, buf.schema)
    for win in buf.flush(force=True, final=True):
        yield unpack_window(win, buf.schema)


def window_span_s(win: WindowData) -> float:
    """Time covered by a window [s] (0 for fewer than two rows)."""
    return float(win.t[-1] - win.t[0]) if win.n > 1 and np.isfinite(win.t[[0, -1]]).all() \
        else 0.0


@dataclass
class OnlineReplay:
    """Outcome of :func:`replay_online`.

    Attributes:
        result: Last successful update (None if none succeeded).
        updates: Successful updates.
        failures: Updates that raised, by exception type name.
        consistent_updates: Updates whose solution (as returned by the solver) is consistent.
        history: ``(t [s], result)`` of every successful update, in order.
        windows: Windows folded.
    """

    result: Optional[object] = None
    updates: int = 0
    failures: Dict[str, int] = field(default_factory=dict)
    consistent_updates: int = 0
    history: List[Tuple[float, object]] = field(default_factory=list)
    windows: int = 0


def replay_online(windows: Iterable[WindowData], est, folder, update_period_s: float = 1.0,
                  until_s: Optional[float] = None, keep_history: bool = False
                  ) -> OnlineReplay:
    """Fold ``windows`` into ``est`` as the estimator node does, updating every period, and
    once more after the last window if rows were folded since the last update (the node's
    next timer update once the stream has ended: the result covers all the data, whatever
    the windows' length at the stream's rate).

    Args:
        windows: Windows in order (e.g. :func:`recording_windows`).
        est: :class:`legid_ros.core.identification.online.OnlineEstimator`.
        folder: :class:`legid_ros.core.pipeline.online_folding.WindowFolder`.
        update_period_s: Data time between two updates [s] (the node's ``update_period_s``;
            a quarter of a row's step of tolerance, so that stamps' round-off does not move
            an update to the next window).
        until_s: Stop before the first window reaching past this stamp [s] (None: all).
        keep_history: Keep every update's result in ``history``.
    """
    out = OnlineReplay()
    last, pending, t_end = -np.inf, 0, -np.inf
    for win in windows:
        if until_s is not None and win.n and win.t[-1] > until_s:
            break
        pending += folder.fold(est, win).folded
        out.windows += 1
        t_end = float(win.t[-1]) if win.n else t_end
        if not win.n or win.t[-1] - last < update_period_s - stamp_tie(win.t):
            continue
        last, pending = float(win.t[-1]), 0
        _update(est, out, last, keep_history)
    if pending:
        _update(est, out, t_end, keep_history)
    return out


def _update(est, out: OnlineReplay, t: float, keep_history: bool) -> None:
    """One estimator update into ``out`` (a failure counted by its exception's name)."""
    from legid_ros.core.errors import LegidError

    try:
        res = est.update()
    except (LegidError, np.linalg.LinAlgError) as exc:
        out.failures[type(exc).__name__] = out.failures.get(type(exc).__name__, 0) + 1
        return
    out.result = res
    out.updates += 1
    out.consistent_updates += int(res.consistency.ok)
    if keep_history:
        out.history.append((t, res))
