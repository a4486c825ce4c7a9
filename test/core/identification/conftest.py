"""Short noisy synthetic runs of the biped shared by the identification tests."""

import pytest

from legid_ros.core.identification.prepare import prepare
from legid_ros.core.identification.threads import limit_blas_threads
from legid_ros.core.robot import load_robot
from legid_ros.core.synthetic import FrictionModel, NoiseModel, SyntheticConfig, simulate_biped

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
