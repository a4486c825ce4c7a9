"""Constant-speed friction sweep (Xiao, Qian & Luo 2025): trajectory and extraction.

One joint moves at a time (the others held), trapezoidal-velocity reciprocating strokes at a
series of plateau speeds, each repeated. On the constant-speed segments, at matched positions
and equal speed magnitude, ``tau_f = (tau+ - tau-)/2`` and ``g(q) = (tau+ + tau-)/2``
(friction assumed odd in velocity), averaged over positions and repetitions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from legid_ros.core.errors import BadInputError

DEFAULT_SPEEDS = (0.01, 0.02, 0.04, 0.07, 0.1, 0.15, 0.2, 0.3, 0.45, 0.7, 1.0, 1.5, 2.0, 3.0,
                  4.0, 5.0)  # [rad/s]


@dataclass
class SweepPlan:
    """A constant-speed sweep of one joint.

    Attributes:
        joint: Column index of the swept joint.
        posture: Positions of every joint; the swept one is the stroke centre [rad].
        speeds: Plateau speeds [rad/s], all > 0.
        reps: Repetitions of each back-and-forth stroke.
        accel: Ramp acceleration [rad/s^2].
        plateau_s: Target duration of each plateau [s].
        stroke_min, stroke_max: Limits of the plateau stroke length [rad].
        dwell_s: Rest at each end of a stroke [s].
        rate: Sample rate [Hz].
    """

    joint: int
    posture: Sequence[float]
    speeds: Sequence[float] = DEFAULT_SPEEDS
    reps: int = 5
    accel: float = 30.0
    plateau_s: float = 1.0
    stroke_min: float = 0.03
    stroke_max: float = 1.2
    dwell_s: float = 0.05
    rate: float = 500.0


@dataclass
class SweepTrajectory:
    """Prescribed sweep motion with per-sample labels.

    Attributes:
        t: Times [s]; q, qd, qdd: (N, nj) [rad, rad/s, rad/s^2].
        plateau: Speed index of constant-speed samples, -1 elsewhere.
        direction: +1 / -1 on plateaus, 0 elsewhere.
        rep: Repetition index of each sample.
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    plateau: np.ndarray
    direction: np.ndarray
    rep: np.ndarray


def _stroke(v: float, dist: float, accel: float, rate: float):
    """Samples of one trapezoidal move covering ``dist`` with plateau speed ``v`` (sign = dir)."""
    sv = abs(v)
    ta = sv / accel
    tp = max(dist - sv * ta, 0.0) / sv
    total = 2 * ta + tp
    n = max(int(np.ceil(total * rate)), 2)
    tt = np.arange(n) / rate
    acc = np.where(tt < ta, accel, np.where(tt < ta + tp, 0.0, -accel))
    vel = np.where(tt < ta, accel * tt, np.where(tt < ta + tp, sv,
                                                 np.maximum(sv - accel * (tt - ta - tp), 0.0)))
    pos = np.where(tt < ta, 0.5 * accel * tt ** 2,
                   np.where(tt < ta + tp, 0.5 * sv * ta + sv * (tt - ta),
                            dist - 0.5 * np.maximum(total - tt, 0) ** 2 * accel))
    on = (tt >= ta) & (tt < ta + tp)
    s = np.sign(v)
    return s * pos, s * vel, s * acc, on


def sweep_trajectory(plan: SweepPlan) -> SweepTrajectory:
    """Build the reciprocating trapezoidal sweep of ``plan`` (speeds slow to fast)."""
    speeds = np.asarray(plan.speeds, float)
    if speeds.ndim != 1 or speeds.size == 0 or np.any(speeds <= 0):
        raise BadInputError(f'plateau speeds must be positive, got {list(speeds)}')
    posture = np.asarray(plan.posture, float)
    nj = posture.size
    if not 0 <= plan.joint < nj:
        raise BadInputError(f'joint index {plan.joint} outside 0..{nj - 1}')
    centre = posture[plan.joint]
    qs, qds, qdds, plats, dirs, reps = [], [], [], [], [], []
    dwell = max(int(plan.dwell_s * plan.rate), 1)
    pos = centre
    for i, v in enumerate(speeds):
        ramp = v * v / plan.accel
        stroke = float(np.clip(v * plan.plateau_s, plan.stroke_min, plan.stroke_max)) + ramp
        start = centre - stroke / 2
        # move (slowly) to the stroke start, not labelled
        if abs(pos - start) > 1e-9:
            p, vel, a, _ = _stroke(0.5 * np.sign(start - pos), abs(start - pos), plan.accel,
                                   plan.rate)
            qs.append(pos + p)
            qds.append(vel)
            qdds.append(a)
            plats.append(np.full(len(p), -1))
            dirs.append(np.zeros(len(p), int))
            reps.append(np.full(len(p), -1))
            pos = start
        for r in range(plan.reps):
            for sgn in (1.0, -1.0):
                p, vel, a, on = _stroke(sgn * v, stroke, plan.accel, plan.rate)
                qs.append(pos + p)
                qds.append(vel)
                qdds.append(a)
                plats.append(np.where(on, i, -1))
                dirs.append(np.where(on, int(sgn), 0))
                reps.append(np.full(len(p), r))
                pos = pos + p[-1]
                qs.append(np.full(dwell, pos))
                qds.append(np.zeros(dwell))
                qdds.append(np.zeros(dwell))
                plats.append(np.full(dwell, -1))
                dirs.append(np.zeros(dwell, int))
                reps.append(np.full(dwell, r))
    qj = np.concatenate(qs)
    n = qj.size
    q = np.tile(posture, (n, 1))
    qd = np.zeros((n, nj))
    qdd = np.zeros((n, nj))
    q[:, plan.joint] = qj
    qd[:, plan.joint] = np.concatenate(qds)
    qdd[:, plan.joint] = np.concatenate(qdds)
    return SweepTrajectory(np.arange(n) / plan.rate, q, qd, qdd, np.concatenate(plats),
                           np.concatenate(dirs), np.concatenate(reps))


