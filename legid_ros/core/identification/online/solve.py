"""Solving the online statistics: physically consistent by constraint, in any parameter set.

Two solvers share the statistics ``H = sum w A^T A``, ``h = sum w A^T b`` (standard columns,
nuisance columns eliminated):

- :class:`StandardSolver` (parameter set 'standard'): the warm-started parameter QP of
  :class:`legid_ros.core.identification.solvers.qp.ParameterQP` (total-mass equality, mass
  bounds, regularisation toward CAD). When its solution fails the physical-consistency check,
  the same cost is minimised again under the pseudo-inertia LMIs
  (:func:`legid_ros.core.identification.solvers.sdp.solve_sdp`, a convex program): the
  published solution is always the minimiser of a consistent problem, never a substitution.
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
from legid_ros.core.identification.solvers.qp import ParameterQP
from legid_ros.core.identification.solvers.sdp import solve_sdp
from legid_ros.core.identification.solvers.standard import DEFAULT_REG, standard_bounds
from legid_ros.core.identification.solvers.zmp_newton import (NormalObjective, make_param,
                                                              param_bounds)
from legid_ros.core.inertial import check_consistency

# Regularisation of the set solvers on unit-variance ZMP rows: Wu & Gao's cost in [m^2] with
# DEFAULT_REG_M2 = 1e-7 m^2 over a row sigma of 2 mm, i.e. the batch zmp_newton prior.
SET_REG = 1e-7 / 0.002 ** 2


@dataclass
class SolveOutcome:
    """One online solve.

    Attributes:
        pi: Standard parameters of the solution (10 per link).
        x: Solution in the solver's parameter set.
        status: Solver status ('solved', 'converged', ...).
        iterations: Solver iterations.
        solve_time_s: Time inside the solver(s) [s].
        consistent_by: 'qp' (the QP's own solution is consistent), 'lmi' (re-solved under the
            pseudo-inertia LMIs) or 'parameterisation' (every point of the set is consistent).
    """

    pi: np.ndarray
    x: np.ndarray
    status: str
    iterations: int
    solve_time_s: float
    consistent_by: str


class StandardSolver:
    """QP on the standard set, re-solved under the LMIs when its solution is inconsistent.

    Args:
        param: The standard set (its CAD values are the prior).
        link_names: Link names of the parameter blocks (consistency report).
        reg: Regularisation weight toward CAD [-].
    """

    param_set = 'standard'

    def __init__(self, param: StandardSet, link_names, reg: float):
        self.param = param
        self.link_names = link_names
        self.reg = float(reg)
        self.lb, self.ub = standard_bounds(param)
        self._qp: Optional[ParameterQP] = None
        self._total = None

    def cad_x(self) -> np.ndarray:
        """Start point in the set's coordinates."""
        return self.param.cad()

    def solve(self, hs: np.ndarray, gs: np.ndarray, bb: float, n: float, total: float,
              x0: np.ndarray) -> SolveOutcome:
        """Minimise the statistics' cost (``bb`` unused: the QP needs no constant)."""
        if self._qp is None:
            self._qp = ParameterQP(self.param.cad(), self.param.scales(), self.lb, self.ub,
                                   self.param.mass_row(), total, self.reg, eps=1e-5,
                                   polish=False)
        elif abs(total - self._total) > 1e-9:
            self._qp.set_total(total)
        self._total = total
        self._qp.reg = self.reg
        sol = self._qp.solve(hs, gs, n, warm=x0, fast=True)
        if check_consistency(sol.x, self.link_names).ok:
            return SolveOutcome(sol.x, sol.x, sol.status, sol.iterations, sol.solve_time_s, 'qp')
        t0 = time.perf_counter()
        pi, used = solve_sdp(hs, gs, n, self.param, total, self.lb, self.ub, self.reg)
        return SolveOutcome(pi, pi, f'{sol.status}; LMI ({used})', sol.iterations,
                            sol.solve_time_s + time.perf_counter() - t0, 'lmi')


class SetSolver:
    """Bound-constrained Newton on a parameter set mapped onto the standard statistics.

    Args:
        robot: Robot (its link groups define the reduced and grouped sets).
        param_set: A set name of :func:`make_param` other than 'standard'.
        pi_cad: Prior standard parameters.
        reg: Regularisation weight toward CAD per sample [-] (default :data:`SET_REG`).
        max_iter: Newton iteration limit per solve.
    """

    def __init__(self, robot, param_set: str, pi_cad: np.ndarray, reg: float = SET_REG,
                 max_iter: int = 100):
        self.param_set = param_set
        self.param = make_param(robot, param_set, pi_cad)
        self.reg = float(reg)
        self.max_iter = int(max_iter)
        self.lb, self.ub = param_bounds(self.param)

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
        obj = NormalObjective(hs, gs, bb, n, self.param, self.reg)
        x0 = self.param.cad() if x0 is None or np.size(x0) != self.param.size else x0
        res = newton_solve(obj, x0, self.param.mass_row(), total - self.param.fixed_mass,
                           self.lb, self.ub, max_iter=self.max_iter, scales=self.param.scales(),
                           fallback='gauss_newton')
        if not res.converged:
            raise SolverNotConvergedError(f'online Newton on the {self.param_set} set',
                                          res.status, res.iterations, last_state=res.x)
        pi = self.param.to_standard(res.x)
        return SolveOutcome(pi, res.x, res.status, res.iterations,
                            time.perf_counter() - t0, 'parameterisation')


def default_reg(param_set: str) -> float:
    """Default regularisation weight toward CAD of a parameter set [-]."""
    return DEFAULT_REG if param_set == 'standard' else SET_REG


def make_solver(robot, param_set: str, param: StandardSet, reg: Optional[float]):
    """The solver of a parameter set (``reg`` None: the set's default)."""
    reg = default_reg(param_set) if reg is None else reg
    if param_set == 'standard':
        return StandardSolver(param, robot.body_names, reg)
    return SetSolver(robot, param_set, param.pi_cad, reg)
