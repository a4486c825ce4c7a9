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
``total_mass`` [kg] (default: mean measured vertical force / g), ``reg``, ``max_cond``,
``check`` (excitation check), ``pi_cad`` and the method's own options. For the methods on the
reduced or a grouped set (``zmp_newton``; the linear-row methods with ``param_set`` 'reduced',
'grouped' or 'grouped_sides'): ``known`` (parameters measured otherwise, held fixed) and
``foot_from_ft=True`` (weigh the swinging feet with their ankle F/T sensors first,
:mod:`legid_ros.core.identification.rows.foot_ft`, and hold the foot mass: ``m_foot``, or
``m_left_foot`` and ``m_right_foot`` with 'grouped_sides').

What a method needs is checked before any data is read: :func:`check_method` (the options
against the method and the robot description: a parameter set the method runs on, primitive
bodies for ``primitives``, an ankle F/T for ``foot_from_ft``) and :func:`check_sensing` (the
sensors a recording carries, from a bag's topic list: foot forces, efforts, IMU, ankle F/T);
:func:`identify` runs the first itself.

Every result carries ``uncertainty``: the standard deviation of each core parameter and of each
combination, from the residual and the information of the rows the method fitted
(:mod:`legid_ros.core.identification.uncertainty`; for standard-set methods the core is
linearised with the other parameters fixed, which makes it optimistic).
"""

from __future__ import annotations

import dataclasses
from typing import FrozenSet, Optional

import numpy as np

from legid_ros.core.errors import BadInputError
from legid_ros.core.identification import METHODS
from legid_ros.core.identification.prepare import PrepareOptions, Samples, prepare
from legid_ros.core.identification.result import IdentResult
from legid_ros.core.identification.rows.linear import (build_rows, regressors_for,
                                                       total_mass_from_forces)
from legid_ros.core.identification.solvers.standard import DEFAULT_REG, solve_standard
from legid_ros.core.recording import Recording
from legid_ros.core.robot import Robot

ROWS_OF = {'zmp_qp': 'zmp', 'torque_ls': 'torque', 'floating_qp': 'floating'}
# parameter sets solved by Newton (nonlinear map pi(x), held parameters possible)
NEWTON_SETS = ('reduced', 'grouped', 'grouped_sides')
#: Parameter sets each method runs on (the first is its default); primitives fits its own set
#: (the masses of the description's primitive bodies) and takes none.
PARAM_SETS_OF = {'zmp_newton': ('reduced', 'grouped', 'grouped_sides', 'standard'),
                 **{m: ('standard',) + NEWTON_SETS + ('base',) for m in ROWS_OF},
                 'sdp': ('standard',) + NEWTON_SETS, 'primitives': ()}
#: Row kinds of the ``rows`` option (sdp and primitives).
ROW_KINDS = ('zmp', 'torque', 'floating')
# command-line spelling of the options the checks name (``cli=True``)
_FLAGS = {'method': '--method', 'param_set': '--param-set', 'rows': '--rows',
          'known': '--known', 'foot_from_ft': '--foot-from-ft', 'reg': '--reg',
          'zmp_source': '--zmp-source', 'use_imu': '--no-imu', 'base': '--base'}


@dataclasses.dataclass(frozen=True)
class Sensing:
    """What a recording carries, as far as known before its messages are read.

    Attributes:
        foot_wrench: Feet with a 6-axis foot wrench (ground on foot).
        fsr: Feet with every one of their sole force sensors.
        ankle_ft: Feet with a raw ankle F/T reading.
        imu: Whether the IMU is recorded.
        efforts: Whether joint efforts are recorded; None when unknown (a bag carries them
            inside ``/joint_states``, which only its messages tell).
        source: What the recording is, for messages (e.g. ``'bag run/'``).
    """

    foot_wrench: FrozenSet[str] = frozenset()
    fsr: FrozenSet[str] = frozenset()
    ankle_ft: FrozenSet[str] = frozenset()
    imu: bool = True
    efforts: Optional[bool] = None
    source: str = 'the recording'

    @classmethod
    def of_recording(cls, rec: Recording, source: str = 'the recording') -> 'Sensing':
        """What a loaded :class:`Recording` carries (a column all NaN is not carried)."""
        def some(x):
            return x is not None and np.size(x) > 0 and bool(np.isfinite(x).any())
        return cls(frozenset(f for f, x in rec.foot_wrench.items() if some(x)),
                   frozenset(f for f, x in rec.fsr.items() if some(x)),
                   frozenset(f for f, x in rec.ankle_ft.items() if some(x)),
                   some(rec.imu_quat), some(rec.tau), source)


def _say(option: str, value=None, cli: bool = False) -> str:
    """An option as the user wrote it: ``--param-set base`` (cli) or ``param_set='base'``."""
    if cli:
        flag = _FLAGS.get(option, '--' + option.replace('_', '-'))
        return flag if value is None or isinstance(value, bool) else f'{flag} {value}'
    return option if value is None else f'{option}={value!r}'


def row_kind(method: str, options: dict) -> str:
    """Rows a method fits with these options: 'zmp', 'torque' or 'floating'."""
    if method in ROWS_OF:
        return ROWS_OF[method]
    if method in ('sdp', 'primitives'):
        return options.get('rows') or 'zmp'
    return 'zmp'


def check_method(robot: Robot, method: str, options: dict, cli: bool = False) -> None:
    """Refuse options the method cannot run with, before any data is read.

    Checks the method name, the parameter set against the method (:data:`PARAM_SETS_OF`),
    ``rows`` (sdp and primitives only), ``known`` / ``foot_from_ft`` (methods that hold
    parameters), ``reg='auto'`` (zmp_newton), primitive bodies in the description
    (primitives), an ankle F/T in the description (``foot_from_ft``), and an IMU for the
    'contacts' base.

    Args:
        robot: The robot (its description).
        method: One of :data:`METHODS`.
        options: :func:`identify`'s options (those not given take their defaults).
        cli: Name the options as ``legid identify`` spells them (``--param-set base``).

    Raises:
        BadInputError: One line naming the option at fault and the fix.
    """
    def say(option, value=None):
        return _say(option, value, cli)

    if method not in METHODS:
        raise BadInputError(f'unknown method {method!r}; methods: {", ".join(METHODS)}')
    meth = say('method', method)
    param_set = options.get('param_set')
    sets = PARAM_SETS_OF[method]
    if param_set is not None and param_set not in sets:
        fix = (f'choose one of {", ".join(sets)} (default {sets[0]})' if sets else
               f'drop {say("param_set")}: {method} fits the masses of the description\'s '
               'primitive bodies')
        raise BadInputError(f'{meth} does not run on {say("param_set", param_set)}: {fix}')
    rows = options.get('rows')
    if rows is not None and method not in ('sdp', 'primitives'):
        raise BadInputError(f'{say("rows", rows)} applies to sdp and primitives only; {meth} '
                            f'fits {ROWS_OF.get(method, "zmp")} rows: drop {say("rows")} or '
                            f'use {say("method", "sdp")}')
    if rows is not None and rows not in ROW_KINDS:
        raise BadInputError(f'unknown {say("rows", rows)}: choose one of {", ".join(ROW_KINDS)}')
    _check_held(method, options, cli)
    if options.get('reg') == 'auto' and method != 'zmp_newton':
        raise BadInputError(f"{say('reg', 'auto')} (chosen on a held-out slice) is "
                            f'zmp_newton\'s: give {method} a number, or use '
                            f'{say("method", "zmp_newton")}')
    if method == 'primitives':
        from legid_ros.core.identification.parameters.primitives import parse_primitives
        if not robot.description.get('primitives'):
            raise BadInputError(
                f'{meth} needs primitive bodies in the description of robot {robot.name!r}: '
                "add a 'primitives:' section (link -> cuboids, cylinders, spheres, cones; "
                '`legid describe` writes one from box, cylinder and sphere collision shapes, '
                f'see docs/robots.md), or choose another method, e.g. {say("method", "sdp")}')
        parse_primitives(robot)  # a malformed section is refused here too
    if options.get('foot_from_ft'):
        ft = [f for f, foot in robot.feet.items() if foot.ft_frame and foot.ankle_ft_topic]
        if not ft:
            raise BadInputError(
                f'{say("foot_from_ft")} needs an ankle F/T sensor: no foot of robot '
                f'{robot.name!r} has both ft_frame and ankle_ft_topic in its description; '
                f'add them or drop {say("foot_from_ft")}')
    base = options.get('base', 'auto')
    point = any(foot.contact == 'point' for foot in robot.feet.values())
    if options.get('use_imu') is False and (base == 'contacts' or (base == 'auto' and point)):
        raise BadInputError(f"{say('base', 'contacts')} (the default with point feet) needs "
                            f'the IMU: drop {say("use_imu")}' + (
                                f' or use {say("base", "support")}' if not point else ''))


def check_sensing(robot: Robot, method: str, options: dict, sensing: Sensing,
                  cli: bool = False) -> None:
    """Refuse a recording that lacks what the method and options need, before reading it.

    Every method needs foot forces for every foot (``zmp_source``: sole sensors, foot
    wrenches, or 'auto' either); torque and floating-base rows need joint efforts, floating-
    base rows the 6-axis wrench of every foot; ``use_imu`` (default) needs the IMU;
    ``foot_from_ft`` an ankle F/T reading of a foot that has an F/T frame.

    Args:
        robot: The robot (foot and topic names).
        method: One of :data:`METHODS`.
        options: :func:`identify`'s options.
        sensing: What the recording carries.
        cli: Name the options as ``legid identify`` spells them.

    Raises:
        BadInputError: One line naming the option, what is missing and the fix.
    """
    def say(option, value=None):
        return _say(option, value, cli)

    feet = list(robot.feet)
    src = options.get('zmp_source', 'auto')
    where = sensing.source

    def missing(kind, have):
        """The feet lacking ``kind`` ('wrench' or 'fsr') with the topics they would need."""
        lack = [f for f in feet if f not in have]
        topics = [robot.feet[f].wrench_topic if kind == 'wrench'
                  else ', '.join(robot.feet[f].fsr_topics) or 'none described' for f in lack]
        return ', '.join(f'{f} ({t})' for f, t in zip(lack, topics))

    if src == 'fsr' and not set(feet) <= sensing.fsr:
        raise BadInputError(f'{say("zmp_source", "fsr")} needs the sole force sensors of every '
                            f'foot; {where} lacks those of {missing("fsr", sensing.fsr)}: use '
                            f'{say("zmp_source", "wrench")} or record them')
    if src == 'wrench' and not set(feet) <= sensing.foot_wrench:
        raise BadInputError(f'{say("zmp_source", "wrench")} needs the wrench of every foot; '
                            f'{where} lacks {missing("wrench", sensing.foot_wrench)}: use '
                            f'{say("zmp_source", "fsr")} or record them')
    if src == 'auto' and not (set(feet) <= sensing.fsr or set(feet) <= sensing.foot_wrench):
        raise BadInputError(f'{say("method", method)} needs the forces under every foot (all '
                            f'foot wrenches, or all sole force sensors); {where} lacks the '
                            f'wrench of {missing("wrench", sensing.foot_wrench)} and the sole '
                            f'sensors of {missing("fsr", sensing.fsr)}: record the topics the '
                            'description names, or name the recorded ones in the description')
    kind = row_kind(method, options)
    how = say('method', method) + (f' {say("rows", kind)}' if options.get('rows') else '')
    if kind in ('torque', 'floating') and sensing.efforts is False:
        raise BadInputError(f'{how} fits joint efforts, which {where} lacks (no finite effort '
                            f'in /joint_states): use a ZMP method, e.g. '
                            f'{say("method", "zmp_newton")}')
    if kind == 'floating' and not set(feet) <= sensing.foot_wrench:
        raise BadInputError(f'{how} needs the 6-axis wrench of every foot; {where} lacks '
                            f'{missing("wrench", sensing.foot_wrench)}: use '
                            f'{say("method", "zmp_newton")} or {say("method", "torque_ls")}, '
                            'which need the feet\'s forces only')
    if options.get('use_imu', True) and not sensing.imu:
        point = any(foot.contact == 'point' for foot in robot.feet.values())
        needs = options.get('base', 'auto') == 'contacts' or (
            options.get('base', 'auto') == 'auto' and point)
        raise BadInputError(f'the base orientation comes from the IMU, which {where} lacks '
                            '(/imu): ' + ('record it (the contacts base of point feet needs '
                                          'it)' if needs else f'add {say("use_imu")} to assume '
                                          'the support sole flat'))
    if options.get('foot_from_ft'):
        ft = [f for f, foot in robot.feet.items() if foot.ft_frame and foot.ankle_ft_topic]
        if not set(ft) & sensing.ankle_ft:
            topics = ', '.join(str(robot.feet[f].ankle_ft_topic) for f in ft)
            raise BadInputError(f'{say("foot_from_ft")} needs the raw ankle F/T readings; '
                                f'{where} lacks them ({topics}): record them or drop '
                                f'{say("foot_from_ft")}')


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
        raise BadInputError(f'only {samples.n} usable samples')
    total = opts.pop('total_mass', None)
    total = total_mass_from_forces(samples) if total is None else float(total)
    pi_cad = opts.pop('pi_cad', None)
    if pi_cad is None and recording is not None and recording.pi_cad is not None:
        pi_cad = recording.pi_cad
    weighed = None
    if opts.pop('foot_from_ft', False):
        weighed = _weigh_feet(samples, robot, opts, pi_cad, _param_set(method, opts))
    rows = regs = None
    if method == 'zmp_newton':
        from legid_ros.core.identification.solvers.zmp_newton import identify_zmp_newton
        regs = regressors_for(samples, robot, [])
        res = identify_zmp_newton(regs.wrench, samples.zmp, samples.fz, robot, total,
                                  pi_cad=pi_cad, **opts)
    elif method in ROWS_OF:
        friction = opts.pop('friction', True)
        param_set = opts.pop('param_set', 'standard')
        rows = build_rows(samples, robot, ROWS_OF[method],
                          regressors_for(samples, robot, [ROWS_OF[method]]), friction)
        if param_set in NEWTON_SETS:
            res = _reduced_linear(rows, robot, method, total, pi_cad, param_set=param_set,
                                  **opts)
        elif param_set == 'base':
            from legid_ros.core.identification.solvers.standard import solve_base
            res = solve_base(rows, robot, method, total, pi_cad=pi_cad, **opts)
        else:
            res = solve_standard(rows, robot, method, total, pi_cad=pi_cad, **opts)
    else:
        kind = opts.pop('rows', 'zmp')
        friction = opts.pop('friction', True)
        rows = build_rows(samples, robot, kind, regressors_for(samples, robot, [kind]),
                          friction)
        param_set = opts.pop('param_set', 'standard')
        if method == 'sdp' and param_set in NEWTON_SETS:  # consistent by construction
            res = _reduced_linear(rows, robot, method, total, pi_cad, param_set=param_set,
                                  **opts)
            res.info['lmi'] = 'held by construction of the set (no SDP solved)'
        elif method == 'sdp':
            from legid_ros.core.identification.solvers.sdp import identify_sdp
            res = identify_sdp(rows, robot, total, pi_cad=pi_cad, **opts)
        else:
            from legid_ros.core.identification.parameters.primitives import identify_primitives
            res = identify_primitives(rows, robot, total, pi_cad=pi_cad, **opts)
    res.dropped = dict(samples.dropped)
    res.info.setdefault('prepare', dataclasses.asdict(prep))
    if weighed is not None:
        res.info['foot_from_ft'] = {
            f.foot: {'mass_kg': f.mass_kg, 'mass_std_kg': f.mass_std_kg,
                     'com_m': f.com_m.tolist(), 'n_samples': f.n_samples}
            for f in weighed.feet.values()}
        res.identifiable = weighed.lines() + list(res.identifiable)
    res.uncertainty = _uncertainty(res, robot, samples, regs, rows)
    return res


def _uncertainty(res: IdentResult, robot: Robot, samples: Samples, regs, rows):
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
    core = param_set if param_set in NEWTON_SETS else 'reduced'
    for name, weighed in weighed_mass_names(robot, feet, core).items():
        if name in held:  # weighed feet: the std of their sample-weighted mean
            n = np.array([feet[f]['n_samples'] for f in weighed], float)
            held[name] = float(np.linalg.norm(n * [feet[f]['mass_std_kg'] for f in weighed])
                               / n.sum())
    try:
        if regs is not None:
            zmp, grad = zmp_derivatives(regs.wrench, res.pi, hessian=False)
            # eq. (9) as a sum with the prior N reg |(x - x_cad) / s|^2 (ZmpObjective)
            prior = samples.n * float(res.info.get('reg_m2', 0.0)) \
                if param_set in NEWTON_SETS else 0.0
            return core_uncertainty(robot, res.pi, grad.reshape(-1, grad.shape[2]),
                                    (zmp - samples.zmp).ravel(), samples.n, held, prior=prior,
                                    core=core)
        npi = rows.A.shape[1] - rows.nf
        a, f = rows.A[:, :npi], rows.A[:, npi:]
        r = a @ res.pi - rows.b
        if rows.nf:  # friction at its best fit for these inertials
            r = r + f @ np.linalg.lstsq(f, -r, rcond=None)[0]
        groups, inverse = np.unique(rows.group, return_inverse=True)
        rms = np.sqrt(np.bincount(inverse, r ** 2) / np.bincount(inverse))
        w = 1.0 / np.maximum(rms, 1e-9)[inverse]  # the WLS weights at the estimate
        return core_uncertainty(robot, res.pi, a * w[:, None], r * w, rows.n_samples, held,
                                nuisance=f * w[:, None] if rows.nf else None, core=core)
    except (np.linalg.LinAlgError, ValueError) as exc:
        res.info['uncertainty_error'] = str(exc)
        return None


def _param_set(method: str, opts: dict) -> str:
    """The parameter set a method runs on with these options."""
    return opts.get('param_set', 'reduced' if method == 'zmp_newton' else 'standard')


def _check_held(method: str, opts: dict, cli: bool = False) -> None:
    """``known`` and ``foot_from_ft`` only where a method can hold parameters."""
    held_ok = _param_set(method, opts) in NEWTON_SETS and method != 'primitives'
    zmp = method == 'zmp_newton'
    which = [o for o in ('known', 'foot_from_ft') if opts.get(o)]
    if (opts.get('foot_from_ft') and not held_ok) or (
            opts.get('known') and not (zmp or held_ok)):
        names = ' and '.join(_say(o, None, cli) for o in which)
        raise BadInputError(f'{names} need a reduced-set method or one on a grouped set: '
                            f'{_say("method", "zmp_newton", cli)}, or a linear-row method '
                            f'with {_say("param_set", None, cli)} reduced, grouped or '
                            f'grouped_sides (not {_say("method", method, cli)} on the '
                            f'{_param_set(method, opts)} set)')


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
    res.friction = recover(res.pi) if rows.nf else None
    return res


def _cad(robot):
    from legid_ros.core.inertial import get_parameters
    return get_parameters(robot.model)
