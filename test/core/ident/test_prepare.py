"""Tests of the sample preparation (measured ZMP, base state from the support foot)."""

import numpy as np
import pytest

from legid_ros.core.ident.prepare import PrepareOptions, prepare


def test_measured_zmp_from_sensors_and_wrench_match_truth(biped, run_a, samples_a):
    """Sole-sensor and 6-axis ZMPs agree with the true ZMP to about a millimetre."""
    err_fsr = np.linalg.norm(samples_a.zmp - samples_a.zmp_true, axis=1)
    assert np.mean(err_fsr) < 1e-3
    wr = prepare(run_a, biped, PrepareOptions(zmp_source='wrench'))
    assert np.mean(np.linalg.norm(wr.zmp - wr.zmp_true, axis=1)) < 1e-3
    assert np.all(samples_a.support == 'right') and not samples_a.double_support.any()


def test_base_state_from_support_foot_matches_truth(biped, run_a, samples_a):
    """The kinematic base pose and twist equal the simulator's (sole flat, not slipping)."""
    k = slice(20, -20)
    assert samples_a.q[k, :3] == pytest.approx(run_a.base_pose_true[k, :3], abs=2e-3)
    assert samples_a.v[k, :6] == pytest.approx(run_a.base_vel_true[k], abs=5e-3)


def test_decimation_keeps_every_step_th_sample(biped, run_a):
    """step=5 keeps every 5th sample of the filtered, differentiated signals."""
    full = prepare(run_a, biped, PrepareOptions(use_imu=False))
    dec = prepare(run_a, biped, PrepareOptions(use_imu=False, step=5))
    assert dec.t == pytest.approx(full.t[::5])
    assert dec.zmp == pytest.approx(full.zmp[::5], abs=1e-12)
