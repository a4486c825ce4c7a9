"""Trot scheduler (legid_ros.core.gait.trot)."""

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.gait.trot import TrotParams, TrotScheduler, joint_margin
from legid_ros.core.ik.ejm import solve_closed_form
from legid_ros.core.ik.leg import LEGS, LegKinematics


@pytest.fixture(scope='module')
def sched():
    return TrotScheduler(LegKinematics('lf').geometry)


def test_default_cycle_is_04_s(sched):
    """The default trot cycle is 0.4 s with half stance, half swing."""
    assert sched.params.period == pytest.approx(0.4)
    assert sched.cycloids['lf'].t_stance == pytest.approx(0.2)


def test_diagonal_pairs_half_cycle_apart(sched):
    """lf/rh move together, rf/lh move together, half a cycle later; stance flags alternate."""
    t = np.linspace(0, 0.8, 801)
    plan = sched.plan(t)
    later = sched.plan(t + 0.2)
    assert np.array_equal(plan.stance['lf'], plan.stance['rh'])
    assert np.array_equal(plan.stance['rf'], plan.stance['lh'])
    assert not np.any(plan.stance['lf'] & plan.stance['rf'])
    assert np.allclose(later.pos['rf'], plan.pos['lf'] - [sched.cycloids['lf'].x_center, 0, 0]
                       + [sched.cycloids['rf'].x_center, 0, 0], atol=1e-12)


def test_task_profile_starts_at_touchdown_value(sched):
    """The landing angle equals th50 at each leg's touchdown and is periodic."""
    p = sched.params
    for leg, t0 in (('lf', 0.0), ('rf', 0.2)):
        plan = sched.plan(np.array([t0, t0 + p.period, t0 + 0.1]))
        assert plan.psi[leg][0] == pytest.approx(p.landing_front)
        assert plan.psi[leg][1] == pytest.approx(p.landing_front)
        assert plan.psi[leg][2] > p.landing_front


def test_whole_gait_reachable_with_margin(sched):
    """Every leg's cycle is reachable inside the joint ranges with the chosen stride centres."""
    t = np.linspace(0, 0.4, 401)
    plan = sched.plan(t)
    for leg in LEGS:
        sol = solve_closed_form(sched.geo, plan.pos[leg], 'landing', plan.psi[leg], times=t,
                                leg=leg)
        assert sol.min_abs_det > 0.01
        assert joint_margin(sched.geo, sched.params, leg, sched.cycloids[leg].x_center) > 0.05


def test_hip_task_gait():
    """A hip-task trot plans and solves: th2 follows th20 + phi2 (1 - cos) / 2 exactly."""
    geo = LegKinematics('lf').geometry
    s = TrotScheduler(geo, TrotParams(task='hip', hip_start=-0.7, hip_amplitude=0.1))
    t = np.linspace(0, 0.4, 101)
    plan = s.plan(t)
    sol = solve_closed_form(geo, plan.pos['lf'], 'hip', plan.psi['lf'], times=t, leg='lf')
    assert np.max(np.abs(sol.q[:, 1] - (-0.7 + 0.05 * (1 - np.cos(2 * np.pi * t / 0.4))))) < 1e-12


def test_bad_params_rejected():
    """Unknown tasks and a duty outside (0, 1) raise BadInputError."""
    with pytest.raises(BadInputError):
        TrotParams(task='elbow')
    with pytest.raises(BadInputError):
        TrotParams(duty=1.0)
