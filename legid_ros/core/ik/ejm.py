"""Extended Jacobian method (Chen et al. 2021): closed form (no drift) and differential form.

The planar leg (th2, th3, th4) has one redundant degree of freedom for a 2-D foot position.
A task ``psi(th)`` explicit in time makes the extended Jacobian ``Je = [J; dpsi/dth]`` square:

* ``'landing'``: ``psi = a3 = th2 + th3 + th4`` (landing angle th5, signed, distal link to the
  vertical); ``det Je = l1 l2 sin th3``.
* ``'hip'``: ``psi = th2``; ``det Je = l2 l3 sin th4``.

Because psi is a known function of time the inverse has a closed form; the differential form
``thd = Je^-1 ([Xd; psid] + kp [X - X(th); psi - psi(th)])`` is provided for comparison.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional, Sequence, Tuple

import numpy as np

from legid_ros.core.errors import BadInputError, SolverError, UnreachableTargetError
from legid_ros.core.ik.leg import LegGeometry, planar_fk, planar_jacobian, to_leg_plane

TASKS = ('landing', 'hip')
_TOL = 1e-12  # [rad] / [m] slack on range checks (round-off at a boundary)


@dataclass
class IkSolution:
    """Joint solution of many foot targets.

    Attributes:
        q: (hip roll, hip pitch, knee, ankle) per target, shape (N, 4) [rad].
        det_je: Determinant of the extended Jacobian per target [m^2].
        min_abs_det: Smallest |det Je| over the targets [m^2].
    """

    q: np.ndarray
    det_je: np.ndarray
    min_abs_det: float


def wrap(angle: np.ndarray) -> np.ndarray:
    """Angles wrapped to [-pi, pi) [rad]."""
    return np.mod(np.asarray(angle) + np.pi, 2.0 * np.pi) - np.pi


def _check_task(task: str) -> None:
    if task not in TASKS:
        raise BadInputError(f'unknown redundancy task {task!r}; tasks: {", ".join(TASKS)}')


def task_value(th: np.ndarray, task: str) -> np.ndarray:
    """psi(th) for planar joints (..., 3) [rad]."""
    th = np.asarray(th, float)
    return th[..., 0] + th[..., 1] + th[..., 2] if task == 'landing' else th[..., 0]


def task_row(task: str) -> np.ndarray:
    """dpsi/dth, shape (3,)."""
    return np.array([1.0, 1.0, 1.0]) if task == 'landing' else np.array([1.0, 0.0, 0.0])


def extended_jacobian(th: np.ndarray, geo: LegGeometry, task: str,
                      spring: float = 0.0) -> np.ndarray:
    """Je = [J; dpsi/dth], shape (..., 3, 3)."""
    _check_task(task)
    jac = planar_jacobian(th, geo, spring)
    row = np.broadcast_to(task_row(task), jac.shape[:-2] + (1, 3))
    return np.concatenate([jac, row], axis=-2)


def det_extended(th: np.ndarray, geo: LegGeometry, task: str, spring: float = 0.0) -> np.ndarray:
    """Closed-form det Je: l1 l2 sin th3 (landing) or l2 l3 sin th4 (hip) [m^2]."""
    _check_task(task)
    th = np.asarray(th, float)
    if task == 'landing':
        return geo.l1 * geo.l2 * np.sin(th[..., 1])
    return geo.l2 * (geo.l3 - spring) * np.sin(th[..., 2])


def two_link(p: np.ndarray, la: float, lb: float, rel_lo: float,
             rel_hi: float) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two-link planar IK with the relative angle in (rel_lo, rel_hi) within (0, pi).

    Args:
        p: End points (..., 2) from the base joint, (x, z) [m].
        la: First link length [m].
        lb: Second link length [m].
        rel_lo: Smallest relative angle [rad].
        rel_hi: Largest relative angle [rad].

    Returns:
        (absolute angle of the first link [rad], relative angle [rad],
        distance of p outside the reachable annulus [m], 0 inside).
    """
    d2 = p[..., 0] ** 2 + p[..., 1] ** 2
    d = np.sqrt(d2)
    r_max = np.sqrt(la * la + lb * lb + 2 * la * lb * np.cos(max(rel_lo, 0.0)))
    r_min = np.sqrt(la * la + lb * lb + 2 * la * lb * np.cos(min(rel_hi, np.pi)))
    dist = np.maximum(np.maximum(d - r_max, r_min - d), 0.0)
    c = np.clip((d2 - la * la - lb * lb) / (2 * la * lb), -1.0, 1.0)
    rel = np.arccos(c)
    base = np.arctan2(p[..., 0], -p[..., 1]) - np.arctan2(lb * np.sin(rel), la + lb * np.cos(rel))
    return base, rel, dist


