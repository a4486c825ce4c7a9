"""Leg kinematics: closed forms against pinocchio (legid_ros.core.ik.leg)."""

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.ik.leg import (LEGS, LegKinematics, from_leg_plane, planar_fk,
                                   planar_jacobian, to_leg_plane)


@pytest.fixture(scope='module')
def legs():
    return {leg: LegKinematics(leg) for leg in LEGS}


def _random_q(rng, geo):
    return rng.uniform(geo.lower + 0.01, geo.upper - 0.01)


def test_geometry_from_urdf(legs):
    """Link lengths from the URDF are 0.35, 0.35, 0.20 m; knee/ankle limits (0.05, 3.09) rad."""
    geo = legs['lf'].geometry
    assert (geo.l1, geo.l2, geo.l3) == pytest.approx((0.35, 0.35, 0.20), abs=1e-12)
    assert geo.lower[2:] == pytest.approx([0.05, 0.05])
    assert geo.upper[2:] == pytest.approx([3.09, 3.09])


def test_closed_form_fk_matches_pinocchio(legs):
    """Planar closed-form FK (with roll and spring) equals pinocchio's foot position to 1e-12 m."""
    rng = np.random.default_rng(1)
    for leg, lk in legs.items():
        for _ in range(50):
            q = _random_q(rng, lk.geometry)
            spring = rng.uniform(0.0, 0.03)
            p_pin = lk.fk(q, spring)
            p_cf = from_leg_plane(q[0], planar_fk(q[1:], lk.geometry, spring))
            assert np.max(np.abs(p_pin - p_cf)) < 1e-12, leg


def test_closed_form_jacobian_matches_pinocchio(legs):
    """Planar 2x3 Jacobian equals pinocchio's frame Jacobian (rows x, z) to 1e-12."""
    rng = np.random.default_rng(2)
    lk = legs['rf']
    for _ in range(50):
        th = _random_q(rng, lk.geometry)[1:]
        diff = lk.planar_jacobian_pin(th) - planar_jacobian(th, lk.geometry)
        assert np.max(np.abs(diff)) < 1e-12


def test_distal_pitch_is_sum_of_pitch_joints(legs):
    """The distal link's absolute angle from pinocchio equals a3 = th2 + th3 + th4."""
    rng = np.random.default_rng(3)
    lk = legs['lh']
    for _ in range(20):
        q = _random_q(rng, lk.geometry)
        diff = np.mod(lk.distal_pitch(q) - q[1:].sum() + np.pi, 2 * np.pi) - np.pi
        assert abs(diff) < 1e-12


def test_leg_plane_round_trip():
    """to_leg_plane and from_leg_plane are inverse for feet below the hip."""
    rng = np.random.default_rng(4)
    p = np.stack([rng.uniform(-0.3, 0.3, 100), rng.uniform(-0.2, 0.2, 100),
                  rng.uniform(-0.8, -0.3, 100)], -1)
    th1, xz = to_leg_plane(p)
    assert np.max(np.abs(from_leg_plane(th1, xz) - p)) < 1e-15


def test_unknown_leg_rejected():
    """An unknown leg name raises BadInputError naming the legs."""
    with pytest.raises(BadInputError, match='unknown leg'):
        LegKinematics('xx')
