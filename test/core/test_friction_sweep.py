"""Tests of legid_ros.core.friction.sweep on the synthetic leg."""

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.friction.sweep import (SweepPlan, extract_friction, label_plateaus,
                                           sweep_trajectory)
from legid_ros.core.synthetic.leg import make_truth, simulate
from legid_ros.core.robot import load_robot

SPEEDS = (0.02, 0.05, 0.1, 0.3, 0.8, 1.5, 3.0)


@pytest.fixture(scope='module')
def leg():
    """The leg and its ground truth."""
    robot = load_robot('leg3', floating_base=False)
    return robot, make_truth(robot)


def test_trajectory_has_plateaus_in_both_directions():
    """Every speed level has constant-speed samples at +v and -v over the same positions."""
    traj = sweep_trajectory(SweepPlan(1, [0.0, 0.3, 1.2], speeds=SPEEDS, reps=2, rate=200))
    for i, v in enumerate(SPEEDS):
        pos = (traj.plateau == i) & (traj.direction > 0)
        neg = (traj.plateau == i) & (traj.direction < 0)
        assert np.allclose(traj.qd[pos, 1], v) and np.allclose(traj.qd[neg, 1], -v)
        assert abs(traj.q[pos, 1].mean() - traj.q[neg, 1].mean()) < 0.05
    assert np.allclose(traj.q[:, 0], 0.0) and np.allclose(traj.q[:, 2], 1.2)
    step = np.diff(traj.q[:, 1]) - 0.5 * (traj.qd[1:, 1] + traj.qd[:-1, 1]) * np.diff(traj.t)
    assert np.max(np.abs(step)) < 2e-3  # positions integrate the velocities


def test_extraction_recovers_true_friction_with_noise(leg):
    """(tau+ - tau-)/2 matches the true velocity-dependent friction within 10 mN.m."""
    robot, truth = leg
    traj = sweep_trajectory(SweepPlan(2, [0.0, 0.3, 1.2], speeds=SPEEDS, reps=2, rate=200))
    data = simulate(robot, truth, traj.t, traj.q, traj.qd, traj.qdd, seed=3)
    sf = extract_friction(data.q[:, 2], traj.qd[:, 2], data.tau[:, 2], traj.plateau,
                          traj.direction, 'knee')
    true = truth.friction[2].velocity_part(sf.speed)
    assert np.max(np.abs(sf.tau_f - true)) < 0.01
    assert np.all(np.isfinite(sf.g[np.isfinite(sf.g)])) and np.any(np.isfinite(sf.g))


def test_too_few_speeds_is_reported():
    """A sweep with fewer plateau speeds than needed names the count and the minimum."""
    traj = sweep_trajectory(SweepPlan(0, [0.0, 0.3, 1.2], speeds=SPEEDS[:3], reps=1,
                                      rate=200))
    with pytest.raises(BadInputError, match='3 plateau speeds.*at least 6'):
        extract_friction(traj.q[:, 0], traj.qd[:, 0], np.zeros(len(traj.t)), traj.plateau,
                         traj.direction, 'hip_abad')


def test_joint_that_never_reverses_is_reported():
    """Plateaus in one direction only give a 'never reverses' error."""
    traj = sweep_trajectory(SweepPlan(0, [0.0, 0.3, 1.2], speeds=SPEEDS, reps=1, rate=200))
    one_way = np.where(traj.direction < 0, -1, traj.plateau)
    with pytest.raises(BadInputError, match='never reverses'):
        extract_friction(traj.q[:, 0], traj.qd[:, 0], np.zeros(len(traj.t)), one_way,
                         np.where(one_way >= 0, 1, 0), 'hip_abad')


def test_label_plateaus_finds_the_constant_speed_segments():
    """Plateaus found from the velocity alone cover the planned ones and keep their levels."""
    traj = sweep_trajectory(SweepPlan(0, [0.0, 0.3, 1.2], speeds=SPEEDS, reps=1, rate=200))
    plateau, direction = label_plateaus(traj.qd[:, 0], 200.0)
    planned = traj.plateau >= 0
    assert np.mean(plateau[planned] >= 0) > 0.95
    assert np.all(direction[planned & (plateau >= 0)] == traj.direction[planned
                                                                          & (plateau >= 0)])
    assert len(np.unique(plateau[planned & (plateau >= 0)])) == len(SPEEDS)


def test_extraction_from_measurements_only(leg):
    """Filtering, plateau labelling and extraction from measured q and tau alone work."""
    from legid_ros.core.friction.sweep import extract_friction_measured
    robot, truth = leg
    traj = sweep_trajectory(SweepPlan(1, [0.0, 0.3, 1.2], speeds=SPEEDS, reps=2, rate=500))
    data = simulate(robot, truth, traj.t, traj.q, traj.qd, traj.qdd, seed=5)
    sf = extract_friction_measured(data.t, data.q[:, 1], data.tau[:, 1], 'hip_flex')
    assert np.allclose(np.sort(sf.speed), SPEEDS, rtol=0.02)
    true = truth.friction[1].velocity_part(sf.speed)
    assert np.max(np.abs(sf.tau_f - true)) < 0.01