def _times(times: Optional[Sequence[float]], n: int) -> np.ndarray:
    return np.arange(n, dtype=float) if times is None else np.asarray(times, float)


def _raise_first(dist: np.ndarray, details: Callable[[int], str], leg: str,
                 times: np.ndarray) -> None:
    """Raise UnreachableTargetError for the first target with a positive distance."""
    bad = np.flatnonzero(dist > _TOL)
    if bad.size:
        k = int(bad[0])
        raise UnreachableTargetError(leg, float(times[k]), float(dist[k]), details(k))


def solve_closed_form(geo: LegGeometry, targets: np.ndarray, task: str, psi: np.ndarray,
                      times: Optional[Sequence[float]] = None, leg: str = 'leg',
                      spring: float = 0.0, check_limits: bool = True) -> IkSolution:
    """Closed-form extended-Jacobian IK of many foot targets (vectorised, no drift).

    Args:
        geo: Leg geometry.
        targets: Foot positions in the hip frame, shape (N, 3) [m] (or (N, 2) planar (x, z)).
        task: 'landing' (psi = a3, landing angle) or 'hip' (psi = th2).
        psi: Task value per target, shape (N,) or scalar [rad].
        times: Time of each target [s] (for error messages; sample index if None).
        leg: Leg name (for error messages).
        spring: Spring compression [m].
        check_limits: Raise if a joint leaves its range.

    Returns:
        The :class:`IkSolution`.

    Raises:
        BadInputError: Non-finite targets or task values, unknown task.
        UnreachableTargetError: First target outside the workspace (or joint range).
    """
    _check_task(task)
    targets = np.asarray(targets, float)
    if targets.ndim == 1:
        targets = targets[None]
    n = targets.shape[0]
    psi = np.broadcast_to(np.asarray(psi, float), (n,))
    tt = _times(times, n)
    if not (np.all(np.isfinite(targets)) and np.all(np.isfinite(psi))):
        k = int(np.flatnonzero(~(np.isfinite(targets).all(axis=-1) & np.isfinite(psi)))[0])
        raise BadInputError(f'leg {leg!r}: non-finite target or task value at t = {tt[k]:.4f} s')
    if targets.shape[-1] == 3:
        th1, xz = to_leg_plane(targets)
    elif targets.shape[-1] == 2:
        th1, xz = np.zeros(n), targets
    else:
        raise BadInputError(f'targets must have shape (N, 3) or (N, 2), got {targets.shape}')
    lo, hi = geo.lower, geo.upper
    l3 = geo.l3 - spring
    if task == 'landing':
        a3 = psi
        ankle = xz - l3 * np.stack([np.sin(a3), -np.cos(a3)], axis=-1)
        th2, th3, dist = two_link(ankle, geo.l1, geo.l2, lo[2], hi[2])
        th4 = a3 - th2 - th3
        what = 'knee'
    else:
        th2 = psi
        knee = geo.l1 * np.stack([np.sin(th2), -np.cos(th2)], axis=-1)
        a2, th4, dist = two_link(xz - knee, geo.l2, l3, lo[3], hi[3])
        th3 = a2 - th2
        what = 'ankle'
    q = wrap(np.stack([th1, th2, th3, th4], axis=-1))
    det = det_extended(q[:, 1:], geo, task, spring)
    if np.any(dist > _TOL):
        j = 2 if what == 'knee' else 3
        def details(k):
            return f'{task} task {psi[k]:.4f} rad, {what} range [{lo[j]:.3f}, {hi[j]:.3f}] rad'
        _raise_first(dist, details, leg, tt)
    if check_limits:
        check_joint_ranges(geo, q, xz, leg, tt)
    return IkSolution(q=q, det_je=det, min_abs_det=float(np.min(np.abs(det))) if n else 0.0)


