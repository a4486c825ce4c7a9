"""One window's inputs checked and its rows scaled to unit variance, for the online estimator
(:mod:`.estimator`): what a window must carry per row method, the per-foot sample masks, and the
ZMP, joint-torque or floating-base rows divided by the rows' expected noise."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import numpy as np

from legid_ros.core import signals
from legid_ros.core.errors import BadInputError
from legid_ros.core.identification.rows.regressors import coulomb_viscous_columns, zmp_rows


def window_inputs(method: str, nj: int, window_s: float, t, q, qd=None, qdd=None, zmp=None,
                  fz=None, tau=None, foot_wrench: Optional[Dict[str, np.ndarray]] = None
                  ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, List[np.ndarray]]:
    """The window's times and joint states, differentiated where not given, and the arrays
    whose rows must be finite.

    Args:
        method: Row method: 'zmp', 'torque' or 'floating'.
        nj: Joints of the model.
        window_s: Savitzky-Golay window of the derivatives not given [s].
        t: Times (N,) [s].
        q: Joint positions (N, nj) [rad].
        qd, qdd: Joint velocities [rad/s] / accelerations [rad/s^2] (N, nj), or None.
        zmp, fz: Measured ZMP (N, 2) [m] and total vertical force (N,) [N] ('zmp').
        tau: Joint efforts (N, nj) [N.m] ('torque', 'floating').
        foot_wrench: Per foot, its F/T wrench (N, 6) [N, N.m] ('floating').

    Returns:
        ``(t, q, qd, qdd, need)``: ``need`` lists ``t[:, None]`` and every array the method
        reads (a sample with a non-finite value in any is dropped).

    Raises:
        BadInputError: A shape that does not fit, or an input the method needs missing.
    """
    t = np.asarray(t, float)
    q = np.atleast_2d(np.asarray(q, float))
    n = t.size
    if q.shape != (n, nj):
        raise BadInputError(f'q has shape {q.shape}, expected ({n}, {nj})')
    if qd is None or qdd is None:
        _, d1, d2 = signals.savgol_derivatives(t, q, window_s)
        qd = d1 if qd is None else np.asarray(qd, float)
        qdd = d2 if qdd is None else np.asarray(qdd, float)
    need = [t[:, None], q, qd, qdd]
    if method == 'zmp':
        if zmp is None or fz is None:
            raise BadInputError('online ZMP identification needs zmp and fz')
        need += [zmp, fz]
    else:
        if tau is None:
            raise BadInputError(f'online {method} identification needs tau')
        need.append(tau)
    if method == 'floating':
        if foot_wrench is None:
            raise BadInputError('online floating-base identification needs foot_wrench')
        need += list(foot_wrench.values())
    return t, q, qd, qdd, need


def sample_mask(masks: Optional[Dict[str, np.ndarray]], foot: str, n: int,
                default: bool) -> np.ndarray:
    """Per-sample bool mask of ``foot`` from ``masks`` (``default`` when absent).

    Raises:
        BadInputError: The foot's mask is not ``(n,)``.
    """
    if masks is None or foot not in masks:
        return np.full(n, default)
    m = np.asarray(masks[foot], bool)
    if m.shape != (n,):
        raise BadInputError(f'mask of foot {foot!r} has shape {m.shape}, expected ({n},)')
    return m


def unit_rows(method: str, nv: int, nf: int, sigma: float, regs, idx: np.ndarray, zmp, fz,
              tau, qd: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Unit-variance rows ``(a, b)`` of the folded samples ``idx``, samples in order.

    Args:
        method: Row method: 'zmp', 'torque' or 'floating'.
        nv: Velocity dimension of the floating-base model.
        nf: Friction columns per joint set (Coulomb and viscous).
        sigma: The rows' expected noise (2 mm for ZMP rows, 0.5 N.m for torques, 1 for
            floating-base rows); rows are divided by it.
        regs: The samples' regressors (:func:`~legid_ros.core.identification.rows.regressors.
            compute_regressors`), already at ``idx``.
        idx: Indices of the folded samples in the window.
        zmp, fz, tau: As :func:`window_inputs` (whole window).
        qd: Joint velocities of the whole window [rad/s].
    """
    if method == 'zmp':
        a = zmp_rows(regs.wrench, np.asarray(zmp, float)[idx], np.asarray(fz, float)[idx]) / sigma
        return a, np.zeros(a.shape[0])
    qdi = qd[idx]
    if method == 'torque':
        a = np.concatenate([np.hstack([regs.torque[k], coulomb_viscous_columns(qdi[k])])
                            for k in range(idx.size)])
        b = np.asarray(tau, float)[idx].reshape(-1)
    else:
        blocks = []
        for k in range(idx.size):
            fr = np.zeros((nv, nf))
            fr[6:] = coulomb_viscous_columns(qdi[k])
            blocks.append(np.hstack([regs.floating[k], fr]))
        a = np.concatenate(blocks)
        b = regs.floating_rhs.reshape(-1)
    return a / sigma, b / sigma
