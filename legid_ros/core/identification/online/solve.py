"""Solving the online statistics: physically consistent by constraint, in any parameter set.

Two solvers share the statistics ``H = sum w A^T A``, ``h = sum w A^T b`` (standard columns,
nuisance columns eliminated):

- :class:`StandardSolver` (parameter set 'standard'): the parameter QP (total-mass equality,
  mass bounds, regularisation toward CAD; the cost of
  :class:`legid_ros.core.identification.solvers.qp.ParameterQP`) solved exactly by a dense
  active-set method. When its solution fails the physical-consistency check, the same cost is
  minimised under the pseudo-inertia LMIs: by cutting planes kept from one update to the next
  (:class:`legid_ros.core.identification.solvers.lmi_cuts.LmiCutQP`, a fraction of a
  millisecond once the cuts are in place), and by the SDP built once
  (:class:`legid_ros.core.identification.solvers.sdp.ConsistencySDP`) if the cuts do not
  settle. The published solution is always the minimiser of a consistent problem, never a
  substitution.
- :class:`SetSolver` (any other set of :func:`legid_ros.core.identification.solvers.zmp_newton.
  make_param`, e.g. Wu & Gao 2021's reduced set): the bound-constrained Newton of
  :mod:`legid_ros.core.identification.solvers.newton` on the same quadratic cost mapped into the
  set, warm-started from the last solution. Positive masses and the CAD inertia about each COM
  make every point of these sets physically consistent.

Both return a :class:`SolveOutcome`; a solver that does not reach its tolerance raises
:class:`legid_ros.core.errors.SolverNotConvergedError` (the caller keeps its last solution).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Optional

import numpy as np

from legid_ros.core.errors import SolverNotConvergedError
from legid_ros.core.identification.parameters.sets import StandardSet
from legid_ros.core.identification.solvers.newton import newton_solve
from legid_ros.core.identification.solvers.lmi_cuts import CutsNotSettledError, LmiCutQP
from legid_ros.core.identification.solvers.qp import scaled_cost
from legid_ros.core.identification.solvers.sdp import ConsistencySDP
from legid_ros.core.identification.solvers.standard import DEFAULT_REG, standard_bounds
from legid_ros.core.identification.solvers.zmp_newton import (NormalObjective, make_param,
                                                              param_bounds)

# Regularisation of the set solvers on unit-variance ZMP rows: Wu & Gao's cost in [m^2] with
# DEFAULT_REG_M2 = 1e-7 m^2 over a row sigma of 2 mm, i.e. the batch zmp_newton prior.
SET_REG = 1e-7 / 0.002 ** 2
#: Folded samples before the auto set's levels are chosen (30 s at the 100 Hz folding rate)
AUTO_SELECT_SAMPLES = 3000
#: Folded samples per independent row in the online F-test: ``legid bench autoset`` measures
#: an integrated autocorrelation time of 20-22 rows (0.1 s) per row group for the ZMP rows of
#: Talos in MuJoCo at 200 Hz; at the 100 Hz folding rate about 10.5 rows per group, two row
#: groups (x, y) per sample
AUTO_SAMPLES_PER_EFFECTIVE = 5.0
#: The set solvers stop when the step still available is under this fraction of a standard
#: deviation (Mahalanobis): near the minimum the model's decrease ``pred`` and the covariance
#: ``2 sigma^2 B^-1`` (``sigma^2 = f / n`` per row) give ``d^2 = pred n / f``, so the
#: Newton tolerance relative to the cost is ``fraction^2 / n``. A new window moves the
#: solution by far more; the next update goes on from there.
STOP_STEP_STD_FRACTION = 0.05


@dataclass
class SolveOutcome:
    """One online solve.

    Attributes:
        pi: Standard parameters of the solution (10 per link).
        x: Solution in the solver's parameter set.
        status: Solver status ('solved', 'converged', ...).
        iterations: Solver iterations.
        solve_time_s: Time inside the solver(s) [s].
        consistent_by: 'qp' (the QP's own solution is consistent), 'lmi' (solved under the
            pseudo-inertia LMIs), 'parameterisation' (every point of the set is consistent) or
            'off' (consistency step switched off: the plain QP, for comparisons).
    """

    pi: np.ndarray
    x: np.ndarray
    status: str
    iterations: int
    solve_time_s: float
    consistent_by: str


class StandardSolver:
    """QP on the standard set, solved under the LMIs when its solution is inconsistent.

    Args:
        param: The standard set (its CAD values are the prior).
        link_names: Link names of the parameter blocks (consistency report).
        reg: Regularisation weight toward CAD [-].
        consistency: Enforce the pseudo-inertia LMIs (False: the plain QP, for comparisons).
    """

    param_set = 'standard'

    def __init__(self, param: StandardSet, link_names, reg: float, consistency: bool = True):
        self.param = param
        self.link_names = link_names
        self.reg = float(reg)
        self.consistency = bool(consistency)
        self.lb, self.ub = standard_bounds(param)
        self.cuts = LmiCutQP(param.cad(), param.scales(), param.mass_row(), self.lb, self.ub)
        self._sdp: Optional[ConsistencySDP] = None

    def cad_x(self) -> np.ndarray:
        """Start point in the set's coordinates."""
        return self.param.cad()

    def solve(self, hs: np.ndarray, gs: np.ndarray, bb: float, n: float, total: float,
              x0: np.ndarray) -> SolveOutcome:
        """Minimise the statistics' cost (``bb`` and ``x0`` unused: the dense QP is exact).

        The QP with the cuts kept so far (none at first: the plain QP); with the consistency
        step on, rounds of cuts until every link's pseudo-inertia is positive definite, and
        the SDP if they do not settle.
        """
        t0 = time.perf_counter()
        s, cad = self.param.scales(), self.param.cad()
        p, q = scaled_cost(hs, gs, n, cad, s, self.reg)
        try:
            cut = self.cuts.solve(p, q, total, max_rounds=None if self.consistency else 1,
                                  check=self.consistency)
        except CutsNotSettledError:
            return self._sdp_solve(hs, gs, n, total, t0)
        pi = cad + s * cut.z
        if not self.consistency:
            by, status = 'off', 'solved (quadprog)'
        elif cut.cuts_total == 0:
            by, status = 'qp', 'solved (quadprog)'
        else:
            by = 'lmi'
            status = (f'solved under the LMIs (quadprog, {cut.rounds} rounds, '
                      f'{cut.cuts_added} cuts added, {cut.cuts_total} kept)')
        return SolveOutcome(pi, pi, status, cut.rounds, time.perf_counter() - t0, by)

    def _sdp_solve(self, hs, gs, n, total, t0) -> SolveOutcome:
        """The SDP (built once); its tight eigen-directions become cuts for the next update."""
        if self._sdp is None:
            self._sdp = ConsistencySDP(self.param, self.lb, self.ub)
        pi, used = self._sdp.solve(hs, gs, n, total, self.reg)
        s, cad = self.param.scales(), self.param.cad()
        eig, vec = self.cuts.min_eigs((pi - cad) / s)
        for i in np.flatnonzero(eig < 10 * self.cuts.eps):
            self.cuts.add_cut(int(i), vec[i])
        self.cuts.refresh()
        return SolveOutcome(pi, pi, f'solved under the LMIs (SDP, {used})', 0,
                            time.perf_counter() - t0, 'lmi')