@dataclass
class SweepFriction:
    """Friction and gravity extracted from a sweep of one joint.

    Attributes:
        speed: Mean plateau speed magnitude per speed level [rad/s].
        tau_f: Friction torque per speed level (positive-direction value) [N.m].
        tau_f_std: Standard error of ``tau_f`` over position bins and repetitions [N.m].
        n_samples: Plateau samples used per speed level.
        q_bins: Centres of the position bins [rad].
        g: Gravity (position-dependent) torque per bin, averaged over speeds [N.m].
    """

    speed: np.ndarray
    tau_f: np.ndarray
    tau_f_std: np.ndarray
    n_samples: np.ndarray
    q_bins: np.ndarray
    g: np.ndarray


def extract_friction(q: np.ndarray, qd: np.ndarray, tau: np.ndarray, plateau: np.ndarray,
                     direction: np.ndarray, joint_name: str = 'joint', n_bins: int = 8,
                     min_speeds: int = 6) -> SweepFriction:
    """``tau_f = (tau+ - tau-)/2`` and ``g = (tau+ + tau-)/2`` at matched positions.

    Args:
        q, qd, tau: Swept joint's position [rad], velocity [rad/s], torque [N.m], (N,).
        plateau: Speed-level index per sample, -1 off plateau.
        direction: +1 / -1 per plateau sample.
        joint_name: For error messages.
        n_bins: Position bins over the overlap of both directions.
        min_speeds: Fewest usable speed levels (both directions present).

    Raises:
        BadInputError: Too few speed levels, or a joint that never reverses.
    """
    q, qd, tau = (np.asarray(a, float).ravel() for a in (q, qd, tau))
    plateau = np.asarray(plateau).ravel()
    direction = np.asarray(direction).ravel()
    if not q.size == qd.size == tau.size == plateau.size == direction.size:
        raise BadInputError('q, qd, tau, plateau and direction must have the same length')
    levels = sorted(int(x) for x in np.unique(plateau[plateau >= 0]))
    one_way = [lv for lv in levels
               if not (np.any((plateau == lv) & (direction > 0))
                       and np.any((plateau == lv) & (direction < 0)))]
    if levels and len(one_way) == len(levels):
        raise BadInputError(f'joint {joint_name!r} never reverses during the sweep: every '
                            f'plateau runs in one direction only, so (tau+ - tau-)/2 cannot '
                            f'separate friction from gravity; record both directions')
    usable = [lv for lv in levels if lv not in one_way]
    if len(usable) < min_speeds:
        detail = (f'levels run in one direction only: {one_way}' if one_way
                  else f'constant-speed levels found: {len(levels)}')
        raise BadInputError(f'sweep of joint {joint_name!r} has {len(usable)} plateau speeds '
                            f'with both directions; at least {min_speeds} are needed '
                            f'({detail}); record more plateau speeds')
    speed, tf, tfs, ns, g_rows = [], [], [], [], []
    edges_g = None
    for lv in usable:
        sel = plateau == lv
        pos, neg = sel & (direction > 0), sel & (direction < 0)
        lo = max(q[pos].min(), q[neg].min())
        hi = min(q[pos].max(), q[neg].max())
        if hi <= lo:
            raise BadInputError(f'joint {joint_name!r}, speed level {lv}: the two directions '
                                f'cover no common positions')
        edges = np.linspace(lo, hi, n_bins + 1)
        diffs, sums = [], []
        for b in range(n_bins):
            inb = (q >= edges[b]) & (q <= edges[b + 1])
            tp, tn = tau[pos & inb], tau[neg & inb]
            if tp.size and tn.size:
                diffs.append(0.5 * (tp.mean() - tn.mean()))
                sums.append(0.5 * (tp.mean() + tn.mean()))
        if not diffs:
            raise BadInputError(f'joint {joint_name!r}, speed level {lv}: no matched positions')
        speed.append(np.abs(qd[sel]).mean())
        tf.append(np.mean(diffs))
        tfs.append(np.std(diffs) / np.sqrt(len(diffs)) if len(diffs) > 1
                   else np.std(tau[pos]) / np.sqrt(pos.sum()))
        ns.append(int(sel.sum()))
        if edges_g is None or (hi - lo) > (edges_g[-1] - edges_g[0]):
            edges_g = edges
        g_rows.append((edges, np.array(sums)))
    # gravity on the widest grid, averaged over the levels that cover each bin
    centres = 0.5 * (edges_g[1:] + edges_g[:-1])
    g = np.full(centres.size, np.nan)
    acc = [[] for _ in centres]
    for edges, sums in g_rows:
        c = 0.5 * (edges[1:] + edges[:-1])[:sums.size]
        for k, x in enumerate(centres):
            near = np.abs(c - x) <= 0.5 * (edges_g[1] - edges_g[0])
            if np.any(near):
                acc[k].append(sums[near].mean())
    for k, a in enumerate(acc):
        if a:
            g[k] = np.mean(a)
    return SweepFriction(np.array(speed), np.array(tf), np.array(tfs), np.array(ns), centres, g)


