"""ZMP-feedback identification (Wu & Gao 2021): nonlinear LS by Newton, and the reduced-set LS.

``identify_zmp_newton``: minimise eq. (9), the mean squared distance between the model ZMP
and the measured ZMP, over the ZMP reduced set (default), the grouped sets (mass and 3-D COM
per link group, mirrored or per side) or the standard set, subject to the total-mass equality
and box bounds, by :func:`legid_ros.core.identification.solvers.newton.newton_solve`.
Regularisation toward CAD: ``reg * sum ((x - x_cad) / s)^2`` with ``reg`` in [m^2]: chosen
from the data on a held-out slice for the grouped sets
(:mod:`legid_ros.core.identification.solvers.reg_choice`), ``DEFAULT_REG_M2`` for the
reduced and standard sets (one scale unit, i.e. 2 cm of COM or 20 % of a mass, costs as much
as 0.32 mm of RMS ZMP error); an explicit ``reg`` wins.

``identify_normal_newton``: the same solver on a linear LS cost given by sufficient
statistics (the linear-row methods on a nonlinear set, and the online estimator), in any set of
:data:`PARAM_SETS`: with a quadratic cost in ``pi`` each Newton step is the Gauss-Newton
(sequential) QP of the set plus its curvature.
"""

from __future__ import annotations

import time
from typing import Optional

import numpy as np

from legid_ros.core.identification.identifiability import DEFAULT_MAX_COND, excitation
from legid_ros.core.identification.solvers.newton import newton_solve
from legid_ros.core.identification.solvers.reg_choice import (REG_GRID_M2, RegChoice, choose_reg,
                                                              held_out_mask)
from legid_ros.core.identification.parameters.auto.levels import AutoSet
from legid_ros.core.identification.parameters.sets import (GroupedSet, ReducedSet, StandardSet,
                                                          point_mass_parameters)
from legid_ros.core.identification.result import IdentResult
from legid_ros.core.identification.solvers.standard import standard_bounds
from legid_ros.core.inertial import check_consistency, get_parameters
from legid_ros.core.identification.rows.regressors import zmp_rows
from legid_ros.core.robot import Robot
from legid_ros.core.identification.rows.zmp import ZmpObjective, ZmpObjectiveValue, model_zmp

DEFAULT_REG_M2 = 1e-7


def solver_info(res) -> dict:
    """The Newton outcome for ``IdentResult.info``: ``status`` ('converged', 'stalled',
    'max_iterations'), ``converged``, ``kkt_residual`` and ``predicted_decrease``."""
    def num(v):
        return float(v) if np.isfinite(v) else None
    return {'status': res.status, 'converged': res.converged,
            'kkt_residual': num(res.kkt_residual),
            'predicted_decrease': num(res.predicted_decrease)}


PARAM_SETS = ('reduced', 'grouped', 'grouped_sides', 'standard', 'auto')
#: Sets held toward CAD by a weight chosen from the data, solved with the Gauss-Newton fallback
DATA_SETS = (GroupedSet, AutoSet)


def make_param(robot: Robot, param_set: str, pi_cad=None, form: str = 'rigid',
               lc_scale: float = 0.02, identify_inertia: bool = False, levels=None):
    """Parameterisation by name (:data:`PARAM_SETS`).

    'reduced': the ZMP reduced set of Wu & Gao 2021; 'grouped' / 'grouped_sides': mass and 3-D
    COM per link group, legs mirrored / per side
    (:class:`legid_ros.core.identification.parameters.grouped.GroupedSet`, ``lc_scale`` its COM
    scale, ``identify_inertia`` also the inertia about the COM); 'standard': 10 per link;
    'auto': the levels per link group ``levels`` (unit -> level) chosen from the data
    (:class:`legid_ros.core.identification.parameters.auto.AutoSet`).
    """
    if param_set == 'auto':
        return AutoSet(robot, levels or {}, pi_cad, com_scale=lc_scale)
    if param_set in ('grouped', 'grouped_sides'):
        base = pi_cad
        if form == 'point_mass':
            base = point_mass_parameters(get_parameters(robot.model) if pi_cad is None
                                         else pi_cad)
        return GroupedSet(robot, base, per_side=param_set == 'grouped_sides',
                          identify_inertia=identify_inertia, com_scale=lc_scale)
    if param_set == 'reduced':
        return ReducedSet(robot, pi_cad, point_mass=form == 'point_mass', lc_scale=lc_scale)
    if param_set == 'standard':
        return StandardSet(robot, pi_cad)
    from legid_ros.core.errors import BadInputError
    raise BadInputError(f'unknown parameter set {param_set!r} ({", ".join(PARAM_SETS)})')


