"""Tests of legid_ros.core.excitation.constraints and .collision."""

import numpy as np
import pinocchio as pin
import pytest

from legid_ros.core.excitation.collision import SelfCollision
from legid_ros.core.excitation.constraints import Limits, check, support_margin
from legid_ros.core.excitation.motion import SAFE, plan_motion
from legid_ros.core.excitation.trajectory import sample_plan
from legid_ros.core.inertial import get_parameters
from legid_ros.core.robot import load_robot

SQUARE = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])


def test_support_margin_signed_distance():
    """Inside: distance to the nearest edge; outside: minus the distance."""
    assert support_margin(SQUARE, np.array([0.5, 0.2])) == pytest.approx(0.2)
    assert support_margin(SQUARE, np.array([1.3, 0.5])) == pytest.approx(-0.3)


def test_support_margin_of_a_segment_is_never_positive():
    """Two point feet: a point off the segment is outside by its distance."""
    seg = np.array([[0.0, 0.0], [1.0, 0.0]])
    assert support_margin(seg, np.array([0.5, 0.1])) == pytest.approx(-0.1)


@pytest.fixture(scope='module')
def biped():
    return load_robot('biped')


def test_capsules_see_crossed_legs(biped):
    """Capsule model of the biped (no URDF geometry): legs swung into each other collide,
    the neutral stance does not."""
    q = pin.neutral(biped.model)
    coll = SelfCollision.build(biped, q)
    assert coll.source == 'capsules' and coll.pairs
    assert not coll.colliding(q)
    names = biped.actuated_joint_names
    crossed = q.copy()
    crossed[7 + names.index('l_hip_roll')] = -0.5
    crossed[7 + names.index('r_hip_roll')] = 0.5
    assert coll.colliding(crossed)


def test_check_flags_an_impossible_margin(biped):
    """The same motion passes with a 1 cm ZMP margin and fails with a 50 cm one."""
    plan = plan_motion(biped, 40.0, SAFE)
    traj = sample_plan(biped, plan, get_parameters(biped.model), dt=0.05)
    coll = SelfCollision.build(biped, plan.q)
    ok = check(biped, plan, traj, coll, Limits(zmp_margin_m=0.01))
    bad = check(biped, plan, traj, coll, Limits(zmp_margin_m=0.5))
    assert ok.ok and not bad.ok
    assert ok.limit_violations == 0 and ok.self_collisions == 0
