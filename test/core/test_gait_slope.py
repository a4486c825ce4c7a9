"""Slope stability and friction cone (legid_ros.core.gait.slope)."""

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.gait.slope import (com_offset, diagonal_intersection, edge_distance,
                                       in_friction_cone, slope_stability, touchdown_friction)
from legid_ros.core.gait.trot import TrotParams, TrotScheduler
from legid_ros.core.ik.leg import LegKinematics


@pytest.fixture(scope='module')
def paper_slope_case():
    geo = LegKinematics('lf').geometry
    return TrotScheduler(geo, TrotParams(landing_front=np.radians(30.0),
                                         landing_hind=np.radians(50.0)))


def test_com_offset_formula():
    """S1 = h tan(beta) cos(beta) = h sin(beta)."""
    assert com_offset(0.7, np.radians(12.0)) == pytest.approx(0.7 * np.sin(np.radians(12.0)))
    with pytest.raises(BadInputError):
        com_offset(0.7, np.radians(95.0))


def test_diagonal_intersection_and_edges():
    """Diagonals of a rectangle meet at its centre, 0.15 m from the edges of a 0.3 m wide one."""
    feet = {'lf': np.array([0.4, 0.15]), 'rf': np.array([0.4, -0.15]),
            'lh': np.array([-0.4, 0.15]), 'rh': np.array([-0.4, -0.15])}
    o = diagonal_intersection(feet)
    assert o == pytest.approx([0.0, 0.0], abs=1e-15)
    assert edge_distance(feet, o) == pytest.approx(0.15)


def test_paper_slope_case_is_stable(paper_slope_case):
    """beta = 12 deg, front 30 deg, hind 50 deg: |S1 - S2| <= r; hind feet further forward."""
    rep = slope_stability(paper_slope_case, np.radians(12.0))
    assert rep.ok and rep.margin >= 0
    assert abs(rep.s1 - rep.s2) <= rep.r
    assert rep.s1 == pytest.approx(rep.h * np.sin(np.radians(12.0)))
    c = paper_slope_case.params.x_centers
    assert c['lh'] > c['lf'] + 0.1


def test_steeper_slope_fails_check(paper_slope_case):
    """On a 30 deg slope the same gait fails the stability check."""
    assert not slope_stability(paper_slope_case, np.radians(30.0)).ok


def test_friction_cone(paper_slope_case):
    """Touchdown velocity (9.6 deg) is inside a mu = 0.6 cone; the 50 deg hind link is not."""
    assert in_friction_cone(0.5, 0.6) and not in_friction_cone(0.6, 0.6)
    rep = touchdown_friction(paper_slope_case, 0.6)
    assert all(r.ok for r in rep.values())
    assert rep['lf'].link_ok and not rep['lh'].link_ok
    assert not any(r.ok for r in touchdown_friction(paper_slope_case, 0.1).values())
    with pytest.raises(BadInputError):
        in_friction_cone(0.1, 0.0)
