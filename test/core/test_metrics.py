"""Tests of legid_ros.core.metrics on known numbers."""

import numpy as np
import pytest

from legid_ros.core.inertial import pack
from legid_ros.core.metrics import (condition_number, mass_com_errors, reduced_errors,
                                    torque_rel_rms, zmp_deviation)


def test_zmp_deviation_statistics():
    """Mean, percentile and max of Euclidean distances, in mm, NaN rows ignored."""
    meas = np.zeros((5, 2))
    model = np.array([[0.003, 0.004], [0, 0.001], [0, 0], [np.nan, 0], [0.001, 0]])
    d = zmp_deviation(model, meas)
    assert d.mean_mm == pytest.approx((5 + 1 + 0 + 1) / 4)
    assert d.max_mm == pytest.approx(5.0)
    assert d.n == 4


def test_mass_com_and_reduced_errors():
    """Mass error in percent and COM error in millimetres per link."""
    truth = pack(2.0, np.array([0, 0, 0.1]), np.eye(3) * 1e-3)
    est = pack(2.1, np.array([0, 0.003, 0.104]), np.eye(3) * 1e-3)
    err = mass_com_errors(est, truth, ['link'])['link']
    assert err['mass_err_pct'] == pytest.approx(5.0)
    assert err['com_err_mm'] == pytest.approx(5.0)
    r = reduced_errors(np.array([0.101, 2.2]), np.array([0.1, 2.0]), ['lc_a', 'm_a'])
    assert r == pytest.approx({'lc_a': 1.0, 'm_a': 10.0})


def test_torque_rel_rms_and_condition_number():
    """Relative RMS error per joint; condition number of a scaled diagonal matrix."""
    tau = np.column_stack([np.ones(10), 2 * np.ones(10)])
    assert torque_rel_rms(tau * 1.1, tau) == pytest.approx([0.1, 0.1])
    assert condition_number(np.diag([1.0, 1e-3])) == pytest.approx(1e3)
    assert condition_number(np.diag([1.0, 1e-3]), np.array([1.0, 1e3])) == pytest.approx(1.0)
