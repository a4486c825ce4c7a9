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


def test_matrix_quat_matches_pinocchio_and_keeps_no_memory():
    """matrix_quat gives pinocchio's [x, y, z, w] for C- and F-order matrices, and 20 000 calls
    on C-order matrices keep no heap (pin.Quaternion(C-order matrix) keeps 80 bytes each)."""
    import ctypes

    import pinocchio as pin
    from scipy.spatial.transform import Rotation

    from legid_ros.core.conventions.convert import matrix_quat

    rots = Rotation.random(50, random_state=3).as_matrix()
    for rot in rots:
        want = pin.Quaternion(np.asfortranarray(rot)).coeffs()
        for arr in (np.ascontiguousarray(rot), np.asfortranarray(rot), rot.T.T):
            assert np.allclose(matrix_quat(arr), want, atol=1e-12)
        x, y, z, w = matrix_quat(rot)
        assert np.allclose(pin.Quaternion(w, x, y, z).matrix(), rot, atol=1e-12)

    class MallInfo2(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in (
            'arena', 'ordblks', 'smblks', 'hblks', 'hblkhd', 'usmblks', 'fsmblks', 'uordblks',
            'fordblks', 'keepcost')]

    try:
        libc = ctypes.CDLL('libc.so.6')
        libc.mallinfo2.restype = MallInfo2
    except (OSError, AttributeError):
        pytest.skip('glibc mallinfo2 not available')
    rot = np.ascontiguousarray(rots[0])
    for _ in range(1000):
        matrix_quat(rot)
    before = libc.mallinfo2().uordblks
    for _ in range(20000):
        matrix_quat(rot)
    kept = libc.mallinfo2().uordblks - before
    assert kept < 200_000, f'{kept} bytes kept by 20 000 conversions'
