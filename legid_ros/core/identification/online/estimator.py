"""Online identification: fold windows into sufficient statistics, solve warm-started.

The online form of the linear ZMP rows (our rebuild of the ZMP-feedback identification of Wu & Gao
2021; torque and floating-base rows too). Each window's rows (ZMP rows by default) are computed
once and folded into ``H = sum w A^T A``, ``h = sum w A^T b`` with a forgetting weight ``w`` per
sample defined in time (:mod:`.forgetting`: a half-life in seconds, independent of how many rows
are folded); each :meth:`OnlineEstimator.update` solves on those statistics (:mod:`.solve`): the
parameter QP on the standard set, re-solved under the pseudo-inertia LMIs when its solution is
inconsistent, or the bound-constrained Newton on a smaller set (Wu & Gao's reduced set, the
grouped set) whose points are all consistent. The cost of an update does not depend on how long
the estimator has been running.

Rows are divided by ``row_sigma`` (expected noise: 2 mm for ZMP rows, 0.5 N.m for torques,
1 for floating-base rows), so ``reg`` has the meaning of
:mod:`legid_ros.core.identification.solvers.standard`. Joint-torque rows need the contact
wrench of one foot only: samples in double support are dropped from them (counted), as the
offline path does. ZMP rows use the total ZMP and hold in double support.

With ``ankle_ft`` readings, every sample where a foot swings adds that foot's F/T rows
(:mod:`.ankle_ft`): the ZMP alone cannot tell the foot mass from the shank's.

Each update also gives the standard deviations of the core parameters (group masses and COM
offsets) and the poorly determined combinations, from the residual and the information matrix
(:func:`legid_ros.core.identification.uncertainty.normal_uncertainty`).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Dict, Optional

import numpy as np

from legid_ros.core import signals
from legid_ros.core.contact.base_state import support_base_state
from legid_ros.core.errors import BadInputError, LegidError, NotIdentifiableError
from legid_ros.core.identification.identifiability import DEFAULT_MAX_COND, excitation
from legid_ros.core.identification.online.ankle_ft import FT_SIGMA, AnkleFtRows
from legid_ros.core.identification.online.correlation import RowCorrelation
from legid_ros.core.identification.online.forgetting import TimeForgetting
from legid_ros.core.identification.online.reg_choice import HeldOutReg
from legid_ros.core.identification.online.solve import AUTO_SELECT_SAMPLES, make_solver
from legid_ros.core.identification.online.state import restore, state_of
from legid_ros.core.identification.online.window_rows import (sample_mask, unit_rows,
                                                               window_inputs)
from legid_ros.core.identification.parameters.sets import StandardSet
from legid_ros.core.identification.result import IdentResult
from legid_ros.core.identification.rows.linear import GRAVITY, Normal
from legid_ros.core.identification.rows.regressors import compute_regressors
from legid_ros.core.identification.rows.zmp import model_zmp
from legid_ros.core.identification.uncertainty import normal_uncertainty
from legid_ros.core.identification.uncertainty.core import core_reader
from legid_ros.core.inertial import check_consistency
from legid_ros.core.robot import Robot

#: Sets whose prior weight is chosen from held-out seconds when none is given (the batch ZMP
#: Newton's grouped sets, :mod:`.reg_choice`); the reduced and standard sets keep theirs
CHOSEN_REG_SETS = ('grouped', 'grouped_sides', 'auto')

ROW_SIGMA = {'zmp': 0.002, 'torque': 0.5, 'floating': 1.0}
#: Largest magnitude of a folded input (rad, rad/s, rad/s^2, m, N, N.m): rows beyond it are
#: dropped as the non-finite ones (their squares would overflow the statistics)
MAX_INPUT = 1e6
ROWS_PER_SAMPLE = {'zmp': 2}  # torque: nj, floating: nv
UNCERTAINTY_PERIOD_S = 2.0  # [s] of data between two computations of the standard deviations


class OnlineEstimator:
    """Recursive identification from windows of samples.

    Args:
        robot: Floating-base robot.
        method: Row kind: 'zmp' (default), 'torque' or 'floating'.
        param_set: 'standard' (QP, LMI re-solve when inconsistent) or a set of
            :func:`legid_ros.core.identification.solvers.zmp_newton.make_param` ('reduced':
            Wu & Gao 2021's; 'grouped', ...), solved by Newton.
        half_life_s: Forgetting half-life in time [s] (0: remember everything).
        reg: Regularisation weight toward CAD (None: the set's default, see :mod:`.solve`).
        total_mass: Total-mass equality [kg] (default: forgetting-weighted mean of ``fz / g``).
        row_sigma: Row normalisation (default :data:`ROW_SIGMA`).
        pi_cad: Prior parameters (default: the model's).
        use_imu: Base roll/pitch from the IMU quaternion when given.
        window_s: Savitzky-Golay window for missing velocities/accelerations [s].
        max_cond: Excitation threshold; :meth:`update` raises NotIdentifiableError above it.
        min_samples: Samples needed before the first update.
        ft_sigma: Ankle F/T row normalisation ``(force [N], moment [N.m])``: the expected
            noise of the raw reading plus model error (default :data:`FT_SIGMA`).
        uncertainty_period_s: The standard deviations are recomputed when this much data time
            has been folded since they were last computed [s] (0: at every update); in between
            an update carries the last ones, their age in ``info['uncertainty_age_s']``.
        auto_levels: 'auto' set: unit -> level chosen offline (None: chosen once from the
            folded data, :class:`legid_ros.core.identification.online.solve.SetSolver`).
    """

    def __init__(self, robot: Robot, method: str = 'zmp', param_set: str = 'standard',
                 half_life_s: float = 0.0, reg: Optional[float] = None,
                 total_mass: Optional[float] = None, row_sigma: Optional[float] = None,
                 pi_cad: Optional[np.ndarray] = None, use_imu: bool = True,
                 window_s: float = 0.15, max_cond: float = DEFAULT_MAX_COND,
                 min_samples: int = 50, ft_sigma=FT_SIGMA,
                 uncertainty_period_s: float = UNCERTAINTY_PERIOD_S,
                 auto_levels: Optional[dict] = None):
        if not np.isfinite(uncertainty_period_s) or uncertainty_period_s < 0:
            raise BadInputError(f'uncertainty_period_s must be finite and >= 0, got '
                                f'{uncertainty_period_s}')
        if method not in ROW_SIGMA:
            raise BadInputError(f'unknown online method {method!r} ({", ".join(ROW_SIGMA)})')
        self.robot = robot
        self.method = method
        self.forgetting = TimeForgetting(half_life_s)
        self.fixed_total_mass = total_mass
        self.sigma = ROW_SIGMA[method] if row_sigma is None else float(row_sigma)
        self.param = StandardSet(robot, pi_cad)
        self.solver = make_solver(robot, param_set, self.param, reg, auto_levels)
        # the grouped sets' weight from held-out seconds, as the batch ZMP Newton's (reg_choice)
        self._choose_reg = reg is None and method == 'zmp' and param_set in CHOSEN_REG_SETS
        self._ft_sigma = ft_sigma
        AnkleFtRows(robot, self.param.size, ft_sigma)  # validates ft_sigma now
        self.use_imu = use_imu
        self.window_s = window_s
        self.max_cond = max_cond
        self.min_samples = min_samples
        self.uncertainty_period_s = float(uncertainty_period_s)
        self.nj = robot.model.nv - 6
        self.nf = 0 if method == 'zmp' else 2 * self.nj
        self.link_names = robot.body_names
        self.reset()

    @property
    def param_set(self) -> str:
        """Name of the parameter set solved."""
        return self.solver.param_set

    @property
    def reg(self) -> float:
        """Regularisation weight toward CAD [-] (settable)."""
        return self.solver.reg

    @reg.setter
    def reg(self, value: float) -> None:
        self.solver.reg = float(value)
        self._choose_reg, self.reg_choice = False, None  # an explicit weight wins

    def choose_reg_from_data(self) -> None:
        """Choose the weight again from the next held-out seconds (the grouped and auto sets
        of the ZMP rows; others keep theirs)."""
        self._choose_reg = self.method == 'zmp' and self.param_set in CHOSEN_REG_SETS
        self.reg_choice = HeldOutReg(self.param.size, AUTO_SELECT_SAMPLES) \
            if self._choose_reg else None

    @property
    def half_life_s(self) -> float:
        """Forgetting half-life [s] (settable; 0 = remember everything)."""
        return self.forgetting.half_life_s

    @half_life_s.setter
    def half_life_s(self, value: float) -> None:
        self.forgetting = TimeForgetting(value, t_ref=self.forgetting.t_ref)

    @property
    def ft_sigma(self) -> np.ndarray:
        """Ankle F/T row scales ``(force [N], moment [N.m])``."""
        return self.ankle.ft_sigma

    @property
    def ft_rows(self) -> float:
        """Ankle F/T rows folded (forgetting-weighted)."""
        return self.ankle.rows

    @property
    def ft_dropped(self) -> int:
        """Swing samples whose ankle F/T reading was not finite."""
        return self.ankle.dropped

    def reset(self) -> None:
        """Forget all data and the last solution."""
        self.normal = Normal(self.param.size + self.nf)
        self.ankle = AnkleFtRows(self.robot, self.param.size, self._ft_sigma)
        self.mass_sum = 0.0
        self.mass_n = 0.0
        self.x = self.solver.cad_x()
        self.pi = self.param.cad()
        self.full = np.concatenate([self.pi, np.zeros(self.nf)])  # pi and friction
        self.solved = False
        self.correlation = RowCorrelation()
        self.dropped = 0
        self.double_support_dropped = 0
        self.forgetting.t_ref = -np.inf
        self.last_zmp_pred = np.zeros((0, 2))
        self._unc = None
        self._unc_t = -np.inf
        self._core_read = None  # core_reader of the uncertainty's core, built once used
        self._exc = None  # the last excitation report that passed, and its data time [s]
        self._exc_t = -np.inf
        if self._choose_reg:
            self.choose_reg_from_data()
        else:
            self.reg_choice = None

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
                   swing: Optional[Dict[str, np.ndarray]] = None,
                   contact: Optional[Dict[str, np.ndarray]] = None,
                   base_state: Optional[Dict[str, np.ndarray]] = None) -> int:
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
            contact: Per foot, (N,) bool: the foot is in contact. Method 'torque' drops the
                samples with more than one foot in contact (counted in
                ``double_support_dropped``); default: single support everywhere.
            base_state: Floating-base ``{'q', 'v', 'a'}`` (N, nq|nv) computed otherwise (e.g.
                from every stance contact and the IMU), with ``zmp`` in its frame; default:
                from the support sole.

        Returns:
            Number of samples folded (non-finite samples are dropped and counted).

        Raises:
            BadInputError: Wrong shapes, missing inputs, an unknown foot or a foot without an
                F/T frame.
        """
        t, q, qd, qdd, need = window_inputs(self.method, self.nj, self.window_s, t, q, qd, qdd,
                                            zmp, fz, tau, foot_wrench)
        n = t.size
        ft = self.ankle.check(ankle_ft, n)
        free = {foot: sample_mask(swing, foot, n, True) for foot in ft}
        quat = None if (imu_quat is None or not self.use_imu) else np.asarray(imu_quat, float)
        if quat is not None:
            need.append(quat)
        # finite, and no value an overflow away from a non-finite statistic (1e300 rad/s)
        ok = signals.finite_rows(t[:, None]) & signals.finite_rows(*need[1:], limit=MAX_INPUT)
        if fz is not None:
            ok &= np.asarray(fz, float) > signals.MIN_FZ
        self.dropped += int(np.sum(~ok))
        if self.method == 'torque' and contact:
            touching = sum(sample_mask(contact, foot, n, False).astype(int) for foot in contact)
            double = ok & (touching > 1)
            self.double_support_dropped += int(np.sum(double))
            ok &= ~double
        sup = np.broadcast_to(np.asarray(support, dtype=object), (n,))
        idx = np.flatnonzero(ok)
        if idx.size == 0:
            return 0
        decay, w = self.forgetting.advance(t[idx])
        if base_state is not None:
            st = {k: np.asarray(base_state[k], float)[idx] for k in ('q', 'v', 'a')}
        else:
            st = support_base_state(self.robot, q[idx], qd[idx], qdd[idx], sup[idx],
                                    None if quat is None else quat[idx])
        kinds = {'zmp': ('wrench',), 'torque': ('wrench', 'torque'),
                 'floating': ('wrench', 'floating')}[self.method]
        regs = compute_regressors(self.robot, st['q'], st['v'], st['a'], sup[idx], kinds,
                                  tau=None if tau is None else np.asarray(tau, float)[idx],
                                  foot_wrench=None if foot_wrench is None else
                                  {k: np.asarray(v, float)[idx] for k, v in foot_wrench.items()})
        a, b = unit_rows(self.method, self.robot.model.nv, self.nf, self.sigma, regs, idx,
                         zmp, fz, tau, qd)
        per = a.shape[0] // idx.size
        if self.reg_choice is not None:
            self.reg_choice.fold(t[idx], a, b)
        self.normal.fold(a, b, float(np.sum(w)), weights=np.repeat(w, per), forget=decay)
        self.correlation.fold((a @ self.full - b).reshape(idx.size, per), self.solved, decay)
        if fz is not None:  # every row kind's mass equality: the measured weight
            fzs = np.asarray(fz, float)[idx]
            self.mass_sum = decay * self.mass_sum + float(w @ fzs) / GRAVITY
            self.mass_n = decay * self.mass_n + float(np.sum(w))
        self.ankle.decay(decay)
        self.ankle.fold(ft, {f: m[idx] for f, m in free.items()}, idx, sup[idx], st, w)
        self.last_zmp_pred = model_zmp(regs.wrench, self.pi)[0]
        return int(idx.size)

    def update(self) -> IdentResult:
        """Solve on the current statistics (warm start: last solution).

        Raises:
            NotIdentifiableError: Too few samples or poorly excited core.
            SolverNotConvergedError: The solver stopped short of its tolerance (the last
                solution stays).
        """
        t0, c0 = time.perf_counter(), time.thread_time()
        npi = self.param.size
        if self.normal.n < self.min_samples:
            raise NotIdentifiableError(f'only {self.normal.n:.0f} samples folded, need '
                                       f'{self.min_samples}', float('inf'), ['all parameters'])
        hs, gs, recover = self.normal.eliminate(npi)
        hs = hs + self.ankle.normal.H  # F/T rows have no friction columns: Schur unchanged
        gs = gs + self.ankle.normal.h
        bb = self.normal.bb + self.ankle.normal.bb
        # the grouped sets are held toward CAD (what the data cannot tell is reported by the
        # uncertainty); the reduced and standard sets are refused when poorly excited. A
        # report that passed is kept for uncertainty_period_s of data, as the std are
        t_data = self.forgetting.t_ref
        exc_age = t_data - self._exc_t
        if self._exc is None or not 0 <= exc_age < self.uncertainty_period_s:
            self._exc = None  # stays None if the check refuses (raises): checked again next time
            self._exc = excitation(
                self.robot, hs, self.normal.n, self.param.pi_cad, max_cond=self.max_cond,
                raise_error=self.param_set not in ('grouped', 'grouped_sides', 'auto'))
            self._exc_t = t_data
        rep = self._exc
        total = self.total_mass
        self._advance_reg_choice(total)
        out = self.solver.solve(hs, gs, bb, self.normal.n, total, self.x)
        self.x, self.pi = out.x, out.pi
        fr = recover(self.pi)
        full = np.concatenate([self.pi, fr if fr is not None else []])
        self.full, self.solved = full, True
        res2 = max(self.normal.residual_sq(full), 0.0)
        rms = float(np.sqrt(res2 / max(self.normal.n, 1e-12))) * self.sigma
        dropped = {'non-finite or unloaded': self.dropped} if self.dropped else {}
        if self.ankle.dropped:
            dropped['non-finite ankle F/T'] = self.ankle.dropped
        if self.double_support_dropped:
            dropped['double support (torque rows)'] = self.double_support_dropped
        cons = check_consistency(self.pi, self.link_names)
        age = t_data - self._unc_t
        if self._unc is None or not age < self.uncertainty_period_s or age < 0:
            self._unc = self._uncertainty(hs, res2 + self.ankle.normal.residual_sq(self.pi))
            self._unc_t, age = t_data, 0.0
        unc = self._unc
        if unc is not None and age > 0:  # the stds are kept, the values are this estimate's
            if self._core_read is None:
                self._core_read = core_reader(self.robot, self.param.pi_cad,
                                              self._uncertainty_core())
            unc = dataclasses.replace(unc, value=self._core_read(self.pi))
        return IdentResult(
            method=f'online_{self.method}', pi=self.pi.copy(), x=np.asarray(out.x).copy(),
            names=self._set_names(), param_names=self.param.names, total_mass=total,
            condition_number=rep.condition_number, residual_rms=rms,
            solve_time_s=time.perf_counter() - t0, iterations=out.iterations,
            consistency=cons, identifiable=rep.lines, friction=fr,
            n_samples=int(round(self.normal.n)), dropped=dropped, uncertainty=unc,
            info={'status': out.status, 'qp_time_s': out.solve_time_s, 'reg': self.reg,
                  'cpu_time_s': time.thread_time() - c0,
                  'param_set': self.param_set, 'consistent_by': out.consistent_by,
                  'half_life_s': self.half_life_s, 'ankle_ft_rows': float(self.ankle.rows),
                  'uncertainty_age_s': float(age) if np.isfinite(age) else 0.0,
                  'ankle_ft_residual_rms_sigma': self.ankle.residual_rms(self.pi),
                  **self._auto_info(),
                  **({'reg_choice': self.reg_choice.choice.as_info()} if self.reg_choice
                     is not None and self.reg_choice.choice is not None else {})})

    def _advance_reg_choice(self, total: float) -> None:
        """One more fit of the weight's choice from the held-out seconds (:mod:`.reg_choice`),
        begun once enough is folded (on ``auto`` once its levels are chosen); the weight is
        set when the last fit is made, the default stays if no weight could be fitted."""
        rc = self.reg_choice
        if rc is None or rc.choice is not None:
            return
        if rc.ready() and (self.param_set != 'auto' or self.solver.levels is not None):
            ankle = self.ankle.normal
            extra = (np.array(ankle.H, float), np.array(ankle.h, float), float(ankle.bb))

            def solve(h, g, bb, n, reg, x):  # on the statistics of now, over the updates
                keep, self.solver.reg = self.solver.reg, reg
                try:
                    out = self.solver.solve(h + extra[0], g + extra[1], bb + extra[2], n,
                                            total, x)
                finally:
                    self.solver.reg = keep
                return out.x, out.pi
            rc.begin(solve, self.sigma, self.x)
        choice = rc.advance() if rc.pending else None
        if choice is not None:
            self.solver.reg = choice.reg / self.sigma ** 2
            if choice.x is not None and np.shape(choice.x) == np.shape(self.x):
                # the fit at that weight starts the next solve: from the default weight's
                # solution a Newton at 1e-11 m^2 took 70 iterations (181 ms) on the perf run
                self.x = np.array(choice.x, float)

    def _auto_info(self) -> dict:
        """The auto set's levels and, once made, its choice."""
        levels = getattr(self.solver, 'levels', None)
        selection = getattr(self.solver, 'selection', None)
        return {**({'levels': dict(levels)} if levels else {}),
                **({'auto_selection': selection} if selection else {})}

    def _set_names(self):
        return list(getattr(self.solver.param, 'names', self.param.names))

    def _uncertainty_core(self) -> str:
        """The core set of the standard deviations (:func:`normal_uncertainty`'s ``core``)."""
        return self.param_set if self.param_set in ('grouped', 'grouped_sides') \
            else 'grouped' if self.param_set == 'auto' else 'reduced'

    def _uncertainty(self, info: np.ndarray, rss: float):
        """Core standard deviations, or None where the core has none (no link groups)."""
        rows_per = ROWS_PER_SAMPLE.get(self.method, self.nj if self.method == 'torque'
                                       else self.robot.model.nv)
        try:
            core = self._uncertainty_core()
            # neighbouring folded rows share their noise: the residual variance of their
            # average is larger by their correlation time (RowCorrelation)
            return normal_uncertainty(self.robot, self.pi, info, rss * self.correlation.factor,
                                      rows_per * self.normal.n + self.ankle.rows, core=core,
                                      prior=float(self.normal.n) * float(self.reg or 0.0),
                                      pi_cad=self.param.pi_cad)
        except (LegidError, np.linalg.LinAlgError, ValueError):
            return None

    def state_dict(self) -> Dict[str, np.ndarray]:
        """Plain numpy arrays of the whole state (for ``np.savez``; :mod:`.state`)."""
        return state_of(self)

    def load_state_dict(self, state: Dict[str, np.ndarray]) -> None:
        """Restore a state from :meth:`state_dict` (same robot, method and parameter set;
        :func:`.state.restore`)."""
        restore(self, state)
