"""Tests of legid_ros.core.sim.leg_closed_loop: the MuJoCo leg in torque mode at 1 kHz."""

import numpy as np
import pytest

from legid_ros.core.feedforward import (FeedforwardModel, PdFeedforwardController, PdGains,
                                        reflected_rotor_inertia)
from legid_ros.core.synthetic.leg import TrueFriction
from legid_ros.core.robot import load_robot
from legid_ros.core.sim.leg_closed_loop import (FourierTrajectory, LegPlant, LegSimConfig,
                                                PlantFriction, SampledTrajectory, run_tracking)


@pytest.fixture(scope='module')
def leg():
    return load_robot('leg3', floating_base=False)


def _true_ff(leg, friction):
    return FeedforwardModel(leg, rotor_inertia=reflected_rotor_inertia(leg),
                            friction=lambda v: friction(v))


def test_plant_friction_is_the_generator_law(leg):
    """The plant's friction law equals the synthetic generator's TrueFriction per joint."""
    pf = PlantFriction.from_description(leg)
    table = leg.description['true_friction']
    rng = np.random.default_rng(0)
    v = np.concatenate([rng.normal(0, 0.05, 30), rng.uniform(-4, 4, 30)])
    q = rng.uniform(-1, 1, v.size)
    for j, name in enumerate(leg.actuated_joint_names):
        tf = TrueFriction(**{k: float(x) for k, x in table[name].items()})
        mine = np.array([pf(np.full(3, a), np.full(3, b))[j] for a, b in zip(v, q)])
        np.testing.assert_allclose(mine, tf(q, v), rtol=1e-9, atol=1e-9)


def test_exact_model_feedforward_beats_pd_only(leg):
    """With the plant's own model as feedforward, max tracking error drops by > 5x vs PD only."""
    traj = FourierTrajectory.geared_leg_validation()
    pf = PlantFriction.from_description(leg)
    errs = {}
    for label, ff in (('pd', None), ('exact', _true_ff(leg, pf))):
        ctl = PdFeedforwardController.for_robot(leg, ff)
        res = run_tracking(leg, ctl, traj, 2.0, LegSimConfig(), label)
        errs[label] = res.errors(skip_s=0.2)[0]
        assert res.saturated_cycles == 0
    assert np.all(errs['pd'] > 5 * errs['exact'])
    assert np.all(errs['pd'] < 0.01)


def test_logged_torque_matches_inverse_dynamics(leg):
    """The logged motor torque equals rigid body + rotor + friction along the motion."""
    pf = PlantFriction.from_description(leg)
    ctl = PdFeedforwardController.for_robot(
        leg, FeedforwardModel(leg, rotor_inertia=reflected_rotor_inertia(leg)))
    res = run_tracking(leg, ctl, FourierTrajectory.geared_leg_validation(), 1.5,
                       LegSimConfig(encoder_resolution=0.0))
    dt = res.meta['control_dt_s']
    q, qd = res.q_true, res.qd
    mid = 0.5 * (q[1:] + q[:-1])
    model = _true_ff(leg, pf)
    tau_id = np.array([model.torque(a, b, c) for a, b, c in
                       zip(mid, (q[1:] - q[:-1]) / dt, (qd[1:] - qd[:-1]) / dt)])
    err = (res.tau[:-1] - tau_id)[100:]
    assert np.sqrt(np.mean(err ** 2)) < 0.04  # [N.m]; torques reach 1.3-2.7 N.m
    assert np.abs(res.tau).max() > 1.0


def test_explicit_derivative_with_published_gains_is_unstable_but_implicit_is_not(leg):
    """The geared leg's published Kd sampled at 1 kHz diverges here; implicit damping holds."""
    traj = FourierTrajectory.geared_leg_validation()
    out = {}
    for mode in ('explicit', 'implicit'):
        ctl = PdFeedforwardController.for_robot(leg, None, gains=PdGains.geared_leg())
        res = run_tracking(leg, ctl, traj, 0.3, LegSimConfig(damping=mode), mode)
        out[mode] = res.errors()[0].max()
    assert out['implicit'] < 0.005
    assert out['explicit'] > 10 * out['implicit']


def test_sampled_trajectory_and_plant_reset(leg):
    """A sampled trajectory interpolates linearly; the plant starts where it is reset."""
    t = np.array([0.0, 1.0])
    q = np.array([[0.0, 0.3, 1.0], [0.2, 0.5, 1.4]])
    st = SampledTrajectory(t, q, np.tile([0.2, 0.2, 0.4], (2, 1)), np.zeros((2, 3)))
    qm, qdm, _ = st.sample(0.5)
    np.testing.assert_allclose(qm, [0.1, 0.4, 1.2])
    np.testing.assert_allclose(qdm, [0.2, 0.2, 0.4])
    plant = LegPlant(leg)
    plant.reset(qm, qdm)
    meas_q, meas_qd = plant.measure()
    np.testing.assert_allclose(meas_q, qm, atol=plant.config.encoder_resolution)
    np.testing.assert_allclose(meas_qd, qdm)
    np.testing.assert_allclose(plant.model.dof_armature, reflected_rotor_inertia(leg))
