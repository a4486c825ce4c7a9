"""Stability figures of a MuJoCo biped run: trunk height and tilt, contact forces, foot slip.

Used by :mod:`legid_ros.core.sim.mujoco_biped`; a swap run (support on the right, a
double-support transfer, support on the left) is judged over its single-support excitation,
its transfer moves reported apart.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation


def stance_masks(t: np.ndarray, feet, phases) -> dict:
    """Per foot, the samples it stands on (planned): the right foot only, or by swap phase.

    With a swap, ``'_excitation'`` marks the single-support excitation phases.
    """
    if phases is None:
        return {f: np.full(len(t), f == 'right') for f in feet}
    out = {f: np.zeros(len(t), bool) for f in feet}
    excitation = np.zeros(len(t), bool)
    for k, (name, t0, t1, stance) in enumerate(phases):
        sel = (t >= t0) & ((t < t1) if k < len(phases) - 1 else np.ones(len(t), bool))
        for f in stance:
            out[f][sel] = True
        excitation |= sel & (name in ('right', 'left'))
    out['_excitation'] = excitation
    return out


def _blocks(mask: np.ndarray):
    """Start and end (exclusive) of every run of True in ``mask``."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(int), [0]])))
    return zip(edges[::2], edges[1::2])


def stability(robot, rec: dict, lay, sole_pose: dict,
              physics, touch: dict, stance: dict) -> dict:
    """Stability figures of a run: trunk height and tilt, support contact, foot slip.

    Args:
        robot: The biped (not read; the layout and poses carry what is needed).
        rec: Raw per-sample arrays of the run (``qpos``: MuJoCo positions).
        lay: Where the free joint sits in ``qpos``.
        physics: The run's ``PhysicsConfig`` (fall thresholds).
        sole_pose: Per foot, sole position [m] and rotation matrix (row major), (N, 12).
        touch: Per foot, corner contact forces (N, 4) [N].
        stance: Per foot, the samples the plan stands on it (N,) bool; optional
            ``'_excitation'``: the samples the corner and swing figures cover (default all).

    Returns:
        dict with ``trunk_height_min_m``, ``trunk_height_drop_m``, ``trunk_tilt_max_rad``,
        ``support_corner_force_min_n`` (smallest force of any corner of a foot in single
        support, any time), ``swing_force_max_n`` (largest corner force of a foot while
        neither it nor its partner stands on it), ``support_slip_max_m`` (horizontal sole
        drift from where each stance of the excitation began), ``support_yaw_slip_max_rad``,
        ``transfer_slip_max_m`` (the same over a swap's transfer moves, whose samples the
        benchmarks leave out), ``fell`` (bool).
    """
    a = lay.free_qpos
    z = rec['qpos'][:, a + 2]
    wxyz = rec['qpos'][:, a + 3:a + 7]
    up = Rotation.from_quat(wxyz[:, [1, 2, 3, 0]]).apply([0.0, 0.0, 1.0])
    tilt = np.arccos(np.clip(up[:, 2], -1.0, 1.0))
    slip, yaw_slip, corner, swing, transfer = 0.0, 0.0, np.inf, 0.0, 0.0
    # corner, swing and slip figures over the excitation (the planned single support), not
    # the transfer moves of a swap, where a foot is put down or lifted (reported apart)
    excitation = stance.get('_excitation', np.ones(len(z), bool))
    single = (sum(stance[f].astype(int) for f in sole_pose if f in stance) == 1) & excitation
    for f, pose in sole_pose.items():
        if f not in stance:
            continue
        yaw = np.arctan2(pose[:, 6], pose[:, 3])  # atan2(R10, R00) of the row-major R
        for b0, b1 in _blocks(stance[f] & excitation):
            slip = max(slip, float(np.linalg.norm(pose[b0:b1, :2] - pose[b0, :2],
                                                  axis=1).max()))
            yaw_slip = max(yaw_slip, float(np.abs(yaw[b0:b1] - yaw[b0]).max()))
        for b0, b1 in _blocks(stance[f] & ~excitation):
            transfer = max(transfer, float(np.linalg.norm(pose[b0:b1, :2] - pose[b0, :2],
                                                          axis=1).max()))
        sel = stance[f] & single
        if sel.any():
            corner = min(corner, float(touch[f][sel].min()))
        air = ~stance[f] & single
        if air.any():
            swing = max(swing, float(touch[f][air].max()))
    drop = float(z[0] - z.min())
    fell = bool(drop > physics.fall_height_m or tilt.max() > physics.fall_tilt_rad)
    return {'trunk_height_min_m': float(z.min()), 'trunk_height_drop_m': drop,
            'trunk_tilt_max_rad': float(tilt.max()),
            'support_corner_force_min_n': corner,
            'swing_force_max_n': swing,
            'support_slip_max_m': slip,
            'support_yaw_slip_max_rad': yaw_slip,
            'transfer_slip_max_m': transfer,
            'fell': fell}


def physics_summary(rec: Recording) -> dict:
    """The stability figures stored in a physics recording's meta."""
    keys = ('trunk_height_min_m', 'trunk_height_drop_m', 'trunk_tilt_max_rad',
            'support_corner_force_min_n', 'swing_force_max_n', 'support_slip_max_m',
            'support_yaw_slip_max_rad', 'transfer_slip_max_m', 'fell')
    return {k: rec.meta[k] for k in keys if k in rec.meta}
