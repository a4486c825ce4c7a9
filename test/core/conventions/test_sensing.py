"""Tests of legid_ros.core.conventions.sensing (one decision for identify and check)."""

from types import SimpleNamespace

import pytest

from legid_ros.core.conventions.sensing import resolve_zmp_source


@pytest.mark.parametrize('declared, fsr, wrench, expected', [
    ('wrench', True, True, 'wrench'),   # declared wins over sole sensors that exist
    ('fsr', True, True, 'fsr'),
    ('fsr', False, True, 'wrench'),     # declared but not recorded: what is there
    (None, True, True, 'fsr'),
    (None, False, True, 'wrench'),
])
def test_auto_takes_the_declared_sensing_first(declared, fsr, wrench, expected):
    """'auto' resolves to the description's force_sensing when recorded, else the topics."""
    robot = SimpleNamespace(description={'force_sensing': declared} if declared else {})
    got = resolve_zmp_source(robot, 'auto', fsr, wrench)
    assert got.source == expected
    assert got.declared == (declared or '')


def test_an_explicit_source_is_kept():
    """An explicit zmp_source is used as asked, whatever the description declares."""
    robot = SimpleNamespace(description={'force_sensing': 'wrench'})
    assert resolve_zmp_source(robot, 'fsr', True, True).source == 'fsr'
