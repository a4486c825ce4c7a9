"""The uncertainty of an auto set holds at CAD, with the prior width, what the set does not fit."""

from types import SimpleNamespace

import pytest

from legid_ros.core.identification.api import _auto_held
from legid_ros.core.identification.parameters.grouped import GroupedSet
from legid_ros.core.identification.uncertainty import PRIOR_WIDTH
from legid_ros.core.inertial import get_parameters
from legid_ros.core.robot import load_robot


def test_auto_held_names_what_each_level_leaves_at_cad():
    """Each level holds at CAD what it does not fit, with one scale unit (the width) as std."""
    robot = load_robot('biped')
    pi = get_parameters(robot.model)
    units = GroupedSet(robot, pi_cad=pi, per_side=False).units
    levels = dict(zip(units, ['mass+com', 'none', 'mass', 'axial']))
    held = _auto_held(robot, SimpleNamespace(info={'levels': levels}, pi=pi))
    a, b, c, d = units[:4]
    assert set(held) == ({f'm_{b}', f'cx_{b}', f'cy_{b}', f'cz_{b}', f'cx_{c}', f'cy_{c}',
                          f'cz_{c}', f'm_{d}'})
    scales = dict(zip(GroupedSet(robot, pi_cad=pi, per_side=False).names,
                      GroupedSet(robot, pi_cad=pi, per_side=False).scales()))
    assert held[f'm_{b}'] == pytest.approx(PRIOR_WIDTH * scales[f'm_{b}'])
    assert _auto_held(robot, SimpleNamespace(info={}, pi=pi)) == {}