def check_joint_ranges(geo: LegGeometry, q: np.ndarray, xz: np.ndarray, leg: str,
                       times: np.ndarray) -> None:
    """Raise UnreachableTargetError for the first joint outside its range.

    The distance reported is the joint excess times the distance from that joint to the foot
    (the arc the foot would have to move) [m].
    """
    q = np.asarray(q, float)
    excess = np.maximum(np.maximum(geo.lower - q, q - geo.upper), 0.0)  # (N, 4) [rad]
    if not np.any(excess > _TOL):
        return
    th = q[:, 1:]
    a1 = th[:, 0]
    knee = geo.l1 * np.stack([np.sin(a1), -np.cos(a1)], axis=-1)
    a2 = a1 + th[:, 1]
    ankle = knee + geo.l2 * np.stack([np.sin(a2), -np.cos(a2)], axis=-1)
    levers = np.stack([np.abs(xz[:, 1]), np.linalg.norm(xz, axis=-1),
                       np.linalg.norm(xz - knee, axis=-1), np.linalg.norm(xz - ankle, axis=-1)],
                      axis=-1)
    dist = np.max(excess * levers, axis=-1)
    names = ('hip roll', 'hip pitch', 'knee', 'ankle')
    k = int(np.flatnonzero(np.any(excess > _TOL, axis=-1))[0])
    j = int(np.argmax(excess[k]))
    detail = (f'{names[j]} = {q[k, j]:.4f} rad outside '
              f'[{geo.lower[j]:.3f}, {geo.upper[j]:.3f}] rad')
    raise UnreachableTargetError(leg, float(times[k]), max(float(dist[k]), 1e-12), detail)


@dataclass
class DifferentialResult:
    """Integrated joint trajectory of a differential IK.

    Attributes:
        th: Pitch joints (th2, th3, th4) per sample, shape (N, ..., 3) [rad].
        det_je: det Je per sample (extended Jacobian; det(J J^T)^0.5 for GPM) [m^2].
        foot_err: Foot position error |X - X(th)| per sample [m].
    """

    th: np.ndarray
    det_je: np.ndarray
    foot_err: np.ndarray


def solve_differential(geo: LegGeometry, times: np.ndarray, xz: np.ndarray, xz_dot: np.ndarray,
                       task: str, psi: np.ndarray, psi_dot: np.ndarray, th0: np.ndarray,
                       kp: float = 0.0, min_det: float = 1e-6,
                       leg: str = 'leg') -> DifferentialResult:
    """Differential extended-Jacobian IK, explicit Euler, optional position correction.

    ``th[k+1] = th[k] + dt Je^-1 ([Xd; psid] + kp [X - X(th); psi - psi(th)])``.
    Extra leading axes after the time axis are independent legs (vectorised).

    Args:
        geo: Leg geometry.
        times: Sample times, shape (N,) [s].
        xz: Planar foot targets, shape (N, ..., 2) [m].
        xz_dot: Their velocities [m/s].
        task: 'landing' or 'hip'.
        psi: Task values, shape (N, ...) [rad].
        psi_dot: Task rates [rad/s].
        th0: Initial joints, shape (..., 3) [rad].
        kp: Position-correction gain [1/s] (kp dt <= 1 for stability).
        min_det: Smallest allowed |det Je| [m^2].
        leg: Leg name for errors.

    Raises:
        SolverError: det Je fell below ``min_det`` (singular extended Jacobian).
    """
    _check_task(task)
    times = np.asarray(times, float)
    xz, xz_dot = np.asarray(xz, float), np.asarray(xz_dot, float)
    psi, psi_dot = np.asarray(psi, float), np.asarray(psi_dot, float)
    n = times.size
    th = np.empty(xz.shape[:-1] + (3,))
    th[0] = th0
    det = np.empty(xz.shape[:-1])
    err = np.empty(xz.shape[:-1])
    for k in range(n):
        je = extended_jacobian(th[k], geo, task)
        det[k] = np.linalg.det(je)
        e_x = xz[k] - planar_fk(th[k], geo)
        err[k] = np.linalg.norm(e_x, axis=-1)
        if k == n - 1:
            break
        if np.any(np.abs(det[k]) < min_det):
            raise SolverError(f'leg {leg!r}: extended Jacobian singular at t = {times[k]:.4f} s',
                              status=f'|det Je| = {np.min(np.abs(det[k])):.3g}', iterations=k,
                              last_state=th[k].copy())
        rhs = np.concatenate([xz_dot[k] + kp * e_x,
                              (psi_dot[k] + kp * (psi[k] - task_value(th[k], task)))[..., None]],
                             axis=-1)
        th[k + 1] = th[k] + (times[k + 1] - times[k]) * np.linalg.solve(je, rhs[..., None])[..., 0]
    return DifferentialResult(th=th, det_je=det, foot_err=err)


