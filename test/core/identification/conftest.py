"""Short noisy synthetic runs shared by the identification tests: the floating-base biped and
the fixed-base geared leg."""

import numpy as np
import pytest

from legid_ros.core.friction.models import JointFriction
from legid_ros.core.identification.fixed_base import leg_context
from legid_ros.core.identification.prepare import prepare
from legid_ros.core.identification.threads import limit_blas_threads
from legid_ros.core.robot import load_robot
from legid_ros.core.synthetic import FrictionModel, NoiseModel, SyntheticConfig, simulate_biped
from legid_ros.core.synthetic.leg import make_truth, preprocess
from legid_ros.core.synthetic.leg_experiment import excitation_run, random_leg_excitation

limit_blas_threads(1)


@pytest.fixture(scope='session')
def biped():
    """The floating-base biped."""
    return load_robot('biped')


@pytest.fixture(scope='session')
def run_a():
    """25 s at 50 Hz, default noise and realistic friction/torque constants (identification)."""
    return simulate_biped(SyntheticConfig(duration_s=25.0, rate_hz=50.0, seed=11))


@pytest.fixture(scope='session')
def run_simple():
    """run_a's motion with friction inside the fitted family and exact torque constants."""
    noise = NoiseModel()
    noise.torque_constant_error = 0.0
    return simulate_biped(SyntheticConfig(duration_s=25.0, rate_hz=50.0, seed=11, noise=noise,
                                          friction=FrictionModel.simple()))


@pytest.fixture(scope='session')
def run_b():
    """15 s at 50 Hz, another seed (validation run)."""
    return simulate_biped(SyntheticConfig(duration_s=15.0, rate_hz=50.0, seed=12))


@pytest.fixture(scope='session')
def samples_a(run_a, biped):
    """Prepared samples of run_a."""
    return prepare(run_a, biped)


@pytest.fixture(scope='session')
def samples_b(run_b, biped):
    """Prepared samples of run_b."""
    return prepare(run_b, biped)


@pytest.fixture(scope='session')
def leg_run():
    """Leg, truth, context, one short noisy excitation run (preprocessed), true friction."""
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
