"""Online identification: fold windows into sufficient statistics, solve a warm-started QP.

The online form of the linear ZMP rows (our rebuild of the ZMP-feedback identification of Wu & Gao
2021; torque and floating-base rows too). Each window's rows (ZMP rows by default) are computed
once and folded into ``H = sum A^T A``, ``h = sum A^T b`` with a forgetting factor per sample; each
:meth:`OnlineEstimator.update` solves the parameter QP of
:class:`legid_ros.core.identification.solvers.qp.ParameterQP` (standard set, total-mass equality,
bounds, regularisation toward CAD) warm-started from the last solution: its cost does not depend on
how long the estimator has been running.

Rows are divided by ``row_sigma`` (expected noise: 2 mm for ZMP rows, 0.5 N.m for torques,
1 for floating-base rows), so ``reg`` has the meaning of
:mod:`legid_ros.core.identification.solvers.standard`.

With ``ankle_ft`` readings (:meth:`OnlineEstimator.add_window`), every sample where a foot
swings adds six rows ``Y_S(q, v, a) pi_foot = [f, n]`` (the foot weighed by its ankle F/T,
:mod:`legid_ros.core.identification.rows.foot_ft`), divided by ``ft_sigma`` (force [N], moment
[N.m]) so they are unit-variance like the other rows. They only touch the foot's 10 columns and are
kept in statistics of their own (same forgetting), added to the main ones at each update: the
ZMP alone cannot tell the foot mass from the shank's, the swinging foot's F/T weighs it.
"""

from __future__ import annotations

import time
from typing import Dict, Optional

import numpy as np

from legid_ros.core import signals
from legid_ros.core.errors import BadInputError
from legid_ros.core.identification.identifiability import DEFAULT_MAX_COND, excitation
from legid_ros.core.identification.parameters.sets import StandardSet
from legid_ros.core.identification.result import IdentResult
from legid_ros.core.identification.rows.foot_ft import feet_regressors, foot_joint
from legid_ros.core.identification.rows.linear import GRAVITY, Normal
from legid_ros.core.identification.rows.regressors import (coulomb_viscous_columns,
                                                           compute_regressors,
                                                           support_base_state, zmp_rows)
from legid_ros.core.identification.rows.zmp import model_zmp
from legid_ros.core.identification.solvers.qp import ParameterQP
from legid_ros.core.identification.solvers.standard import DEFAULT_REG, standard_bounds
from legid_ros.core.inertial import PARAMS_PER_LINK, check_consistency
from legid_ros.core.robot import Robot

ROW_SIGMA = {'zmp': 0.002, 'torque': 0.5, 'floating': 1.0}
FT_SIGMA = (2.0, 0.1)  # ankle F/T row scales: force [N], moment [N.m]