def joint_velocities(geo: LegGeometry, q: np.ndarray, targets: np.ndarray, target_vel: np.ndarray,
                     task: str, psi_dot: np.ndarray) -> np.ndarray:
    """Joint rates of the extended-Jacobian solution: ``thd = Je^-1 [Xd; psid]`` and the roll rate.

    Args:
        geo: Leg geometry.
        q: Joint solution (N, 4) [rad].
        targets: Foot positions (N, 3) in the hip frame [m].
        target_vel: Foot velocities (N, 3) [m/s].
        task: 'landing' or 'hip'.
        psi_dot: Task rates (N,) [rad/s].

    Returns:
        (hip roll, hip pitch, knee, ankle) rates (N, 4) [rad/s].
    """
    p, v = np.asarray(targets, float), np.asarray(target_vel, float)
    r2 = p[:, 1] ** 2 + p[:, 2] ** 2
    th1d = (-p[:, 2] * v[:, 1] + p[:, 1] * v[:, 2]) / r2
    zpd = -(p[:, 1] * v[:, 1] + p[:, 2] * v[:, 2]) / np.sqrt(r2)
    rhs = np.stack([v[:, 0], zpd, np.broadcast_to(psi_dot, zpd.shape)], axis=-1)
    thd = np.linalg.solve(extended_jacobian(q[:, 1:], geo, task), rhs[..., None])[..., 0]
    return np.concatenate([th1d[:, None], thd], axis=-1)


def solve_point(geo: LegGeometry, target: Sequence[float], task: str, psi: float,
                time: float = 0.0, leg: str = 'leg') -> Tuple[float, float, float, float]:
    """Closed-form IK of one foot target in plain floats (for per-sample real-time use).

    Same results and checks as :func:`solve_closed_form` on one point, without numpy
    overhead.

    Returns:
        (hip roll, hip pitch, knee, ankle) [rad].

    Raises:
        BadInputError: Non-finite input or unknown task.
        UnreachableTargetError: Target outside the workspace or a joint out of range.
    """
    x, y, z = (float(v) for v in target)
    psi = float(psi)
    if not all(math.isfinite(v) for v in (x, y, z, psi)):
        raise BadInputError(f'leg {leg!r}: non-finite target or task value at t = {time:.4f} s')
    th1 = math.atan2(y, -z)
    zp = -math.hypot(y, z)
    lo, hi = geo.lower, geo.upper
    if task == 'landing':
        la, lb, j = geo.l1, geo.l2, 2
        px, pz = x - geo.l3 * math.sin(psi), zp + geo.l3 * math.cos(psi)
    elif task == 'hip':
        la, lb, j = geo.l2, geo.l3, 3
        px, pz = x - geo.l1 * math.sin(psi), zp + geo.l1 * math.cos(psi)
    else:
        raise BadInputError(f'unknown redundancy task {task!r}; tasks: {", ".join(TASKS)}')
    d2 = px * px + pz * pz
    d = math.sqrt(d2)
    r_max = math.sqrt(la * la + lb * lb + 2 * la * lb * math.cos(max(lo[j], 0.0)))
    r_min = math.sqrt(la * la + lb * lb + 2 * la * lb * math.cos(min(hi[j], math.pi)))
    dist = max(d - r_max, r_min - d, 0.0)
    if dist > _TOL:
        raise UnreachableTargetError(leg, time, dist, f'{task} task {psi:.4f} rad, '
                                     f'{"knee" if j == 2 else "ankle"} range '
                                     f'[{lo[j]:.3f}, {hi[j]:.3f}] rad')
    rel = math.acos(min(1.0, max(-1.0, (d2 - la * la - lb * lb) / (2 * la * lb))))
    base = math.atan2(px, -pz) - math.atan2(lb * math.sin(rel), la + lb * math.cos(rel))
    if task == 'landing':
        th2, th3, th4 = base, rel, psi - base - rel
    else:
        th2, th3, th4 = psi, base - psi, rel
    q = tuple((a + math.pi) % (2 * math.pi) - math.pi for a in (th1, th2, th3, th4))
    if any(q[k] < lo[k] - _TOL or q[k] > hi[k] + _TOL for k in range(4)):
        check_joint_ranges(geo, np.array([q]), np.array([[x, zp]]), leg, np.array([time]))
    return q