def _core_name(param_set: str) -> str:
    """The identifiability core of a set: itself if grouped, else the reduced set."""
    if param_set == 'auto':
        return 'grouped'
    return param_set if param_set in ('grouped', 'grouped_sides') else 'reduced'


def _levels_info(param) -> dict:
    """``{'levels': unit -> level}`` of an auto set (nothing for the other sets)."""
    return {'levels': dict(param.levels)} if isinstance(param, AutoSet) else {}


def param_bounds(param):
    """Default box: reduced lc within CAD +- 0.1 m and masses in [0.2, 3] x CAD; grouped: its
    :meth:`GroupedSet.bounds` (the same for masses and each COM coordinate); standard: masses."""
    if isinstance(param, StandardSet):
        return standard_bounds(param)
    if isinstance(param, DATA_SETS):
        return param.bounds()
    cad = param.cad()
    g = param.n_groups
    lb = np.concatenate([cad[:g] - 0.1, 0.2 * cad[g:]])
    ub = np.concatenate([cad[:g] + 0.1, 3.0 * cad[g:]])
    return lb, ub


def known_bounds(param, lb: np.ndarray, ub: np.ndarray, known: Optional[dict]):
    """Box with the ``known`` parameters pinned (``lb = ub = value``).

    Args:
        param: The parameterisation (its ``names``, e.g. ``m_foot``, ``lc_foot``).
        lb, ub: Box before pinning.
        known: Parameter name -> value in SI units ([kg] masses, [m] COM offsets), e.g. a
            link weighed on a scale: ``{'m_foot': 1.26}``. Both legs' links of a group share
            the value in the symmetric sets (reduced, grouped); with 'grouped_sides' each
            side has its own (``m_left_foot``).

    Raises:
        BadInputError: Unknown name or non-finite value.
    """
    if not known:
        return lb, ub
    from legid_ros.core.errors import BadInputError
    lb, ub = np.array(lb, float), np.array(ub, float)
    names = list(param.names)
    for name, value in known.items():
        if name not in names:
            raise BadInputError(f'unknown parameter {name!r} in known values; parameters: '
                                f'{", ".join(names)}')
        value = float(value)
        if not np.isfinite(value):
            raise BadInputError(f'known value of {name} is not finite: {value}')
        lb[names.index(name)] = ub[names.index(name)] = value
    return lb, ub


