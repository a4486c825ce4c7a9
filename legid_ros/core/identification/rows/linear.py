"""Rows linear in the parameters, their sufficient statistics, and the constrained LS solve.

Row kinds (``A x = b`` with ``x = [pi, friction]``):

- 'zmp': two rows per sample from the ZMP feedback of Wu & Gao 2021
  (:func:`legid_ros.core.identification.rows.regressors.zmp_rows`), ``b = 0``, in metres; the
  total-mass equality makes the homogeneous problem well posed.
- 'torque': joint torques with the support foot as the fixed base plus viscous and Coulomb
  friction columns, ``b = tau`` (double-support samples dropped).
- 'floating': the Tencent patent application 2022's ``Y pi + [0; F] f = S^T tau + J_ft^T
  w_ft`` (base and joint rows;
  the measured efforts include the friction torque ``F f``).

Friction columns are eliminated by a Schur complement before the QP (so every QP is in the
standard parameters only) and recovered afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from legid_ros.core.errors import BadInputError
from legid_ros.core.identification.prepare import Samples
from legid_ros.core.identification.rows.regressors import (Regressors, compute_regressors,
                                                           coulomb_viscous_columns, zmp_rows)
from legid_ros.core.robot import Robot

GRAVITY = 9.81  # [m/s^2]


@dataclass
class Rows:
    """Stacked rows of one kind.

    Attributes:
        A: (m, P + nf) rows.
        b: (m,) right-hand side.
        group: (m,) row group (WLS weights are per group: joint, axis, ...).
        n_samples: Samples behind the rows.
        nf: Number of trailing friction columns.
        kind: 'zmp', 'torque' or 'floating'.
    """

    A: np.ndarray
    b: np.ndarray
    group: np.ndarray
    n_samples: int
    nf: int
    kind: str


def regressors_for(samples: Samples, robot: Robot, kinds) -> Regressors:
    """Compute the regressors the given row kinds need, in one pass."""
    need = {'wrench'}
    if 'torque' in kinds:
        need.add('torque')
    if 'floating' in kinds:
        need.add('floating')
    return compute_regressors(robot, samples.q, samples.v, samples.a, samples.support, need,
                              tau=samples.tau, foot_wrench=samples.foot_wrench,
                              double_support=samples.double_support)


def build_rows(samples: Samples, robot: Robot, kind: str,
               regs: Optional[Regressors] = None, friction: bool = True) -> Rows:
    """Rows of one kind for all samples (see the module docstring)."""
    if regs is None:
        regs = regressors_for(samples, robot, [kind])
    n = samples.n
    nj = robot.model.nv - 6
    qd = samples.v[:, 6:]
    if kind == 'zmp':
        a = zmp_rows(regs.wrench, samples.zmp, samples.fz)
        return Rows(a, np.zeros(2 * n), np.tile([0, 1], n), n, 0, kind)
    nf = 2 * nj if friction else 0
    if kind == 'torque':
        if regs.torque is None:
            raise BadInputError('torque regressors were not computed')
        ok = ~samples.double_support & np.isfinite(samples.tau).all(axis=1)
        idx = np.flatnonzero(ok)
        if idx.size == 0:
            raise BadInputError('no single-support samples with joint efforts')
        blocks = [regs.torque[idx].reshape(-1, regs.torque.shape[2])]
        if friction:
            blocks.append(np.concatenate([coulomb_viscous_columns(qd[k]) for k in idx]))
        return Rows(np.hstack(blocks), samples.tau[idx].reshape(-1),
                    np.tile(np.arange(nj), idx.size), idx.size, nf, kind)
    if kind == 'floating':
        if regs.floating is None:
            raise BadInputError('floating-base regressors were not computed')
        nv = robot.model.nv
        blocks = [regs.floating.reshape(-1, regs.floating.shape[2])]
        if friction:
            fr = np.zeros((n, nv, nf))
            for k in range(n):
                fr[k, 6:] = coulomb_viscous_columns(qd[k])
            blocks.append(fr.reshape(-1, nf))
        return Rows(np.hstack(blocks), regs.floating_rhs.reshape(-1),
                    np.tile(np.arange(nv), n), n, nf, kind)
    raise BadInputError(f'unknown row kind {kind!r} (zmp, torque, floating)')


class Normal:
    """Sufficient statistics ``H = sum w A^T A``, ``h = sum w A^T b``, ``bb``, sample count.

    Args:
        size: Number of columns.
    """

    def __init__(self, size: int):
        self.H = np.zeros((size, size))
        self.h = np.zeros(size)
        self.bb = 0.0
        self.n = 0.0

    def fold(self, a: np.ndarray, b: np.ndarray, n_samples: float, weights=None,
             forget: float = 1.0) -> None:
        """``stats <- forget * stats + rows`` (weights per row, default 1)."""
        aw = a if weights is None else a * weights[:, None]
        self.H = forget * self.H + aw.T @ a
        self.h = forget * self.h + aw.T @ b
        self.bb = forget * self.bb + float(b @ (b if weights is None else weights * b))
        self.n = forget * self.n + n_samples

    def eliminate(self, npi: int):
        """Schur complement on the trailing columns (friction).

        Returns:
            ``(H_pi, h_pi, recover)`` where ``recover(pi)`` gives the trailing unknowns.
        """
        if npi == self.h.size:
            return self.H, self.h, lambda pi: None
        hpp, hpf = self.H[:npi, :npi], self.H[:npi, npi:]
        hff = self.H[npi:, npi:] + 1e-12 * np.eye(self.h.size - npi)
        hp, hf = self.h[:npi], self.h[npi:]
        k = np.linalg.solve(hff, np.column_stack([hpf.T, hf]))
        hs = hpp - hpf @ k[:, :-1]
        gs = hp - hpf @ k[:, -1]

        def recover(pi):
            return np.linalg.solve(hff, hf - hpf.T @ pi)
        return 0.5 * (hs + hs.T), gs, recover

    def residual_sq(self, x: np.ndarray) -> float:
        """Weighted sum of squared residuals at ``x`` (all columns)."""
        return float(x @ self.H @ x - 2 * self.h @ x + self.bb)


def group_rms(rows: Rows, x: np.ndarray) -> np.ndarray:
    """RMS residual per row group."""
    r = rows.A @ x - rows.b
    groups = np.unique(rows.group)
    return np.array([np.sqrt(np.mean(r[rows.group == g] ** 2)) for g in groups])


def group_weights(rows: Rows, x: np.ndarray, floor: float = 1e-9,
                  rel_floor: float = 0.0) -> np.ndarray:
    """WLS weight per row: 1 / (RMS residual of its group at ``x``)^2, each RMS floored at
    ``floor`` plus ``rel_floor`` times the largest group's RMS (a group the fit reproduces
    exactly does not take every weight)."""
    rms = group_rms(rows, x)
    rms = np.maximum(rms, floor + rel_floor * rms.max(initial=0.0))
    return 1.0 / rms[rows.group] ** 2


def fold_rows(rows: Rows, weights: Optional[np.ndarray] = None) -> Normal:
    """Sufficient statistics of all rows (optionally weighted)."""
    normal = Normal(rows.A.shape[1])
    normal.fold(rows.A, rows.b, rows.n_samples, weights=weights)
    return normal


def total_mass_from_forces(samples: Samples, robot: Optional[Robot] = None) -> float:
    """Total mass [kg] = mean measured vertical force / (g + mean vertical COM acceleration).

    The vertical momentum gives ``fz = M (g + z''_com)`` at every sample. Over a whole run the
    COM acceleration averages out, but over the samples kept (those near touch-downs and
    lift-offs dropped, where the COM decelerates) it does not: with ``robot``, its mean over
    the samples is taken from the kinematics (the robot model's mass distribution); without,
    it is taken as 0.
    """
    acc = 0.0
    if robot is not None and samples.n:
        import pinocchio as pin
        model = robot.model
        data = model.createData()
        zdd = np.empty(samples.n)
        for k, (q, v, a) in enumerate(zip(samples.q, samples.v, samples.a)):
            pin.centerOfMass(model, data, q, v, a)
            zdd[k] = data.acom[0][2]
        acc = float(zdd.mean())
    return float(np.mean(samples.fz) / (GRAVITY + acc))
