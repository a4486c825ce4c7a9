"""Tests of legid_ros.core.inertial: parameter vectors and physical consistency."""

import numpy as np
import pinocchio as pin
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.inertial import (check_consistency, check_link, get_parameters, link_index,
                                     link_view, pack, parameter_names, set_parameters)
from legid_ros.core.robot import load_robot


def test_get_set_round_trip_and_names():
    """set_parameters then get_parameters returns the same vector; names match its length."""
    robot = load_robot('biped')
    pi = get_parameters(robot.model)
    names = parameter_names(robot.model)
    assert len(names) == pi.size == 10 * 13
    assert names[0] == 'trunk.m' and names[-1] == 'r_foot.izz'
    rng = np.random.default_rng(0)
    new = pi * (1 + 0.1 * rng.random(pi.size))
    set_parameters(robot.model, new)
    assert np.allclose(get_parameters(robot.model), new, atol=1e-12)
    assert link_view(new, link_index(robot.model, 'l_thigh'))[0] == new[10 * 3]


def test_parameters_reproduce_rnea_through_regressor():
    """The stacked vector is the one pinocchio's joint-torque regressor multiplies."""
    robot = load_robot('biped')
    model, data = robot.model, robot.new_data()
    rng = np.random.default_rng(1)
    q = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
    q[3:7] /= np.linalg.norm(q[3:7])
    v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
    y = pin.computeJointTorqueRegressor(model, data, q, v, a)
    assert np.allclose(y @ get_parameters(model), pin.rnea(model, data, q, v, a), atol=1e-9)


def test_set_parameters_rejects_bad_vectors():
    """A wrong-length or non-finite vector raises BadInputError and leaves the model intact."""
    robot = load_robot('biped')
    before = get_parameters(robot.model)
    with pytest.raises(BadInputError):
        set_parameters(robot.model, before[:-1])
    bad = before.copy()
    bad[3] = np.nan
    with pytest.raises(BadInputError):
        set_parameters(robot.model, bad)
    assert np.array_equal(get_parameters(robot.model), before)


def test_cad_models_are_consistent():
    """Every built-in robot's CAD parameters pass the consistency check."""
    for name in ('biped', 'quadruped', 'leg3'):
        robot = load_robot(name)
        report = check_consistency(get_parameters(robot.model), robot.body_names)
        assert report.ok, str(report)


def test_consistency_detects_each_violation():
    """Negative mass, a negative moment and a triangle violation are each reported."""
    good = pack(2.0, [0.0, 0.0, -0.1], np.diag([0.02, 0.02, 0.01]))
    assert check_link(good).ok
    neg_mass = good.copy()
    neg_mass[0] = -1.0
    assert not check_link(neg_mass).ok
    triangle = pack(2.0, [0.0, 0.0, -0.1], np.diag([0.01, 0.01, 0.05]))
    res = check_link(triangle, 'x')
    assert not res.ok and 'triangle' in res.problems[0]
    assert res.triangle_margin == pytest.approx(-0.03)
    negative = pack(2.0, [0, 0, 0], np.diag([-0.001, 0.02, 0.02]))
    assert not check_link(negative).ok
    report = check_consistency(np.concatenate([good, triangle]), ['a', 'b'])
    assert report.failing == ['b'] and 'NO' in str(report)


def test_pseudo_inertia_agrees_with_pinocchio_inertia():
    """pack() agrees with pinocchio's Inertia(mass, com, I_com).toDynamicParameters()."""
    inertia = np.array([[0.03, 0.001, 0.0], [0.001, 0.02, 0.002], [0.0, 0.002, 0.025]])
    ours = pack(1.5, [0.01, -0.02, 0.1], inertia)
    ref = pin.Inertia(1.5, np.array([0.01, -0.02, 0.1]), inertia).toDynamicParameters()
    assert np.allclose(ours, ref, atol=1e-15)
