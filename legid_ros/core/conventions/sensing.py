"""Which foot forces identification uses: decided once, for ``legid identify`` and
``legid check`` alike.

``zmp_source='auto'`` takes the description's declared ``force_sensing`` ('wrench' or
'fsr') when the recording carries it for every foot, else the sole sensors when every foot
has them, else the foot wrenches. An explicit source is kept as asked.
"""

from __future__ import annotations

from dataclasses import dataclass

SOURCES = ('auto', 'fsr', 'wrench', 'true')


@dataclass(frozen=True)
class ForceSource:
    """The force sensing chosen.

    Attributes:
        source: 'fsr', 'wrench' or 'true'.
        reason: Why, in a few words (for reports and ``legid check``).
        declared: The description's ``force_sensing`` ('' if none).
    """

    source: str
    reason: str
    declared: str = ''


def declared_sensing(robot) -> str:
    """The description's ``force_sensing`` if it names one source ('wrench' or 'fsr')."""
    value = str((robot.description or {}).get('force_sensing') or '')
    return value if value in ('wrench', 'fsr') else ''


def resolve_zmp_source(robot, requested: str, has_fsr: bool, has_wrench: bool) -> ForceSource:
    """The force sensing ``requested`` resolves to.

    Args:
        robot: The robot (its description's ``force_sensing``).
        requested: 'auto', 'fsr', 'wrench' or 'true'.
        has_fsr: The recording has the sole sensors of every foot.
        has_wrench: The recording has the wrench of every foot.
    """
    declared = declared_sensing(robot)
    if requested != 'auto':
        return ForceSource(requested, f'asked for {requested}', declared)
    have = {'fsr': has_fsr, 'wrench': has_wrench}
    if declared and have[declared]:
        return ForceSource(declared, f'the description declares force_sensing: {declared}',
                           declared)
    if has_fsr:
        why = (f'declared {declared} is not recorded; ' if declared else '') + \
            'every foot has its sole sensors'
        return ForceSource('fsr', why, declared)
    why = (f'declared {declared} is not recorded; ' if declared else '') + \
        'no sole sensors for every foot'
    return ForceSource('wrench', why, declared)
