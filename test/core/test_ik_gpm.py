"""Gradient-projection baseline (legid_ros.core.ik.gpm)."""

import numpy as np
import pytest

from legid_ros.core.gait.trot import TrotScheduler, task_profile
from legid_ros.core.ik.ejm import solve_closed_form
from legid_ros.core.ik.gpm import damped_pinv, solve_gpm
from legid_ros.core.ik.leg import LegKinematics, planar_fk, planar_jacobian


@pytest.fixture(scope='module')
def setup():
    lk = LegKinematics('rf')
    return lk.geometry, TrotScheduler(lk.geometry)


def test_damped_pinv_is_pinv_away_from_singularities(setup):
    """Away from singularities the damped pseudo-inverse equals the Moore-Penrose inverse."""
    geo, _ = setup
    th = np.array([[-0.6, 1.2, 0.6], [-0.2, 0.8, 1.0]])
    jac = planar_jacobian(th, geo)
    assert np.max(np.abs(damped_pinv(jac) - np.linalg.pinv(jac))) < 1e-12


def test_damped_pinv_bounded_at_singularity(setup):
    """At a stretched (singular) leg the damped inverse stays finite and bounded."""
    geo, _ = setup
    jac = planar_jacobian(np.array([0.0, 0.0, 0.0]), geo)
    jp = damped_pinv(jac, w0=1e-3, lambda_max=1e-2)
    assert np.all(np.isfinite(jp)) and np.max(np.abs(jp)) < 1e3


def test_self_motion_keeps_foot_still(setup):
    """With zero foot velocity, GPM self-motion changes the joints but not the foot (to 1e-6 m)."""
    geo, _ = setup
    t = np.arange(0, 0.2, 1e-3)
    th0 = np.array([-0.6, 1.2, 0.6])
    x0 = planar_fk(th0, geo)
    xz = np.repeat(x0[None], t.size, 0)
    def grad(th):
        return np.array([th[0] + 0.4, 0.0, 0.0])  # pulls th2 towards -0.4 rad

    res = solve_gpm(geo, t, xz, np.zeros_like(xz), th0, k=-1.0, grad=grad)
    assert abs(res.th[-1, 0] - th0[0]) > 1e-3
    assert np.max(res.foot_err) < 1e-6


def test_gpm_drifts_over_gait_cycles(setup):
    """GPM integrated along a trot drifts from the periodic solution (> 1e-3 rad in 10 cycles)."""
    geo, sched = setup
    t = np.arange(0, 10 * 0.4 + 1e-9, 1e-3)
    tc = sched.leg_time('rf', t)
    pos, vel, _ = sched.cycloids['rf'].evaluate(tc)
    psi, _ = task_profile(sched.params, 'rf', tc)
    th0 = solve_closed_form(geo, pos[:1], 'landing', psi[:1]).q[0, 1:]
    res = solve_gpm(geo, t, pos, vel, th0)
    assert np.max(np.abs(res.th[-1] - th0)) > 1e-3
    assert res.foot_err[-1] > res.foot_err[400]