def identify_zmp_newton(wrench: np.ndarray, zmp: np.ndarray, fz: np.ndarray, robot: Robot,
                        total_mass: float, param_set: str = 'reduced', form: str = 'rigid',
                        reg=None, eps: float = 1e-4, alpha: float = 1.0,
                        max_iter: int = 300, pi_cad: Optional[np.ndarray] = None,
                        bounds=None, max_cond: float = DEFAULT_MAX_COND,
                        check: bool = True, lc_scale: float = 0.02,
                        fallback: Optional[str] = None, known: Optional[dict] = None,
                        reg_grid=REG_GRID_M2, identify_inertia: bool = False,
                        levels: Optional[dict] = None) -> IdentResult:
    """The ZMP method of Wu & Gao 2021.

    Args:
        wrench: (N, 6, P) world wrench regressors of the samples.
        zmp: Measured ZMP (N, 2) [m].
        fz: Measured vertical force (N,) [N] (used only by the excitation check).
        robot: Robot.
        total_mass: Total-mass equality [kg].
        param_set: One of :data:`PARAM_SETS`: 'reduced' (the 8 parameters of the ZMP reduced
            set), 'grouped', 'grouped_sides' (mass and 3-D COM per link group) or 'standard'.
        form: 'rigid' or 'point_mass' (Wu & Gao's eq. 8).
        reg: Regularisation weight [m^2]; 'auto': chosen on a held-out slice over
            ``reg_grid`` (:mod:`legid_ros.core.identification.solvers.reg_choice`); None
            (default): 'auto' for the grouped sets, ``DEFAULT_REG_M2`` for the reduced and
            standard sets (the paper's comparison). An explicit number always wins.
        reg_grid: Weights [m^2] tried by 'auto'.
        identify_inertia: Grouped sets: also identify the inertia about each COM.
        eps, alpha, max_iter: Newton settings (stop on ``||dx|| <= eps``).
        lc_scale: Prior spread of the axial COM offsets [m] (reduced set).
        fallback: Step when the Hessian is not positive definite: 'descent' (the paper) or
            'gauss_newton' (see :func:`legid_ros.core.identification.solvers.newton.newton_solve`);
            None: 'gauss_newton' for the grouped sets (their unseen directions leave the
            Hessian indefinite for many steps), 'descent' otherwise.
        known: Parameters measured otherwise, held fixed (e.g. ``{'m_foot': 1.26}`` [kg] for
            a weighed foot); see :func:`known_bounds`.
        levels: 'auto' set: unit -> level (:mod:`legid_ros.core.identification.parameters.
            auto_select` chooses them).
    """
    t0 = time.perf_counter()
    param = make_param(robot, param_set, pi_cad, form, lc_scale, identify_inertia, levels)
    if form == 'point_mass' and isinstance(param, StandardSet):
        from legid_ros.core.errors import BadInputError
        raise BadInputError('the point-mass form needs the reduced or a grouped set')
    if check and not isinstance(param, DATA_SETS):
        # the grouped sets are held toward CAD by a weight chosen from the data; what they
        # cannot tell is reported by the uncertainty, not refused here
        rows = zmp_rows(wrench, zmp, fz)
        excitation(robot, rows.T @ rows, len(zmp), param.pi_cad, max_cond=max_cond)
    lb, ub = known_bounds(param, *(bounds if bounds is not None else param_bounds(param)),
                          known)
    if fallback is None:
        fallback = 'gauss_newton' if isinstance(param, DATA_SETS) else 'descent'
    settings = dict(eps=eps, alpha=alpha, max_iter=max_iter, scales=param.scales(),
                    fallback=fallback)
    x_start, choice = param.cad(), None
    if reg == 'auto' or (reg is None and isinstance(param, DATA_SETS)):
        choice = choose_zmp_reg(wrench, zmp, param, total_mass, lb, ub, reg_grid, **settings)
        reg, x_start = choice.reg, choice.x
    reg = DEFAULT_REG_M2 if reg is None else float(reg)
    obj = ZmpObjective(wrench, zmp, param, reg=reg)
    res = newton_solve(obj, x_start, param.mass_row(), total_mass - param.fixed_mass, lb, ub,
                       **settings)
    pi = param.to_standard(res.x)
    val = obj(res.x, derivatives=False)
    rows = zmp_rows(wrench, zmp, fz)
    rep = excitation(robot, rows.T @ rows, len(zmp), pi, sigma_res=val.rms, raise_error=False,
                     held=list(known or {}), core=_core_name(param_set))
    return IdentResult(
        method='zmp_newton', pi=pi, x=res.x, names=list(param.names),
        param_names=StandardSet(robot).names, total_mass=total_mass,
        condition_number=rep.condition_number, residual_rms=val.rms,
        solve_time_s=time.perf_counter() - t0, iterations=res.iterations,
        consistency=check_consistency(pi, robot.body_names), identifiable=rep.lines,
        n_samples=len(zmp),
        info={'param_set': param_set, 'form': form, 'reg_m2': reg, **solver_info(res),
              **_levels_info(param),
              **(choice.as_info() if choice is not None else {'reg_chosen': None}),
              'known': dict(known or {}),
              'newton_steps': res.newton_steps, 'descent_steps': res.descent_steps,
              'gauss_newton_steps': res.gauss_newton_steps, 'fallback': fallback})


def choose_zmp_reg(wrench: np.ndarray, zmp: np.ndarray, param, total_mass: float,
                   lb: np.ndarray, ub: np.ndarray, grid=REG_GRID_M2, **settings) -> RegChoice:
    """Regularisation weight [m^2] of :func:`identify_zmp_newton` from a held-out slice.

    Fits eq. (9) with the prior on the training blocks for each weight of ``grid`` and scores
    the RMS ZMP residual on the held-out blocks
    (:func:`legid_ros.core.identification.solvers.reg_choice.choose_reg`).

    Args:
        settings: :func:`newton_solve` settings.
    """
    held = held_out_mask(len(zmp))
    train = ~held
    c, free = param.mass_row(), total_mass - param.fixed_mass

    obj = ZmpObjective(wrench[train], zmp[train], param)  # built once: only reg changes

    def fit(reg, x):
        obj.reg = reg
        return newton_solve(obj, x, c, free, lb, ub, **settings).x

    block = np.cumsum(np.r_[True, np.diff(np.flatnonzero(held)) > 1]) - 1
    wrench_h, zmp_h = wrench[held], zmp[held]

    def score(x):
        r2 = np.sum((model_zmp(wrench_h, param.to_standard(x))[0] - zmp_h) ** 2, axis=1)
        return np.bincount(block, r2) / np.bincount(block)

    return choose_reg(fit, score, param.cad(), grid, held_out_fraction=float(held.mean()))


