"""Tests of legid_ros.core.excitation.information."""

import numpy as np
import pytest

from legid_ros.core.excitation.information import (combination_tolerance, determined, predict,
                                                   prediction_of)
from legid_ros.core.excitation.motion import SAFE, plan_motion
from legid_ros.core.excitation.trajectory import sample_plan
from legid_ros.core.identification.uncertainty import Uncertainty
from legid_ros.core.inertial import get_parameters
from legid_ros.core.robot import load_robot


def _unc(std):
    names = ['m_a', 'cx_a']
    return Uncertainty(names, np.array([2.0, 0.01]), np.zeros(2), np.array([0.4, 0.02]),
                       np.zeros((2, 2)), ['m_a', 'cx_a'], np.eye(2), np.asarray(std, float),
                       np.zeros(2, bool))


def test_tolerance_is_two_percent_and_three_mm():
    """A pure mass combination's tolerance is 2 % of its mass, a COM's 3 mm (scale units)."""
    tol = combination_tolerance(_unc([1.0, 1.0]))
    assert tol == pytest.approx([0.02 * 2.0 / 0.4, 0.003 / 0.02])


def test_determined_compares_std_and_bias_to_tolerance():
    """Std under the tolerance is determined; a bias can make it not."""
    u = _unc([0.05, 0.2])
    assert list(determined(u)) == [True, False]
    pred = prediction_of(u, 10, bias=[0.2, 0.0])
    assert list(pred.determined) == [False, False]
    assert 0 < pred.soft_count < 2


@pytest.fixture(scope='module')
def biped():
    return load_robot('biped')


def test_wider_motion_is_predicted_more_informative(biped):
    """Swinging the legs three times wider raises the predicted count of determined
    combinations above the safe motion's."""
    pi = get_parameters(biped.model)
    small = predict(biped, sample_plan(biped, plan_motion(biped, 40.0, SAFE), pi), pi)
    wide = predict(biped, sample_plan(biped, plan_motion(
        biped, 40.0, SAFE.scaled(3.0, swing_rpy=0.3)), pi), pi)
    assert wide.soft_count > small.soft_count
    assert wide.determined.sum() >= small.determined.sum()
    assert np.all(wide.bias >= 0)
