"""Prerequisites of the batch methods: what each method and option needs, checked before
any data is read (``legid identify`` runs these right after parsing its arguments).

Light on purpose (numpy and the description only): the command checks the prerequisites
while the heavy modules of :mod:`.api` still load in another thread.
"""

from __future__ import annotations

import dataclasses
from typing import FrozenSet, Optional

import numpy as np

from legid_ros.core.conventions.sensing import resolve_zmp_source
from legid_ros.core.errors import BadInputError
from legid_ros.core.identification import METHODS
from legid_ros.core.recording import Recording
from legid_ros.core.robot import Robot

ROWS_OF = {'zmp_qp': 'zmp', 'torque_ls': 'torque', 'floating_qp': 'floating'}
# parameter sets solved by Newton (nonlinear map pi(x), held parameters possible)
NEWTON_SETS = ('reduced', 'grouped', 'grouped_sides', 'auto')
#: Parameter sets each method runs on (the first is its default); primitives fits its own set
#: (the masses of the description's primitive bodies) and takes none.
PARAM_SETS_OF = {'zmp_newton': ('reduced', 'grouped', 'grouped_sides', 'standard', 'auto'),
                 **{m: ('standard',) + NEWTON_SETS + ('base',) for m in ROWS_OF},
                 'sdp': ('standard',) + NEWTON_SETS, 'primitives': ()}
#: Row kinds of the ``rows`` option (sdp and primitives).
ROW_KINDS = ('zmp', 'torque', 'floating')
# command-line spelling of the options the checks name (``cli=True``)
_FLAGS = {'method': '--method', 'param_set': '--param-set', 'rows': '--rows',
          'known': '--known', 'foot_from_ft': '--foot-from-ft', 'reg': '--reg',
          'zmp_source': '--zmp-source', 'use_imu': '--no-imu', 'base': '--base',
          'base_acc': '--base-acc'}


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
    if options.get('use_imu') is False and options.get('base_acc') == 'imu':
        raise BadInputError(f"{say('base_acc', 'imu')} reads the IMU's accelerometer: drop "
                            f'{say("use_imu")} or {say("base_acc", "imu")}')
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
    if src == 'auto' and set(feet) <= sensing.foot_wrench | sensing.fsr:
        src = resolve_zmp_source(robot, src, set(feet) <= sensing.fsr,
                                 set(feet) <= sensing.foot_wrench).source

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
                            f'({robot.imu.topic}; description key imu.topic): '
                            + ('record it (the contacts base of point feet needs it)' if needs
                               else f'add {say("use_imu")} to assume the support sole flat'))
    if options.get('foot_from_ft'):
        ft = [f for f, foot in robot.feet.items() if foot.ft_frame and foot.ankle_ft_topic]
        if not set(ft) & sensing.ankle_ft:
            topics = ', '.join(str(robot.feet[f].ankle_ft_topic) for f in ft)
            raise BadInputError(f'{say("foot_from_ft")} needs the raw ankle F/T readings; '
                                f'{where} lacks them ({topics}): record them or drop '
                                f'{say("foot_from_ft")}')


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