def label_plateaus(qd: np.ndarray, rate: float, min_duration_s: float = 0.1,
                   rel_tol: float = 0.05, v_min: float = 1e-3, merge_tol: float = 0.1):
    """Find constant-speed segments in a measured velocity and group them by speed.

    Args:
        qd: Velocity of the swept joint [rad/s], (N,).
        rate: Sample rate [Hz].
        min_duration_s: Shortest plateau [s].
        rel_tol: Relative speed deviation allowed within a plateau.
        v_min: Speeds below this count as rest [rad/s].
        merge_tol: Relative speed difference under which plateaus share a level.

    Returns:
        ``(plateau, direction)`` label arrays as :func:`extract_friction` expects.
    """
    qd = np.asarray(qd, float).ravel()
    n = qd.size
    plateau = np.full(n, -1)
    direction = np.zeros(n, int)
    min_len = max(int(min_duration_s * rate), 3)
    runs = []
    k = 0
    while k < n:
        if abs(qd[k]) < v_min:
            k += 1
            continue
        s = np.sign(qd[k])
        e = k
        while e < n and np.sign(qd[e]) == s and abs(qd[e]) >= v_min:
            e += 1
        seg = np.abs(qd[k:e])
        top = np.median(seg[seg >= 0.5 * seg.max()]) if seg.size else 0.0
        flat = np.where(np.abs(seg - top) <= rel_tol * top + v_min)[0]
        if flat.size >= min_len:
            a, b = k + flat[0], k + flat[-1] + 1
            runs.append((a, b, s, float(np.abs(qd[a:b]).mean())))
        k = e
    levels = []
    for a, b, s, v in sorted(runs, key=lambda r: r[3]):
        lv = next((i for i, lvv in enumerate(levels) if abs(v - lvv) <= merge_tol * lvv), None)
        if lv is None:
            levels.append(v)
            lv = len(levels) - 1
        plateau[a:b] = lv
        direction[a:b] = int(s)
    return plateau, direction


def extract_friction_measured(t: np.ndarray, q: np.ndarray, tau: np.ndarray,
                              joint_name: str = 'joint', cutoff_hz: float = 7.5,
                              min_speeds: int = 6, **label_kw) -> SweepFriction:
    """Sweep extraction from measurements only (no plan): filter, differentiate, label, extract.

    Args:
        t: Sample times [s], (N,).
        q: Measured position of the swept joint [rad], (N,).
        tau: Measured torque of the swept joint [N.m], (N,).
        joint_name: For error messages.
        cutoff_hz: Zero-phase 4th-order Butterworth cut-off on the position (as Zhu & Zhang).
        min_speeds: Fewest usable speed levels.
        **label_kw: Passed to :func:`label_plateaus`.
    """
    from legid_ros.core.signals import butter_zero_phase, finite_differences

    t = np.asarray(t, float).ravel()
    if t.size < 30:
        raise BadInputError(f'{t.size} samples are too few for a friction sweep')
    rate = (t.size - 1) / (t[-1] - t[0])
    qf = butter_zero_phase(np.asarray(q, float).ravel(), cutoff_hz, rate)
    qd, _ = finite_differences(t, qf)
    plateau, direction = label_plateaus(qd, rate, **label_kw)
    return extract_friction(qf, qd, tau, plateau, direction, joint_name, min_speeds=min_speeds)
