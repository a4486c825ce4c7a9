"""Tests of legid_ros.core.metrics on known numbers."""

import numpy as np
import pytest

from legid_ros.core.identification.parameters.reduced import ReducedParameterization
from legid_ros.core.inertial import get_parameters, pack
from legid_ros.core.metrics import (condition_number, identifiable_reduced_errors, mass_com_errors,
                                    reduced_errors, reduced_group_errors, torque_rel_rms,
                                    zmp_deviation)
from legid_ros.core.robot import load_robot
from legid_ros.core.synthetic import TABLE2_TRUTH, perturbed_truth


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


def test_reduced_group_errors_against_truth():
    """Truth vs itself is error-free; CAD vs Wu & Gao's Table 2 truth gives its mass ratios."""
    robot = load_robot('biped')
    red = ReducedParameterization(robot)
    pi_true = perturbed_truth(robot, TABLE2_TRUTH)
    zero = reduced_group_errors(red, pi_true, pi_true)
    assert all(abs(v) < 1e-9 for v in zero['mass_err_pct'].values())
    assert all(abs(v) < 1e-9 for v in zero['com_err_mm'].values())
    cad = reduced_group_errors(red, get_parameters(robot.model), pi_true)
    assert cad['mass_err_pct']['foot'] == pytest.approx(100 * (2.41 / 1.26 - 1), rel=1e-6)
    assert cad['mass_err_pct']['shank+foot'] == pytest.approx(
        100 * ((3.19 + 2.41) / (2.91 + 1.26) - 1), rel=1e-6)
    assert cad['com_err_mm']['trunk'] == pytest.approx(-1.5, abs=1e-6)


class _Projector:
    """Stands for an uncertainty whose identifiable part is a fixed projection."""

    def __init__(self, p):
        self.p = p

    def identifiable_part(self, e):
        return self.p @ e


def test_identifiable_reduced_errors_drop_unidentifiable_directions():
    """An error along a direction called not identifiable vanishes; the rest is in % and mm."""
    truth = np.array([0.1, 0.2, 2.0, 4.0])  # 2 groups: COMs [m], then masses [kg]
    keep = np.diag([1.0, 1.0, 1.0, 0.0])  # the second mass is not identifiable
    err = np.array([0.001, -0.002, 0.02, 0.4])
    mass, com = identifiable_reduced_errors(_Projector(keep), truth + err, truth, 2)
    assert mass == pytest.approx([1.0, 0.0])
    assert com == pytest.approx([1.0, -2.0])


def test_identifiable_grouped_errors_read_the_first_moments():
    """A unit's mass 20 % off at its first moment (the one direction the data leave out) is no
    COM error in what the data determine; read in (m, c) it was a spurious one of mm."""
    from legid_ros.core.identification.parameters.grouped import GroupedSet
    from legid_ros.core.identification.uncertainty import Uncertainty
    from legid_ros.core.metrics import first_moment_error, identifiable_grouped_errors
    robot = load_robot('biped')
    grp = GroupedSet(robot, per_side=True)
    x = np.asarray(grp.from_standard(get_parameters(robot.model)), float)
    x[1:4] += np.array([0.01, 0.0, 0.0])  # a COM off the origin, so m and c interact
    scales = grp.scales()
    m, c = x[0], x[1:4]
    truth = x.copy()
    truth[0] = 1.2 * m
    truth[1:4] = m * c / truth[0]  # same first moment
    held = np.zeros(x.size)
    held[0], held[1:4] = 1.0, -c / m  # a mass change at a fixed first moment, linearised at x
    held /= scales
    held /= np.linalg.norm(held)
    basis = np.linalg.qr(np.column_stack([held, np.eye(x.size)]))[0][:, :x.size].T
    ok = np.ones(x.size, bool)
    ok[0] = False
    unc = Uncertainty(list(grp.names), x, np.zeros(x.size), scales, np.eye(x.size),
                      vectors=basis, identifiable=ok, combination_std=np.zeros(x.size))
    mass, com = identifiable_grouped_errors(unc, x, truth, grp)
    assert np.max(np.abs(mass)) < 1e-9 and np.max(com) < 1e-9
    plain = unc.identifiable_part(x - truth)
    assert np.linalg.norm(plain[1:4]) * 1e3 > 1.0  # the (m, c) reading's spurious error [mm]
    assert np.allclose(first_moment_error(x, x, grp), 0.0)