class NormalObjective:
    """``e(x) = pi^T H pi - 2 h^T pi + bb + n reg sum ((x - x_cad) / s)^2``, ``pi = pi(x)``."""

    def __init__(self, H, h, bb, n, param, reg=0.0, x_cad=None, scales=None):
        self.H, self.h, self.bb, self.n = H, h, bb, max(n, 1e-12)
        self.param = param
        self.reg = reg
        self.x_cad = param.cad() if x_cad is None else x_cad  # the caller's, if it keeps them
        self.s = param.scales() if scales is None else scales

    def __call__(self, x, derivatives=True) -> ZmpObjectiveValue:
        """Cost, and with ``derivatives`` the gradient and Hessian (``'gradient'``: no
        Hessian)."""
        pi = self.param.to_standard(x)
        self.last = (x, pi)  # the standard parameters of the last point asked for
        hp = self.H @ pi
        e = float(pi @ (hp - 2 * self.h) + self.bb)
        d = (x - self.x_cad) / self.s
        tot = e + self.n * self.reg * float(d @ d)
        rms = float(np.sqrt(max(e, 0.0) / self.n))
        if not derivatives:
            return ZmpObjectiveValue(tot, None, None, rms)
        g_pi = 2 * (hp - self.h)
        jac = self.param.jacobian(x)
        grad = jac.T @ g_pi + 2 * self.n * self.reg * d / self.s
        if derivatives == 'gradient':
            return ZmpObjectiveValue(tot, grad, None, rms)
        gn = 2 * jac.T @ (self.H @ jac)
        gn.flat[::gn.shape[0] + 1] += 2 * self.n * self.reg / self.s ** 2
        hess = gn.copy()
        if not self.param.linear:
            hess += self.param.curvature(x, g_pi)
        return ZmpObjectiveValue(tot, grad, 0.5 * (hess + hess.T), rms, 0.5 * (gn + gn.T))


def identify_normal_newton(H, h, bb, n, robot: Robot, total_mass: float, method: str,
                           param_set: str = 'reduced', reg: float = 1e-3, eps: float = 1e-4,
                           max_iter: int = 300, pi_cad=None, bounds=None,
                           lc_scale: float = 0.02, known: Optional[dict] = None,
                           fallback: Optional[str] = None, x0=None,
                           levels: Optional[dict] = None) -> IdentResult:
    """Newton on a linear LS cost in a (possibly nonlinear) parameterisation.

    ``H, h, bb, n``: sufficient statistics of the rows in standard parameters (``sum A^T A``,
    ``sum A^T b``, ``sum b^2``, samples); ``param_set`` any of :data:`PARAM_SETS`; ``reg``
    dimensionless (weight of ``sum ((x - x_cad) / s)^2`` per sample); ``fallback`` as
    :func:`identify_zmp_newton` (None: 'gauss_newton' on the grouped sets); ``x0`` a start
    (default CAD; e.g. the previous solution of an online estimator); ``levels`` the 'auto'
    set's (unit -> level).
    """
    t0 = time.perf_counter()
    param = make_param(robot, param_set, pi_cad, lc_scale=lc_scale, levels=levels)
    lb, ub = known_bounds(param, *(bounds if bounds is not None else param_bounds(param)),
                          known)
    if fallback is None:
        fallback = 'gauss_newton' if isinstance(param, DATA_SETS) else 'descent'
    obj = NormalObjective(H, h, bb, n, param, reg)
    res = newton_solve(obj, param.cad() if x0 is None else x0, param.mass_row(),
                       total_mass - param.fixed_mass, lb, ub, eps=eps, max_iter=max_iter,
                       scales=param.scales(), fallback=fallback)
    pi = param.to_standard(res.x)
    val = obj(res.x, derivatives=False)
    rep = excitation(robot, H, n, pi, sigma_res=1.0, raise_error=False,
                     held=list(known or {}), core=_core_name(param_set))
    return IdentResult(
        method=method, pi=pi, x=res.x, names=list(param.names),
        param_names=StandardSet(robot).names, total_mass=total_mass,
        condition_number=rep.condition_number, residual_rms=val.rms,
        solve_time_s=time.perf_counter() - t0, iterations=res.iterations,
        consistency=check_consistency(pi, robot.body_names), identifiable=rep.lines,
        n_samples=int(n), info={'param_set': param_set, **solver_info(res),
                                 **_levels_info(param), 'known': dict(known or {})})