class OnlineEstimator:
    """Recursive identification of the standard parameters from windows of samples.

    Args:
        robot: Floating-base robot.
        method: Row kind: 'zmp' (default), 'torque' or 'floating'.
        forgetting: Forgetting factor per sample in (0, 1] (1: remember everything).
        reg: Regularisation weight toward CAD (dimensionless, see module docstring).
        total_mass: Total-mass equality [kg] (default: running mean of ``fz / g``).
        row_sigma: Row normalisation (default :data:`ROW_SIGMA`).
        pi_cad: Prior parameters (default: the model's).
        use_imu: Base roll/pitch from the IMU quaternion when given.
        window_s: Savitzky-Golay window for missing velocities/accelerations [s].
        max_cond: Excitation threshold; :meth:`update` raises NotIdentifiableError above it.
        min_samples: Samples needed before the first update.
        ft_sigma: Ankle F/T row normalisation ``(force [N], moment [N.m])``: the expected
            noise of the raw reading plus model error (default :data:`FT_SIGMA`).
    """

    def __init__(self, robot: Robot, method: str = 'zmp', forgetting: float = 1.0,
                 reg: float = DEFAULT_REG, total_mass: Optional[float] = None,
                 row_sigma: Optional[float] = None, pi_cad: Optional[np.ndarray] = None,
                 use_imu: bool = True, window_s: float = 0.15,
                 max_cond: float = DEFAULT_MAX_COND, min_samples: int = 50,
                 ft_sigma=FT_SIGMA):
        if method not in ROW_SIGMA:
            raise BadInputError(f'unknown online method {method!r} ({", ".join(ROW_SIGMA)})')
        if not 0.0 < forgetting <= 1.0:
            raise BadInputError(f'forgetting factor {forgetting} not in (0, 1]')
        self.robot = robot
        self.method = method
        self.forgetting = float(forgetting)
        self.reg = float(reg)
        self.fixed_total_mass = total_mass
        self.sigma = ROW_SIGMA[method] if row_sigma is None else float(row_sigma)
        self.ft_sigma = np.broadcast_to(np.asarray(ft_sigma, float), (2,)).copy()
        if not np.all(np.isfinite(self.ft_sigma)) or np.any(self.ft_sigma <= 0):
            raise BadInputError(f'ft_sigma {ft_sigma} must be two positive numbers [N, N.m]')
        self.param = StandardSet(robot, pi_cad)
        self.use_imu = use_imu
        self.window_s = window_s
        self.max_cond = max_cond
        self.min_samples = min_samples
        self.nj = robot.model.nv - 6
        self.nf = 0 if method == 'zmp' else 2 * self.nj
        self.lb, self.ub = standard_bounds(self.param)
        self.link_names = robot.body_names
        self._qp = None
        self._qp_mass = None
        self.reset()

    def reset(self) -> None:
        """Forget all data and the last solution."""
        self.normal = Normal(self.param.size + self.nf)
        self.ft_normal = Normal(self.param.size)  # ankle F/T rows (standard columns only)
        self.ft_rows = 0.0  # ankle F/T rows folded (with the forgetting)
        self.ft_dropped = 0
        self.mass_sum = 0.0
        self.mass_n = 0.0
        self.x = self.param.cad()
        self.dropped = 0
        self.last_zmp_pred = np.zeros((0, 2))
        self._qp = None

    @property
    def total_mass(self) -> float:
        """Total mass used by the equality [kg]."""
        if self.fixed_total_mass is not None:
            return float(self.fixed_total_mass)
        if self.mass_n <= 0:
            return float(self.param.mass_row() @ self.param.cad())
        return self.mass_sum / self.mass_n

    def add_window(self, t: np.ndarray, q: np.ndarray, qd: Optional[np.ndarray] = None,
                   qdd: Optional[np.ndarray] = None, zmp: Optional[np.ndarray] = None,
                   fz: Optional[np.ndarray] = None, imu_quat: Optional[np.ndarray] = None,
                   support='right', tau: Optional[np.ndarray] = None,
                   foot_wrench: Optional[Dict[str, np.ndarray]] = None,
                   ankle_ft: Optional[Dict[str, np.ndarray]] = None,
                   swing: Optional[Dict[str, np.ndarray]] = None) -> int:
        """Fold one window of samples into the statistics.

        Args:
            t: Times [s] (N,).
            q: Joint positions (N, nj) [rad].
            qd, qdd: Joint velocities/accelerations, or None (Savitzky-Golay on the window).
            zmp: Measured ZMP in the support-sole frame (N, 2) [m] (method 'zmp').
            fz: Measured total vertical force (N,) [N].
            imu_quat: IMU orientation [x, y, z, w] (N, 4), optional.
            support: Support foot per sample (N,) or one name.
            tau: Joint efforts (N, nj) [N.m] (methods 'torque', 'floating').
            foot_wrench: Per foot, wrench in its F/T frame (N, 6) (method 'floating').
            ankle_ft: Per foot, the raw ankle F/T reading ``[f, n]`` in its F/T frame (N, 6)
                [N, N.m] (leg-on-foot wrench, :mod:`legid_ros.core.identification.rows.foot_ft`).
                Used on the samples folded where that foot is not ``support`` and ``swing`` allows.
                Samples whose reading is non-finite lose their F/T rows only (counted in
                ``ft_dropped``).
            swing: Per foot of ``ankle_ft``, (N,) bool: the foot touches nothing (e.g. the
                buffer's contact flag is off). Default: every sample where it is not the
                support foot; pass it when the robot walks (double support).

        Returns:
            Number of samples folded (non-finite samples are dropped and counted).

        Raises:
            BadInputError: Wrong shapes, missing inputs, an unknown foot or a foot without an
                F/T frame.
        """
        t = np.asarray(t, float)
        q = np.atleast_2d(np.asarray(q, float))
        n = t.size
        if q.shape != (n, self.nj):
            raise BadInputError(f'q has shape {q.shape}, expected ({n}, {self.nj})')
        if qd is None or qdd is None:
            _, d1, d2 = signals.savgol_derivatives(t, q, self.window_s)
            qd = d1 if qd is None else np.asarray(qd, float)
            qdd = d2 if qdd is None else np.asarray(qdd, float)
        need = [q, qd, qdd]
        if self.method == 'zmp':
            if zmp is None or fz is None:
                raise BadInputError('online ZMP identification needs zmp and fz')
            need += [zmp, fz]
        else:
            if tau is None:
                raise BadInputError(f'online {self.method} identification needs tau')
            need.append(tau)
        if self.method == 'floating':
            if foot_wrench is None:
                raise BadInputError('online floating-base identification needs foot_wrench')
            need += list(foot_wrench.values())
        ft = self._check_ankle_ft(ankle_ft, n)
        free = {}
        for foot in ft:
            free[foot] = np.ones(n, bool) if swing is None or foot not in swing else \
                np.asarray(swing[foot], bool)
            if free[foot].shape != (n,):
                raise BadInputError(f'swing[{foot!r}] has shape {free[foot].shape}, expected '
                                    f'({n},)')
        quat = None if (imu_quat is None or not self.use_imu) else np.asarray(imu_quat, float)
        if quat is not None:
            need.append(quat)
        ok = signals.finite_rows(*need)
        if fz is not None:
            ok &= np.asarray(fz, float) > signals.MIN_FZ
        sup = np.broadcast_to(np.asarray(support, dtype=object), (n,))
        self.dropped += int(np.sum(~ok))
        idx = np.flatnonzero(ok)
        if idx.size == 0:
            return 0
        st = support_base_state(self.robot, q[idx], qd[idx], qdd[idx], sup[idx],
                                None if quat is None else quat[idx])
        kinds = {'zmp': ('wrench',), 'torque': ('wrench', 'torque'),
                 'floating': ('wrench', 'floating')}[self.method]
        regs = compute_regressors(self.robot, st['q'], st['v'], st['a'], sup[idx], kinds,
                                  tau=None if tau is None else np.asarray(tau, float)[idx],
                                  foot_wrench=None if foot_wrench is None else
                                  {k: np.asarray(v, float)[idx] for k, v in foot_wrench.items()})
        lam = self.forgetting ** idx.size
        if self.method == 'zmp':
            fzs = np.asarray(fz, float)[idx]
            a = zmp_rows(regs.wrench, np.asarray(zmp, float)[idx], fzs) / self.sigma
            b = np.zeros(a.shape[0])
            self.mass_sum = lam * self.mass_sum + float(np.sum(fzs)) / GRAVITY
            self.mass_n = lam * self.mass_n + idx.size
        else:
            qdi = qd[idx]
            if self.method == 'torque':
                a = np.concatenate([np.hstack([regs.torque[k], coulomb_viscous_columns(qdi[k])])
                                    for k in range(idx.size)])
                b = np.asarray(tau, float)[idx].reshape(-1)
            else:
                blocks = []
                for k in range(idx.size):
                    fr = np.zeros((self.robot.model.nv, self.nf))
                    fr[6:] = coulomb_viscous_columns(qdi[k])
                    blocks.append(np.hstack([regs.floating[k], fr]))
                a = np.concatenate(blocks)
                b = regs.floating_rhs.reshape(-1)
            a, b = a / self.sigma, b / self.sigma
        self.normal.fold(a, b, idx.size, forget=lam)
        self._fold_ankle_ft(ft, {f: m[idx] for f, m in free.items()}, idx, sup[idx], st, lam)
        self.last_zmp_pred = model_zmp(regs.wrench, self.x)[0]
        return int(idx.size)

    def _check_ankle_ft(self, ankle_ft, n: int) -> Dict[str, np.ndarray]:
        """Validated ankle F/T readings ``{foot: (n, 6)}`` (empty without)."""
        if ankle_ft is None:
            return {}
        if not isinstance(ankle_ft, dict):
            raise BadInputError(f'ankle_ft must be a dict foot -> (N, 6), got '
                                f'{type(ankle_ft).__name__}')
        out = {}
        for foot, w in ankle_ft.items():
            foot_joint(self.robot, foot)  # BadInputError: unknown foot or no F/T frame
            w = np.asarray(w, float)
            if w.shape != (n, 6):
                raise BadInputError(f'ankle_ft[{foot!r}] has shape {w.shape}, expected ({n}, 6)')
            out[foot] = w
        return out

    def _fold_ankle_ft(self, ft: Dict[str, np.ndarray], free: Dict[str, np.ndarray],
                       idx: np.ndarray, sup: np.ndarray, st: Dict[str, np.ndarray],
                       lam: float) -> None:
        """Fold the swing feet's ankle F/T rows (same forgetting ``lam`` as the main rows)."""
        self.ft_normal.H *= lam
        self.ft_normal.h *= lam
        self.ft_normal.bb *= lam
        self.ft_rows *= lam
        if not ft:
            return
        scale = np.repeat(1.0 / self.ft_sigma, 3)  # per row: force [1/N], moment [1/(N.m)]
        use = {}
        for foot, w in ft.items():
            swing = (sup != foot) & free[foot]
            good = np.isfinite(w[idx]).all(axis=1)
            self.ft_dropped += int(np.sum(swing & ~good))
            if np.any(swing & good):
                use[foot] = np.flatnonzero(swing & good)
        if not use:
            return
        ks = np.unique(np.concatenate(list(use.values())))
        pos = {k: i for i, k in enumerate(ks)}
        regs = feet_regressors(self.robot, st['q'][ks], st['v'][ks], st['a'][ks], list(use))
        for foot, rows in use.items():
            y = regs[foot][[pos[k] for k in rows]] * scale[None, :, None]  # (m, 6, 10)
            b = ft[foot][idx[rows]] * scale[None, :]
            a = y.reshape(-1, PARAMS_PER_LINK)
            b = b.reshape(-1)
            j0 = PARAMS_PER_LINK * (foot_joint(self.robot, foot)[0] - 1)
            cols = slice(j0, j0 + PARAMS_PER_LINK)
            self.ft_normal.H[cols, cols] += a.T @ a
            self.ft_normal.h[cols] += a.T @ b
            self.ft_normal.bb += float(b @ b)
            self.ft_rows += a.shape[0]

    def update(self) -> IdentResult:
        """Solve the parameter QP on the current statistics (warm start: last solution).

        Raises:
            NotIdentifiableError: Too few samples or poorly excited core.
        """
        from legid_ros.core.errors import NotIdentifiableError

        t0 = time.perf_counter()
        npi = self.param.size
        if self.normal.n < self.min_samples:
            raise NotIdentifiableError(f'only {self.normal.n:.0f} samples folded, need '
                                       f'{self.min_samples}', float('inf'), ['all parameters'])
        hs, gs, recover = self.normal.eliminate(npi)
        hs = hs + self.ft_normal.H  # F/T rows have no friction columns: Schur unchanged
        gs = gs + self.ft_normal.h
        rep = excitation(self.robot, hs, self.normal.n, self.param.pi_cad,
                         max_cond=self.max_cond)
        total = self.total_mass
        if self._qp is None:
            self._qp = ParameterQP(self.param.cad(), self.param.scales(), self.lb, self.ub,
                                   self.param.mass_row(), total, self.reg, eps=1e-5,
                                   polish=False)
        elif abs(total - self._qp_mass) > 1e-9:
            self._qp.set_total(total)
        self._qp_mass = total
        sol = self._qp.solve(hs, gs, self.normal.n, warm=self.x, fast=True)
        self.x = sol.x
        fr = recover(self.x)
        full = np.concatenate([self.x, fr if fr is not None else []])
        res2 = max(self.normal.residual_sq(full), 0.0)
        rms = float(np.sqrt(res2 / max(self.normal.n, 1e-12))) * self.sigma
        ft_rms = (float(np.sqrt(max(self.ft_normal.residual_sq(self.x), 0.0) / self.ft_rows))
                  if self.ft_rows > 0 else float('nan'))
        dropped = {'non-finite or unloaded': self.dropped} if self.dropped else {}
        if self.ft_dropped:
            dropped['non-finite ankle F/T'] = self.ft_dropped
        cons = check_consistency(self.x, self.link_names)
        return IdentResult(
            method=f'online_{self.method}', pi=self.x.copy(), x=self.x.copy(),
            names=self.param.names, param_names=self.param.names, total_mass=total,
            condition_number=rep.condition_number, residual_rms=rms,
            solve_time_s=time.perf_counter() - t0, iterations=sol.iterations, consistency=cons,
            identifiable=rep.lines, friction=fr, n_samples=int(round(self.normal.n)),
            dropped=dropped,
            info={'status': sol.status, 'qp_time_s': sol.solve_time_s, 'reg': self.reg,
                  'forgetting': self.forgetting, 'ankle_ft_rows': float(self.ft_rows),
                  'ankle_ft_residual_rms_sigma': ft_rms})

    def state_dict(self) -> Dict[str, np.ndarray]:
        """Plain numpy arrays of the whole state (for ``np.savez``)."""
        return {'H': self.normal.H.copy(), 'h': self.normal.h.copy(),
                'bb': np.array(self.normal.bb), 'n': np.array(self.normal.n),
                'x': self.x.copy(), 'mass_sum': np.array(self.mass_sum),
                'mass_n': np.array(self.mass_n), 'dropped': np.array(self.dropped),
                'method': np.array(self.method), 'forgetting': np.array(self.forgetting),
                'reg': np.array(self.reg), 'sigma': np.array(self.sigma),
                'ft_H': self.ft_normal.H.copy(), 'ft_h': self.ft_normal.h.copy(),
                'ft_bb': np.array(self.ft_normal.bb), 'ft_rows': np.array(self.ft_rows),
                'ft_dropped': np.array(self.ft_dropped), 'ft_sigma': self.ft_sigma.copy()}

    def load_state_dict(self, state: Dict[str, np.ndarray]) -> None:
        """Restore a state from :meth:`state_dict` (same robot and method)."""
        if str(state['method']) != self.method or state['H'].shape != self.normal.H.shape:
            raise BadInputError(f'state is for method {str(state["method"])!r} with '
                                f'{state["H"].shape[0]} columns; estimator: {self.method!r} '
                                f'with {self.normal.H.shape[0]}')
        self.normal.H = np.array(state['H'], float)
        self.normal.h = np.array(state['h'], float)
        self.normal.bb = float(state['bb'])
        self.normal.n = float(state['n'])
        self.x = np.array(state['x'], float)
        self.mass_sum = float(state['mass_sum'])
        self.mass_n = float(state['mass_n'])
        self.dropped = int(state['dropped'])
        self.forgetting = float(state['forgetting'])
        self.reg = float(state['reg'])
        self.sigma = float(state['sigma'])
        if 'ft_H' in state:  # states saved before the ankle F/T rows have none
            self.ft_normal.H = np.array(state['ft_H'], float)
            self.ft_normal.h = np.array(state['ft_h'], float)
            self.ft_normal.bb = float(state['ft_bb'])
            self.ft_rows = float(state['ft_rows'])
            self.ft_dropped = int(state['ft_dropped'])
            self.ft_sigma = np.array(state['ft_sigma'], float)
        else:
            self.ft_normal = Normal(self.param.size)
            self.ft_rows, self.ft_dropped = 0.0, 0
        self._qp = None
