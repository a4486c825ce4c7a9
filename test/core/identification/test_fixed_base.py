"""Tests of legid_ros.core.identification.fixed_base (the fixed-base geared leg): drive rows,
base parameters, two-step and unified consistent SDP."""

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.identification.fixed_base import (identify_two_step, leg_context,
                                                      relative_rms, rigid_error, unified_cv)
from legid_ros.core.identification.rows.drive import rigid_rotor_regressor
from legid_ros.core.synthetic.leg import true_torque
from legid_ros.core.robot import load_robot


def test_regressor_reproduces_inverse_dynamics_with_rotor(leg_run):
    """[Y | ratio^2 qdd] theta equals pinocchio's rnea with the rotor armature."""
    robot, truth, ctx, _, _ = leg_run
    rng = np.random.default_rng(0)
    q, qd, qdd = (rng.uniform(-1, 1, (5, 3)) for _ in range(3))
    w = rigid_rotor_regressor(robot.model, ctx.drive, q, qd, qdd)
    tau = true_torque(robot, truth, q, qd, qdd) - truth.friction_torque(q, qd)
    assert np.allclose(w @ truth.theta, tau.reshape(-1), atol=1e-10)


def test_base_parameters_explain_the_full_regressor(leg_run):
    """The base map B reproduces every torque: Y_b (B theta) == Y theta, with 18 columns."""
    robot, truth, ctx, _, _ = leg_run
    rng = np.random.default_rng(1)
    q, qd, qdd = (rng.uniform(-2, 2, (20, 3)) for _ in range(3))
    w = rigid_rotor_regressor(robot.model, ctx.drive, q, qd, qdd)
    assert ctx.base.rank == 18
    assert np.allclose(ctx.base.regressor(w) @ (ctx.base.B @ truth.theta), w @ truth.theta,
                       atol=1e-9)


def test_two_step_recovers_base_parameters_and_is_consistent(leg_run):
    """With the friction known, the SDP recovers the base parameters from noisy data."""
    robot, truth, ctx, (q, qd, qdd, tau), fr = leg_run
    res = identify_two_step(ctx, q, qd, qdd, tau, fr)
    beta_true = ctx.base.B @ truth.theta
    assert rigid_error(ctx, res.beta, beta_true, q, qd, qdd) < 0.02
    assert res.consistent
    masses = res.pi[::10]
    cad = ctx.theta_cad[:30:10]
    assert np.all(masses >= 0.8 * cad - 1e-6) and np.all(masses <= 1.2 * cad + 1e-6)
    assert np.all(res.rotor_inertia > 0)
    err = relative_rms(tau, res.torque(robot, q, qd, qdd))
    assert np.all(err < 0.05)


def test_unified_cv_is_consistent_and_worse_than_two_step(leg_run):
    """Unified Coulomb-viscous is physically consistent but predicts torque worse."""
    robot, truth, ctx, (q, qd, qdd, tau), fr = leg_run
    cv = unified_cv(ctx, q, qd, qdd, tau)
    two = identify_two_step(ctx, q, qd, qdd, tau, fr)
    assert cv.consistent
    assert all(0.2 < m.f_c < 1.5 for m in cv.friction.models)
    e_cv = relative_rms(tau, cv.torque(robot, q, qd, qdd))
    e_two = relative_rms(tau, two.torque(robot, q, qd, qdd))
    assert np.all(e_two < e_cv)


def test_floating_base_robot_is_rejected():
    """Leg identification refuses a floating-base model."""
    with pytest.raises(BadInputError, match='fixed-base'):
        leg_context(load_robot('leg3', floating_base=True))
