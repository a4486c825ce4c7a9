"""Tests of the sensor calibration errors (legid_ros.core.sim.calibration)."""

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.recording import Recording
from legid_ros.core.sim.calibration import (CalibrationErrors, gains, miscalibrated,
                                            torque_constant_gains)


def _rec(n=50, nj=12):
    rng = np.random.default_rng(0)
    quat = np.tile([0.0, 0.0, 0.0, 1.0], (n, 1))
    return Recording(robot='biped', t=np.arange(n) * 0.01,
                     joint_names=[f'j{i}' for i in range(nj)], q=rng.normal(size=(n, nj)),
                     qd=rng.normal(size=(n, nj)), tau=rng.normal(size=(n, nj)), imu_quat=quat,
                     imu_gyro=np.zeros((n, 3)), imu_acc=np.zeros((n, 3)),
                     fsr={'right': rng.uniform(10, 50, (n, 4)), 'left': np.zeros((n, 4))},
                     foot_wrench={'right': rng.normal(size=(n, 6))}, meta={'engine': 'mujoco'})


def test_gains_fixed_per_robot_and_spread():
    """The gains depend only on the robot seed and have roughly the asked spread."""
    a = torque_constant_gains(2000, 0.08)
    assert np.array_equal(a, torque_constant_gains(2000, 0.08))
    assert not np.array_equal(a, torque_constant_gains(2000, 0.08, seed=1))
    assert np.std(a) == pytest.approx(0.08, rel=0.1)
    assert np.all(np.abs(a - 1) <= 0.24 + 1e-12)
    assert np.array_equal(gains(5, 0.0, 0, 3), np.ones(5))


def test_every_sensor_scaled_by_its_own_gain_rest_untouched():
    """Efforts per joint, sole sensors per sensor, F/T per axis; positions unchanged."""
    rec = _rec()
    out = miscalibrated(rec, CalibrationErrors(0.1, 0.05, 0.02, seed=3))
    k_tau = out.tau[0] / rec.tau[0]
    assert np.allclose(out.tau, rec.tau * k_tau)
    assert np.ptp(k_tau) > 0.01
    k_fsr = out.fsr['right'][0] / rec.fsr['right'][0]
    assert np.allclose(out.fsr['right'], rec.fsr['right'] * k_fsr)
    assert 0.005 < np.ptp(k_fsr) < 0.5
    assert np.array_equal(out.fsr['left'], rec.fsr['left'])
    assert np.allclose(out.foot_wrench['right'] / rec.foot_wrench['right'],
                       out.foot_wrench['right'][0] / rec.foot_wrench['right'][0])
    assert np.array_equal(out.q, rec.q)
    assert out.meta['calibration']['fsr_gain_std'] == 0.05
    assert 'calibration' not in rec.meta


def test_same_robot_same_errors_in_every_run():
    """Two runs of the same robot get identical gains."""
    a, b = _rec(), _rec(n=30)
    err = CalibrationErrors()
    ka = miscalibrated(a, err).fsr['right'][0] / a.fsr['right'][0]
    kb = miscalibrated(b, err).fsr['right'][0] / b.fsr['right'][0]
    assert np.allclose(ka, kb)


def test_bad_std_rejected():
    """A negative or huge gain error is refused."""
    with pytest.raises(BadInputError):
        torque_constant_gains(3, -0.1)
    with pytest.raises(BadInputError):
        gains(3, 0.5, 0, 0)
