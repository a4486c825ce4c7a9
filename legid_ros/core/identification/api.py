"""Batch entry point: ``identify(recording, robot, method, **options) -> IdentResult``.

Methods (rows are described in :mod:`legid_ros.core.identification.rows.linear`):

====================  =====================================================================
``zmp_newton``        ZMP feedback (Wu & Gao 2021): Newton on eq. (9), ZMP reduced set
                      (``param_set`` 'grouped', 'grouped_sides', 'standard' too)
``zmp_qp``            linearised ZMP rows, standard set, OSQP (``param_set`` 'reduced',
                      'grouped', 'grouped_sides': Newton on the rows' normal equations)
``torque_ls``         joint torques, support foot as fixed base, friction, WLS (standard set
                      by QP, ``param_set`` 'reduced' (Wu & Gao's Table 2) or a grouped set by
                      Newton, or ``param_set='base'``: plain LS on base parameters + CAD prior)
``floating_qp``       floating-base rows (joint efforts + foot F/T) of the Tencent patent
                      application 2022, WLS, OSQP
``sdp``               any rows (``rows=`` 'zmp' default) + pseudo-inertia LMIs (cvxpy); with a
                      grouped ``param_set`` the LMIs hold by construction (positive masses,
                      CAD inertia about the COM) and the rows are solved as ``zmp_qp`` is
``primitives``        any rows + homogeneous primitive bodies (Tencent patent application
                      2022; OSQP, masses >= eps)
====================  =====================================================================

Options: every :class:`PrepareOptions` field (``diff``, ``cutoff_hz``, ``use_imu``, ...),
``total_mass`` [kg] (default: mean measured vertical force / (g + mean vertical COM
acceleration)), ``reg``, ``max_cond``,
``check`` (excitation check), ``pi_cad`` and the method's own options. For the methods on the
reduced or a grouped set (``zmp_newton``; the linear-row methods with ``param_set`` 'reduced',
'grouped' or 'grouped_sides'): ``known`` (parameters measured otherwise, held fixed) and
``foot_from_ft=True`` (weigh the swinging feet with their ankle F/T sensors first,
:mod:`legid_ros.core.identification.rows.foot_ft`, and hold the foot mass: ``m_foot``, or
``m_left_foot`` and ``m_right_foot`` with 'grouped_sides').

What a method needs is checked before any data is read (:mod:`.prerequisites`):
``check_method`` (the options against the method and the robot description: a parameter set
the method runs on, primitive bodies for ``primitives``, an ankle F/T for ``foot_from_ft``) and
``check_sensing`` (the sensors a recording carries, from a bag's topic list: foot forces,
efforts, IMU, ankle F/T); :func:`identify` runs the first itself.

Every result carries ``uncertainty``: the standard deviation of each core parameter and of each
combination, from the residual and the information of the rows the method fitted
(:mod:`legid_ros.core.identification.uncertainty`; for standard-set methods computed on every
standard parameter, where the fit is, and read in the ZMP reduced core:
:mod:`~legid_ros.core.identification.uncertainty.projected`).
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np

from legid_ros.core.errors import BadInputError
from legid_ros.core.identification.prepare import PrepareOptions, Samples, prepare
from legid_ros.core.identification.prerequisites import (NEWTON_SETS, ROWS_OF, _param_set,
                                                         check_method)
from legid_ros.core.identification.result import IdentResult
from legid_ros.core.identification.rows.linear import (build_rows, regressors_for,
                                                       total_mass_from_forces)
from legid_ros.core.identification.solvers.standard import DEFAULT_REG, solve_standard
from legid_ros.core.identification.uncertainty.projected import read_in_core
from legid_ros.core.recording import Recording
from legid_ros.core.robot import Robot

def split_options(options: dict):
    """Split ``options`` into (PrepareOptions, remaining method options)."""
    names = {f.name for f in dataclasses.fields(PrepareOptions)}
    prep = PrepareOptions(**{k: v for k, v in options.items() if k in names})
    return prep, {k: v for k, v in options.items() if k not in names}


def identify(recording: Recording, robot: Robot, method: str = 'zmp_qp',
             samples: Optional[Samples] = None, **options) -> IdentResult:
    """Identify the inertial parameters of ``robot`` from ``recording``.

    Args:
        recording: Measured run (synthetic, MuJoCo or bag).
        robot: Floating-base robot.
        method: One of :data:`METHODS`.
        samples: Already prepared samples (skips :func:`prepare`).
        **options: See the module docstring.

    Raises:
        BadInputError: Unknown method or option, bad data.
        NotIdentifiableError: Data not exciting enough.
        InfeasibleProblemError: Bounds and mass equality incompatible.
    """
    check_method(robot, method, options)
    prep, opts = split_options(options)
    if samples is None:
        samples = prepare(recording, robot, prep)
    if samples.n < 10:
        why = ', '.join(f'{k}: {v}' for k, v in sorted(samples.dropped.items(),
                                                      key=lambda kv: -kv[1]))
        raise BadInputError(f'only {samples.n} usable samples' + (
            f' (dropped: {why})' if why else ''))
    total = opts.pop('total_mass', None)
    total = total_mass_from_forces(samples, robot) if total is None else float(total)
    pi_cad = opts.pop('pi_cad', None)
    if pi_cad is None and recording is not None and recording.pi_cad is not None:
        pi_cad = recording.pi_cad
    weighed = None
    if opts.pop('foot_from_ft', False):
        weighed = _weigh_feet(samples, robot, opts, pi_cad, _param_set(method, opts))
    rows = regs = all_regs = selection = None
    if method == 'zmp_newton':
        from legid_ros.core.identification.solvers.zmp_newton import identify_zmp_newton
        regs = all_regs = regressors_for(samples, robot, [])
        if opts.get('param_set') == 'auto':  # chosen on the ZMP rows (the linearised eq. 9)
            selection = _select_auto(build_rows(samples, robot, 'zmp', regs, False), robot,
                                     total, pi_cad, opts)
        res = identify_zmp_newton(regs.wrench, samples.zmp, samples.fz, robot, total,
                                  pi_cad=pi_cad, **opts)
    elif method in ROWS_OF:
        friction = opts.pop('friction', True)
        param_set = opts.pop('param_set', 'standard')
        all_regs = regressors_for(samples, robot, [ROWS_OF[method]])
        rows = build_rows(samples, robot, ROWS_OF[method], all_regs, friction)
        if param_set == 'auto':
            selection = _select_auto(rows, robot, total, pi_cad, opts)
        if param_set in NEWTON_SETS:
            res = _reduced_linear(rows, robot, method, total, pi_cad, param_set=param_set,
                                  **_no_check(opts))
        elif param_set == 'base':
            from legid_ros.core.identification.solvers.standard import solve_base
            res = solve_base(rows, robot, method, total, pi_cad=pi_cad, **_no_check(opts))
        else:
            res = solve_standard(rows, robot, method, total, pi_cad=pi_cad, **opts)
    else:
        kind = opts.pop('rows', 'zmp')
        friction = opts.pop('friction', True)
        all_regs = regressors_for(samples, robot, [kind])
        rows = build_rows(samples, robot, kind, all_regs, friction)
        param_set = opts.pop('param_set', 'standard')
        if param_set == 'auto':
            selection = _select_auto(rows, robot, total, pi_cad, opts)
        if method == 'sdp' and param_set in NEWTON_SETS:  # consistent by construction
            res = _reduced_linear(rows, robot, method, total, pi_cad, param_set=param_set,
                                  **_no_check(opts))
            res.info['lmi'] = 'held by construction of the set (no SDP solved)'
        elif method == 'sdp':
            from legid_ros.core.identification.solvers.sdp import identify_sdp
            res = identify_sdp(rows, robot, total, pi_cad=pi_cad, **opts)
        else:
            from legid_ros.core.identification.parameters.primitives import identify_primitives
            res = identify_primitives(rows, robot, total, pi_cad=pi_cad, **opts)
    if selection is not None:
        res.info['auto_selection'] = selection.as_info()
    res.dropped = dict(samples.dropped)
    res.info.setdefault('prepare', dataclasses.asdict(prep))
    if weighed is not None:
        res.info['foot_from_ft'] = {
            f.foot: {'mass_kg': f.mass_kg, 'mass_std_kg': f.mass_std_kg,
                     'com_m': f.com_m.tolist(), 'n_samples': f.n_samples}
            for f in weighed.feet.values()}
        res.identifiable = weighed.lines() + list(res.identifiable)
    if res.info.get('param_set') not in NEWTON_SETS and robot.link_groups:
        # a standard-set fit: its uncertainty where it fits (every standard parameter), read
        # in the reduced core (not re-linearised there with the rest held); the summary on
        # every link's mass and first moment, the inertias held at CAD as model error
        # (measured: `legid bench honesty`, docs/identification.md)
        full = _uncertainty(res, robot, samples, regs, rows, pi_cad, 'standard')
        res.uncertainty = None if full is None else read_in_core(full, robot, res.pi)
        summary_unc = _uncertainty(res, robot, samples, regs, rows, pi_cad, 'links')
    else:
        res.uncertainty = summary_unc = _uncertainty(res, robot, samples, regs, rows, pi_cad)
    res.physical = _physical(res, robot, samples, all_regs.wrench, summary_unc)
    return res


def _physical(res: IdentResult, robot: Robot, samples: Samples, wrench: np.ndarray, unc):
    """What the data determine (:mod:`legid_ros.core.identification.summary`); None without
    an uncertainty.

    The total mass's std: the standard error of the mean vertical force / g, from the measured
    force less the fitted model's (``wrench`` regressors, (N, 6, P); the motion's own
    accelerations taken out), the samples counted by its autocorrelation
    (:func:`legid_ros.core.identification.uncertainty.effective_samples`).
    """
    from legid_ros.core.identification.summary import summarize
    from legid_ros.core.identification.rows.linear import GRAVITY

    if unc is None or not getattr(unc, 'covariance_pi', np.zeros(0)).size:
        return None
    from legid_ros.core.identification.uncertainty import effective_samples
    e = (np.asarray(samples.fz, float) - np.asarray(wrench, float)[:, 2] @ res.pi) / GRAVITY
    sem = float(e.std() / np.sqrt(effective_samples(e))) if e.size > 1 else 0.0
    std_m = sem
    res.info['total_mass_std_kg'] = std_m
    q_joints = np.asarray(samples.q, float)[:, 7:].mean(axis=0) if samples.n else None
    try:
        return summarize(robot, res.pi, unc, q_joints, total_mass_std=std_m)
    except (np.linalg.LinAlgError, ValueError) as exc:
        res.info['summary_error'] = str(exc)
        return None


def _uncertainty(res: IdentResult, robot: Robot, samples: Samples, regs, rows, pi_cad=None,
                 core: str = None):
    """Core standard deviations of ``res`` (:mod:`legid_ros.core.identification.uncertainty`).

    ZMP Newton: from the ZMP residual and its Jacobian at the estimate. Linear rows: from the
    rows whitened by their group RMS at the estimate (the WLS weights), friction columns
    projected out. None (with the reason in ``res.info``) when it cannot be computed.
    """
    from legid_ros.core.identification.rows.zmp import zmp_derivatives
    from legid_ros.core.identification.uncertainty import core_uncertainty

    held = {k: 0.0 for k in (res.info.get('known') or {})}
    feet = res.info.get('foot_from_ft') or {}
    param_set = res.info.get('param_set', 'reduced')
    core = core or (param_set if param_set in NEWTON_SETS else 'reduced')
    if core == 'auto':  # the auto set's groups, mass and 3-D COM; what it holds at CAD held
        core = 'grouped'
        held.update({k: v for k, v in _auto_held(robot, res).items() if k not in held})
    for name, weighed in weighed_mass_names(robot, feet, core).items():
        if name in held:  # weighed feet: the std of their sample-weighted mean
            n = np.array([feet[f]['n_samples'] for f in weighed], float)
            held[name] = float(np.linalg.norm(n * [feet[f]['mass_std_kg'] for f in weighed])
                               / n.sum())
    # what the core holds at CAD (a standard-set fit on the links' core: the inertias, which
    # its prior keeps near CAD); none on the reduced core of a standard-set fit (kept as it was)
    held_width = None if res.info.get('param_set') in NEWTON_SETS or core == 'links' else 0.0
    try:
        if regs is not None:
            zmp, grad = zmp_derivatives(regs.wrench, res.pi, hessian=False)
            # eq. (9) as a sum with the prior N reg |(x - x_cad) / s|^2 (ZmpObjective)
            prior = samples.n * float(res.info.get('reg_m2', 0.0))
            return core_uncertainty(robot, res.pi, grad.reshape(-1, grad.shape[2]),
                                    (zmp - samples.zmp).ravel(), samples.n, held, prior=prior,
                                    core=core, pi_cad=pi_cad, unmodelled_width=held_width)
        npi = rows.A.shape[1] - rows.nf
        a, f = rows.A[:, :npi], rows.A[:, npi:]
        r = a @ res.pi - rows.b
        if rows.nf:  # friction at its best fit for these inertials
            r = r + f @ np.linalg.lstsq(f, -r, rcond=None)[0]
        groups, inverse = np.unique(rows.group, return_inverse=True)
        rms = np.sqrt(np.bincount(inverse, r ** 2) / np.bincount(inverse))
        w = 1.0 / np.maximum(rms, 1e-9)[inverse]  # the WLS weights at the estimate
        # the rows' prior toward CAD: N reg on the whitened rows (QP, SDP, Newton on them)
        prior = rows.n_samples * float(res.info.get('reg') or 0.0)
        return core_uncertainty(robot, res.pi, a * w[:, None], r * w, rows.n_samples, held,
                                nuisance=f * w[:, None] if rows.nf else None, core=core,
                                prior=prior, pi_cad=pi_cad, unmodelled_width=held_width)
    except (np.linalg.LinAlgError, ValueError) as exc:
        res.info['uncertainty_error'] = str(exc)
        return None


def _auto_held(robot: Robot, res: IdentResult) -> dict:
    """Grouped-core parameters an auto set held at CAD, each with its prior width as std
    [kg, m] (the uncertainty narrows that width by what the data say of them,
    :mod:`legid_ros.core.identification.uncertainty.batch`): a unit's mass without 'mass', its
    COM without 'com' or 'axial' (an axial-only COM is left free: its cross-axis part then
    counts as fitted, the wider std)."""
    from legid_ros.core.identification.parameters.grouped import GroupedSet
    from legid_ros.core.identification.uncertainty import PRIOR_WIDTH

    levels = res.info.get('levels') or {}
    if not levels:
        return {}
    grouped = GroupedSet(robot, pi_cad=res.pi, per_side=False)
    scale = dict(zip(grouped.names, grouped.scales()))
    out = {}
    for unit, level in levels.items():
        have = set(str(level).split('+'))
        names = ([] if 'mass' in have else [f'm_{unit}']) + (
            [] if have & {'com', 'axial'} else [f'c{a}_{unit}' for a in 'xyz'])
        out.update({n: PRIOR_WIDTH * scale[n] for n in names if n in scale})
    return out


def weighed_mass_names(robot: Robot, feet, param_set: str) -> dict:
    """Parameter name holding each weighed foot's mass: ``{name: [foot, ...]}``.

    ``m_<group>`` (both feet share it: reduced and grouped sets) or ``m_<side>_<group>``
    ('grouped_sides'; side from the link name).
    """
    from legid_ros.core.identification.parameters.grouped import link_side

    out = {}
    for name, group in robot.link_groups.items():
        for foot in feet:
            link = robot.feet[foot].link
            if link not in group.links:
                continue
            side = link_side(link) if param_set == 'grouped_sides' else None
            out.setdefault(f'm_{side}_{name}' if side else f'm_{name}', []).append(foot)
    return out


def _weigh_feet(samples, robot, opts, pi_cad, param_set='reduced'):
    """Feet weighed by their ankle F/T; the mass parameter they hold joins ``opts['known']``
    (the sample-weighted mean of the feet sharing it)."""
    from legid_ros.core.identification.rows.foot_ft import identify_foot_ft
    weighed = identify_foot_ft(robot, samples, pi_cad if pi_cad is not None else _cad(robot))
    known = {}
    for name, feet in weighed_mass_names(robot, weighed.feet, param_set).items():
        n = np.array([weighed.feet[f].n_samples for f in feet], float)
        known[name] = float(np.sum(n * [weighed.feet[f].mass_kg for f in feet]) / n.sum())
    opts['known'] = {**known, **(opts.get('known') or {})}
    return weighed


def _select_auto(rows, robot, total, pi_cad, opts):
    """The auto set's levels chosen on ``rows`` (``opts['levels']`` set, the ``auto_*``
    options popped; :mod:`legid_ros.core.identification.parameters.auto.select`); None
    when ``opts['levels']`` is given (a set chosen before, e.g. offline)."""
    from legid_ros.core.identification.parameters.auto.select import select_for_options
    if opts.get('levels') is not None:
        return None
    selection = select_for_options(rows, robot, total, pi_cad, opts)
    opts['levels'] = selection.levels
    return selection


def _no_check(opts: dict) -> dict:
    """``opts`` without the excitation check's options (``check``, ``max_cond``): the fits on
    the reduced, grouped, auto and base sets by Newton or base-parameter LS refuse nothing on
    the condition number; their identifiability report and uncertainty say what the data do
    not determine (as ``zmp_newton``'s grouped sets)."""
    return {k: v for k, v in opts.items() if k not in ('check', 'max_cond')}


def _reduced_linear(rows, robot, method, total, pi_cad, reg=DEFAULT_REG, **opts):
    """Linear rows on the reduced or a grouped set (``opts['param_set']``) by Newton on their
    normal equations (WLS weights from a CAD pass; ``reg`` dimensionless, as the QP's)."""
    from legid_ros.core.identification.rows.linear import fold_rows, group_weights
    from legid_ros.core.identification.solvers.zmp_newton import identify_normal_newton

    npi = rows.A.shape[1] - rows.nf
    x0 = np.concatenate([pi_cad if pi_cad is not None else _cad(robot), np.zeros(rows.nf)])
    if rows.nf:
        x0[npi:] = fold_rows(rows).eliminate(npi)[2](x0[:npi])
    normal = fold_rows(rows, group_weights(rows, x0))
    hs, gs, recover = normal.eliminate(npi)
    bb = normal.bb - float(normal.h[npi:] @ np.linalg.solve(
        normal.H[npi:, npi:] + 1e-12 * np.eye(rows.nf), normal.h[npi:])) if rows.nf else \
        normal.bb
    res = identify_normal_newton(hs, gs, bb, rows.n_samples, robot, total, method,
                                 reg=reg, pi_cad=pi_cad, **opts)
    res.info.setdefault('reg', reg)
    res.friction = recover(res.pi) if rows.nf else None
    return res


def _cad(robot):
    from legid_ros.core.inertial import get_parameters
    return get_parameters(robot.model)