class SetSolver:
    """Bound-constrained Newton on a parameter set mapped onto the standard statistics.

    The 'auto' set takes its levels from ``levels`` (chosen offline, e.g. the table of
    ``legid identify``) or, when None, chooses them once: until ``select_after`` samples are
    folded it solves the smallest set (CAD, the heaviest group's mass taking up the total
    mass), then runs the F-test selection of
    :mod:`legid_ros.core.identification.parameters.auto.select` on the folded statistics, with
    ``n / AUTO_SAMPLES_PER_EFFECTIVE`` independent rows (the estimator keeps no rows to
    measure their autocorrelation), and keeps that set.

    Args:
        robot: Robot (its link groups define the reduced and grouped sets).
        param_set: A set name of :func:`make_param` other than 'standard'.
        pi_cad: Prior standard parameters.
        reg: Regularisation weight toward CAD per sample [-] (default :data:`SET_REG`).
        max_iter: Newton iteration limit per solve.
        levels: 'auto' set: unit -> level (None: chosen from the data, see above).
        select_after: 'auto' set: folded samples before the choice.
    """

    def __init__(self, robot, param_set: str, pi_cad: np.ndarray, reg: float = SET_REG,
                 max_iter: int = 100, levels: Optional[dict] = None,
                 select_after: float = AUTO_SELECT_SAMPLES):
        self.param_set = param_set
        self.robot, self.pi_cad = robot, pi_cad
        self.levels = dict(levels) if levels else None
        self.selection = None  # the choice's plain form, once made
        self.select_after = float(select_after)
        self._set_param(self.levels if param_set != 'auto' or self.levels else
                        _smallest_levels(robot, pi_cad))
        self.reg = float(reg)
        self.max_iter = int(max_iter)

    def set_levels(self, levels: dict) -> None:
        """Solve the 'auto' set on these levels from now on (e.g. restored from a state)."""
        self.levels = dict(levels)
        self._set_param(self.levels)

    def _set_param(self, levels) -> None:
        self.param = make_param(self.robot, self.param_set, self.pi_cad, levels=levels)
        self.lb, self.ub = param_bounds(self.param)
        # constant per set: computed once, not at every update
        self._x_cad, self._scales = self.param.cad(), self.param.scales()
        self._mass_row = self.param.mass_row()

    def _choose(self, hs, gs, bb, n: float, total: float) -> None:
        """The auto set's levels from the folded statistics (once)."""
        from legid_ros.core.identification.parameters.auto.select import select_levels
        sel = select_levels(None, self.robot, total, self.pi_cad,
                            normal=(hs, gs, bb, n, n / AUTO_SAMPLES_PER_EFFECTIVE))
        self.levels, self.selection = dict(sel.levels), sel.as_info()
        self._set_param(self.levels)

    def cad_x(self) -> np.ndarray:
        """Start point in the set's coordinates."""
        return self.param.cad()

    def solve(self, hs: np.ndarray, gs: np.ndarray, bb: float, n: float, total: float,
              x0: np.ndarray) -> SolveOutcome:
        """Minimise ``pi^T H pi - 2 h^T pi + bb + n reg |(x - x_cad) / s|^2`` over the set.

        Raises:
            SolverNotConvergedError: Newton stalled or hit its limit (carries the iterate).
        """
        t0 = time.perf_counter()
        if self.param_set == 'auto' and self.levels is None and n >= self.select_after:
            self._choose(hs, gs, bb, n, total)
            x0 = None
        obj = NormalObjective(hs, gs, bb, n, self.param, self.reg, x_cad=self._x_cad,
                              scales=self._scales)
        x0 = self._x_cad if x0 is None or np.size(x0) != self.param.size else x0
        res = newton_solve(obj, x0, self._mass_row, total - self.param.fixed_mass,
                           self.lb, self.ub, max_iter=self.max_iter, scales=self._scales,
                           fallback='gauss_newton', ftol=stop_ftol(n))
        if not res.converged:
            raise SolverNotConvergedError(f'online Newton on the {self.param_set} set',
                                          res.status, res.iterations, last_state=res.x)
        last_x, last_pi = getattr(obj, 'last', (None, None))
        pi = last_pi.copy() if last_x is res.x else self.param.to_standard(res.x)
        return SolveOutcome(pi, res.x, res.status, res.iterations,
                            time.perf_counter() - t0, 'parameterisation')


