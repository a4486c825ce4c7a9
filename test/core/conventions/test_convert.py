"""Tests of legid_ros.core.conventions.convert (bags in other conventions, read as ours)."""

import numpy as np
import pytest

from legid_ros.bag.recording_io import read_bag


@pytest.mark.parametrize('name, force_tol', [('world', 0.1), ('foot', 1e-9), ('imu', 1e-9),
                                             ('imu_drift_world', 0.1)])
def test_a_setup_s_bag_reads_as_the_canonical_one(variant_bags, name, force_tol):
    """A bag whose IMU is on another topic, mounted rotated with a yawed (or drifting)
    reference, or whose forces are in world or foot axes, reads (with its description) as the
    canonical bag: IMU
    exactly, foot forces exactly or, in world axes (turned by the IMU's noisy orientation),
    within 0.1 N."""
    bag, _, robot = variant_bags['canonical']
    ref = read_bag(bag, robot)
    bag, _, robot = variant_bags[name]
    rec = read_bag(bag, robot)
    assert rec.meta['conventions']
    assert np.allclose(np.abs(np.sum(rec.imu_quat * ref.imu_quat, axis=1)), 1.0, atol=1e-9)
    assert np.allclose(rec.imu_gyro, ref.imu_gyro, atol=1e-9)
    assert np.allclose(rec.imu_acc, ref.imu_acc, atol=1e-9)
    for foot, w in ref.foot_wrench.items():
        assert np.abs(rec.foot_wrench[foot] - w).max() < force_tol


def test_the_canonical_bag_is_left_as_read(variant_bags):
    """A bag in the internal convention is not converted (no conventions note)."""
    bag, _, robot = variant_bags['canonical']
    assert 'conventions' not in read_bag(bag, robot).meta
