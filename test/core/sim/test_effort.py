"""Tests of the current-based effort model (legid_ros.core.sim.effort)."""

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.recording import Recording
from legid_ros.core.sim.effort import current_based_efforts, torque_constant_gains


def _rec(n=50, nj=12):
    rng = np.random.default_rng(0)
    quat = np.tile([0.0, 0.0, 0.0, 1.0], (n, 1))
    return Recording(robot='biped', t=np.arange(n) * 0.01,
                     joint_names=[f'j{i}' for i in range(nj)], q=rng.normal(size=(n, nj)),
                     qd=rng.normal(size=(n, nj)),
                     tau=rng.normal(size=(n, nj)), imu_quat=quat, imu_gyro=np.zeros((n, 3)),
                     imu_acc=np.zeros((n, 3)), meta={'engine': 'mujoco'})


def test_gains_fixed_per_robot_and_spread():
    """The gains depend only on the robot seed and have roughly the asked spread."""
    a = torque_constant_gains(2000, 0.08)
    assert np.array_equal(a, torque_constant_gains(2000, 0.08))
    assert not np.array_equal(a, torque_constant_gains(2000, 0.08, gain_seed=1))
    assert np.std(a) == pytest.approx(0.08, rel=0.1)
    assert np.all(np.abs(a - 1) <= 0.24 + 1e-12)
    assert np.array_equal(torque_constant_gains(5, 0.0), np.ones(5))


def test_efforts_scaled_per_joint_rest_untouched():
    """Only the efforts change, each joint by its own gain."""
    rec = _rec()
    out = current_based_efforts(rec, 0.1)
    gains = np.array(out.meta['effort_gains'])
    assert np.allclose(out.tau, rec.tau * gains)
    assert np.array_equal(out.q, rec.q)
    assert np.ptp(gains) > 0.01
    assert rec.meta.get('effort_gains') is None


def test_bad_std_rejected():
    """A negative or huge torque-constant error is refused."""
    with pytest.raises(BadInputError):
        torque_constant_gains(3, -0.1)
    with pytest.raises(BadInputError):
        torque_constant_gains(3, 0.5)
