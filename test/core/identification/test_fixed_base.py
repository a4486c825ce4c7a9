"""Tests of legid_ros.core.identification.fixed_base: drive rows, base parameters, two-step and unified SDP."""

import numpy as np
import pinocchio as pin
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.identification.fixed_base import (identify_two_step, leg_context,
                                                      relative_rms, rigid_error, unified_cv)
from legid_ros.core.identification.fixed_base_result import LegIdentResult
from legid_ros.core.synthetic.leg import make_truth, preprocess, true_torque
from legid_ros.core.synthetic.leg_experiment import excitation_run, random_leg_excitation
from legid_ros.core.identification.rows.drive import rigid_rotor_regressor
from legid_ros.core.friction.models import JointFriction, Piecewise
from legid_ros.core.robot import load_robot


@pytest.fixture(scope='module')
def setup():
    """Leg, truth, context and one short noisy excitation run (preprocessed)."""
    robot = load_robot('leg3', floating_base=False)
    truth = make_truth(robot)
    ctx = leg_context(robot)
    ex = random_leg_excitation(ctx, seed=5)
    data = excitation_run(robot, truth, ex, cycles=1, reps=2, seed=1, rate=200.0)
    friction = _true_friction(truth, ctx.drive.joint_names)
    return robot, truth, ctx, preprocess(data, decimate=2), friction


def _true_friction(truth, names):
    """Piecewise models that are a dense fit of the true velocity law (ripple excluded)."""
    from legid_ros.core.friction.fitting import fit_piecewise
    v = np.r_[np.geomspace(0.005, 0.3, 12), np.linspace(0.35, 6.0, 14)]
    models = [fit_piecewise(v, f.velocity_part(v), mirror=True, v_th=0.3, n_particles=20,
                            iters=40).model for f in truth.friction]
    return JointFriction(list(names), models)


def test_regressor_reproduces_inverse_dynamics_with_rotor(setup):
    """[Y | ratio^2 qdd] theta equals pinocchio's rnea with the rotor armature."""
    robot, truth, ctx, _, _ = setup
    rng = np.random.default_rng(0)
    q, qd, qdd = (rng.uniform(-1, 1, (5, 3)) for _ in range(3))
    w = rigid_rotor_regressor(robot.model, ctx.drive, q, qd, qdd)
    tau = true_torque(robot, truth, q, qd, qdd) - truth.friction_torque(q, qd)
    assert np.allclose(w @ truth.theta, tau.reshape(-1), atol=1e-10)


def test_base_parameters_explain_the_full_regressor(setup):
    """The base map B reproduces every torque: Y_b (B theta) == Y theta, with 18 columns."""
    robot, truth, ctx, _, _ = setup
    rng = np.random.default_rng(1)
    q, qd, qdd = (rng.uniform(-2, 2, (20, 3)) for _ in range(3))
    w = rigid_rotor_regressor(robot.model, ctx.drive, q, qd, qdd)
    assert ctx.base.rank == 18
    assert np.allclose(ctx.base.regressor(w) @ (ctx.base.B @ truth.theta), w @ truth.theta,
                       atol=1e-9)


def test_two_step_recovers_base_parameters_and_is_consistent(setup):
    """With the friction known, the SDP recovers the base parameters from noisy data."""
    robot, truth, ctx, (q, qd, qdd, tau), fr = setup
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


def test_unified_cv_is_consistent_and_worse_than_two_step(setup):
    """Unified Coulomb-viscous is physically consistent but predicts torque worse."""
    robot, truth, ctx, (q, qd, qdd, tau), fr = setup
    cv = unified_cv(ctx, q, qd, qdd, tau)
    two = identify_two_step(ctx, q, qd, qdd, tau, fr)
    assert cv.consistent
    assert all(0.2 < m.f_c < 1.5 for m in cv.friction.models)
    e_cv = relative_rms(tau, cv.torque(robot, q, qd, qdd))
    e_two = relative_rms(tau, two.torque(robot, q, qd, qdd))
    assert np.all(e_two < e_cv)


def test_result_round_trip_and_model(setup, tmp_path):
    """A saved result loads back with identical torques; its model carries the armature."""
    robot, truth, ctx, (q, qd, qdd, tau), _ = setup
    res = LegIdentResult('truth', 'leg3', list(ctx.drive.joint_names), ctx.link_names,
                         truth.pi, truth.drive.rotor_inertia, truth.drive.gear_ratio,
                         JointFriction(list(ctx.drive.joint_names),
                                       [Piecewise(f_sh=0.5, f_vh=0.1) for _ in range(3)]))
    res.save(tmp_path / 'r.yaml')
    back = LegIdentResult.load(tmp_path / 'r.yaml')
    assert np.allclose(back.torque(robot, q[:10], qd[:10], qdd[:10]),
                       res.torque(robot, q[:10], qd[:10], qdd[:10]))
    model = res.model(robot)
    assert np.allclose(model.armature, truth.drive.reflected_inertia)
    m = pin.crba(model, model.createData(), q[0])
    assert np.all(np.diag(m) > truth.drive.reflected_inertia)


def test_floating_base_robot_is_rejected():
    """Leg identification refuses a floating-base model."""
    with pytest.raises(BadInputError, match='fixed-base'):
        leg_context(load_robot('leg3', floating_base=True))