def stop_ftol(n: float) -> float:
    """Newton's relative cost tolerance for ``n`` folded rows (:data:`STOP_STEP_STD_FRACTION`;
    never tighter than the solver's default 1e-12)."""
    return max(1e-12, STOP_STEP_STD_FRACTION ** 2 / max(float(n), 1.0))


def _smallest_levels(robot, pi_cad) -> dict:
    """The auto set's start: the heaviest link group's mass only."""
    from legid_ros.core.identification.parameters.auto.levels import AutoSet
    grouped = AutoSet(robot, {}, pi_cad).grouped
    mass = np.bincount([m.unit for m in grouped.members],
                       [grouped.pi_cad[10 * m.index] for m in grouped.members])
    return {grouped.units[int(np.argmax(mass))]: 'mass'}


def default_reg(param_set: str) -> float:
    """Default regularisation weight toward CAD of a parameter set [-]."""
    return DEFAULT_REG if param_set == 'standard' else SET_REG


def make_solver(robot, param_set: str, param: StandardSet, reg: Optional[float],
                levels: Optional[dict] = None):
    """The solver of a parameter set (``reg`` None: the set's default; ``levels`` the 'auto'
    set's, None: chosen from the data)."""
    reg = default_reg(param_set) if reg is None else reg
    if param_set == 'standard':
        return StandardSolver(param, robot.body_names, reg)
    return SetSolver(robot, param_set, param.pi_cad, reg, levels=levels)
