"""The yaw of an IMU's reference in the world its foot forces are expressed in
(``imu.heading_rad``), from the moment balance about the COM (``legid describe --bag``,
``legid check``).

World-axes foot forces need the IMU's heading in their world: about the COM the feet's wrenches
give the rate of the angular momentum, and turning them by the wrong yaw leaves a moment over.
:func:`heading_correction` finds the yaw that balances them; :func:`heading_estimate` adds its
std, from contiguous parts of the rest samples, so that a heading the data cannot tell from 0
is not written (a standing quadruped's feet push little sideways: Solo12's estimate is
+- 1 mrad).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

import numpy as np

from legid_ros.core.conventions.consistency import WorldView, _rest

HEADING_BLOCKS = 8  # contiguous blocks of the rest samples behind the heading's std
BALANCE_FILTER_HZ = 2.0  # [Hz] low-pass of the moment balance (the momentum's rate is noisy)
INFO_LEVER = 0.1  # [m] a horizontal force's lever against the feet's moments


def _skew(x: np.ndarray) -> np.ndarray:
    """(..., 3, 3) matrices ``S`` with ``S y = x cross y``."""
    zero = np.zeros_like(x[..., 0])
    return np.stack([np.stack([zero, -x[..., 2], x[..., 1]], -1),
                     np.stack([x[..., 2], zero, -x[..., 0]], -1),
                     np.stack([-x[..., 1], x[..., 0], zero], -1)], -2)


def _momentum_rate(v: WorldView) -> np.ndarray:
    """(N, 3) rate of the centroidal angular momentum per view sample, world axes [N.m].

    The CAD model's, from the joint positions and velocities and the IMU's rates (the base's
    linear velocity does not change the momentum about the COM), differentiated in time.
    """
    import pinocchio as pin

    model = v.robot.model
    data = model.createData()
    q, vel = pin.neutral(model), np.zeros(model.nv)
    gyro_b = np.einsum('nij,nj->ni', v.r_bf, v.gyro)  # [rad/s] base axes
    mom = np.zeros((len(v.idx), 3))  # [N.m.s]
    for k in range(len(v.idx)):
        q[7:], vel[3:6], vel[6:] = v.joints[k], gyro_b[k], v.velocities[k]
        pin.computeCentroidalMomentum(model, data, q, vel)
        mom[k] = v.r_wb[k] @ data.hg.angular
    return np.gradient(mom, v.t, axis=0) if len(v.t) > 2 else np.zeros_like(mom)


def _low_pass(x: np.ndarray, t: np.ndarray, cutoff_hz: float = BALANCE_FILTER_HZ) -> np.ndarray:
    """``x`` (time first) low-passed at ``cutoff_hz``, forward and back (no lag); unchanged
    when the rate cannot carry it or the series is too short."""
    from scipy.signal import butter, filtfilt

    if len(t) < 16:
        return x
    rate = 1.0 / float(np.median(np.diff(t)))  # [Hz]
    if not np.isfinite(rate) or cutoff_hz >= 0.45 * rate:
        return x
    b, a = butter(2, cutoff_hz / (0.5 * rate))
    return filtfilt(b, a, x, axis=0)


@dataclass
class _Balance:
    """The moment balance about the COM of every view sample, its world-axes wrenches turned
    by a yaw ``t``: ``parts[0] + cos t parts[1] + sin t parts[2]`` (each (N, 3) [N.m], the
    centroidal momentum's rate taken out of ``parts[0]``), the CAD COM offset's moment per
    metre (``lever``, (N, 3, 3) [N]) and each sample's horizontal force and moment (``info``
    (N,) [N.m]), all low-passed alike."""

    parts: List[np.ndarray]
    lever: np.ndarray
    info: np.ndarray
    point: bool


def _balance(v: WorldView) -> Optional[_Balance]:
    """The moment balance of :func:`_heading` (None without world-axes wrenches on every
    foot's topic)."""
    import pinocchio as pin

    robot = v.robot
    feet = [f for f, foot in robot.feet.items() if foot.expressed_in == 'world'
            and f in v.force_w]
    if not feet or len(v.force_w) != len(robot.feet) or len(v.moment_w) != len(robot.feet):
        return None
    data = robot.model.createData()
    q = pin.neutral(robot.model)
    at = {f: robot.frame_id(foot.sole_frame if foot.contact == 'point' else foot.wrench_frame)
          for f, foot in robot.feet.items()}  # where each force acts: contact point, F/T frame
    r = np.zeros((len(v.idx), len(robot.feet), 3))  # [m] from the COM, world axes
    for k in range(len(v.idx)):
        q[7:] = v.joints[k]
        c = v.r_wb[k] @ pin.centerOfMass(robot.model, data, q)
        r[k] = [v.world[at[f]][1][k] - c for f in robot.feet]
    f = np.stack([v.force_w[f_] for f_ in robot.feet], axis=1)
    n = np.stack([v.moment_w[f_] for f_ in robot.feet], axis=1)
    turned = np.array([f_ in feet for f_ in robot.feet])[None, :, None]
    info = (np.linalg.norm(np.where(turned, f, 0.0)[..., :2], axis=2) * INFO_LEVER
            + np.linalg.norm(np.where(turned, n, 0.0)[..., :2], axis=2)).sum(axis=1)

    def parts(x):  # x = P0 x + cos t P1 x + sin t P2 x for the turned feet's vectors
        zero = np.zeros_like(x[..., 0])
        return (np.where(turned, np.stack([zero, zero, x[..., 2]], -1), x),
                np.where(turned, np.stack([x[..., 0], x[..., 1], zero], -1), 0.0),
                np.where(turned, np.stack([-x[..., 1], x[..., 0], zero], -1), 0.0))
    m = [(np.cross(r, fp) + npart).sum(axis=1) for fp, npart in zip(parts(f), parts(n))]
    m[0] = m[0] - _momentum_rate(v)
    # the COM is CAD's: a true COM off by a constant d (base axes) adds F x (R_wb d) to the
    # moment (F the feet's total force), which a yaw would otherwise take up (Talos's 5 mm
    # were 0.7 deg): fitted alongside, per yaw, by projecting it out (not on the vertical
    # moment alone: at rest F is nearly vertical and it does not see d)
    p0, p1, _ = parts(f)
    total = (p0 + p1).sum(axis=1)  # (N, 3) the total force unturned (the weight dominates)
    lever = np.einsum('kij,kjl->kil', _skew(total), v.r_wb)
    return _Balance([_low_pass(x, v.t) for x in m], _low_pass(lever, v.t), info,
                    all(robot.feet[f_].contact == 'point' for f_ in feet))


def _heading(v: WorldView, keep: Optional[np.ndarray] = None,
             bal: Optional[_Balance] = None) -> Optional[float]:
    """Yaw [rad] to add to ``imu.heading_rad`` so that the world-axes foot wrenches balance
    the moments about the COM (None without world-axes wrenches, quiet samples or horizontal
    force or moment).

    About the COM the feet's wrenches (a point foot's force at its contact point, a flat
    foot's wrench about its F/T frame's origin) give the rate of the centroidal angular
    momentum (the CAD model's, from the joints and the IMU's rates: taking it out turned
    Talos's estimate from 7 mrad off to 0.5 mrad on a 40 s standing excitation). The
    world-axes wrenches turned by a yaw ``t`` give a moment linear in (1, cos t, sin t): the
    squared norm of the balance summed over the quiet samples (small rates and specific force
    near g, where the model's momentum is least off) is a quadratic form in them, minimised on
    the circle (a fine grid, then refined). The COM is the CAD model's: a constant offset of
    the true COM (base axes) is fitted alongside by projecting its moments out (a CAD trunk
    COM 2 cm off turned Talos's estimate by 6.4 deg without it, 0.6 deg with it). Point feet:
    the vertical moment only (horizontal forces on horizontal levers; it does not depend on
    where the COM is, the horizontal ones do through the CAD COM); flat feet: every component,
    their moments turning too (a humanoid standing still pushes little sideways).

    Args:
        v: The recording's view (every sample, in time order).
        keep: (N,) samples that may be used (None: all).
        bal: :func:`_balance` of ``v`` when already computed.
    """
    bal = _balance(v) if bal is None else bal
    if bal is None:
        return None
    rest = np.flatnonzero(_rest(v) & (True if keep is None else keep))
    if rest.size < 10 or np.median(bal.info[rest]) < 0.005 * v.weight * INFO_LEVER:
        return None
    m = [p[rest] for p in bal.parts]
    lever_cols = bal.lever[rest]

    def gram(axes):  # of the three parts' moments on ``axes``, the COM's offset out
        mp = [a[:, axes].reshape(-1) for a in m]
        if axes.start == 0:
            basis_q, _ = np.linalg.qr(lever_cols[:, axes, :].reshape(-1, 3))
            mp = [a - basis_q @ (basis_q.T @ a) for a in mp]
        return np.array([[float(a @ b) for b in mp] for a in mp])

    def cost(theta, g):
        basis = np.stack([np.ones_like(theta), np.cos(theta), np.sin(theta)])
        return np.einsum('in,ij,jn->n', basis, g, basis)
    g_whole = gram(slice(0, 3))
    g_fit = gram(slice(2, 3)) if bal.point else g_whole
    grid = np.linspace(-np.pi, np.pi, 3600, endpoint=False)
    best = grid[np.argmin(cost(grid, g_fit))]
    fine = best + np.linspace(-0.002, 0.002, 401)  # [rad] around the grid's best
    best = fine[np.argmin(cost(fine, g_fit))]
    if bal.point:  # the vertical moment leaves a half turn open: the whole moment closes it
        twins = np.array([best, best + np.pi])
        best = twins[np.argmin(cost(twins, g_whole))]
    return -float(np.arctan2(np.sin(best), np.cos(best)))  # the wrenches turned back: -best


def heading_correction(robot, rec) -> Optional[float]:
    """Yaw [rad] to add to the description's ``imu.heading_rad`` (world-axes forces only)."""
    v = WorldView(robot, rec, 'wrench', max_samples=rec.n)  # every sample: a finer estimate
    return _heading(v) if len(v.idx) >= 10 else None


def heading_estimate(robot, rec, blocks: int = HEADING_BLOCKS
                     ) -> Optional[Tuple[float, float]]:
    """:func:`heading_correction` with its std [rad]: the spread of the estimates of
    ``blocks`` contiguous parts of the rest samples over ``sqrt(blocks)`` (each part's
    estimate taken modulo the half turn a point foot leaves open, against the whole's); the
    std is inf when fewer than 3 parts give one. None where there is no estimate."""
    v = WorldView(robot, rec, 'wrench', max_samples=rec.n)
    if len(v.idx) < 10:
        return None
    bal = _balance(v)
    turn = _heading(v, bal=bal)
    if turn is None:
        return None
    period = np.pi if all(robot.feet[f].contact == 'point' for f in robot.feet
                          if robot.feet[f].expressed_in == 'world') else 2 * np.pi
    rest = np.flatnonzero(_rest(v))
    devs = []
    for part in np.array_split(rest, blocks):
        keep = np.zeros(len(v.idx), bool)
        keep[part] = True
        est = _heading(v, keep, bal) if part.size >= 10 else None
        if est is not None:
            devs.append((est - turn + period / 2) % period - period / 2)
    std = float(np.std(devs, ddof=1) / np.sqrt(len(devs))) if len(devs) >= 3 else np.inf
    return float(turn), std
