"""Tests of legid_ros.core.identification.parameters.reduced: the 8-parameter ZMP
reduced set of Wu & Gao 2021."""

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.inertial import get_parameters
from legid_ros.core.identification.parameters.reduced import ReducedParameterization
from legid_ros.core.robot import load_robot


@pytest.fixture(scope='module')
def red():
    return ReducedParameterization(load_robot('biped'))


def test_cad_values_reproduce_cad_parameters(red):
    """Phi at the CAD values maps to exactly the URDF's standard parameters."""
    assert red.names == ['lc_trunk', 'lc_thigh', 'lc_shank', 'lc_foot',
                         'm_trunk', 'm_thigh', 'm_shank', 'm_foot']
    assert np.allclose(red.cad(), [0.2106, 0.1919, 0.0552, 0.0761, 13.87, 3.67, 3.19, 2.41])
    assert np.allclose(red.to_standard(red.cad()), red.pi_cad, atol=1e-14)


def test_mass_row_and_fixed_mass_sum_to_total(red):
    """c . Phi plus the ungrouped links' mass equals the model's total mass (33.01 kg)."""
    assert red.mass_row() @ red.cad() + red.fixed_mass == pytest.approx(33.01)
    assert red.mass_row() @ red.cad() == pytest.approx(32.41)


def test_jacobian_matches_finite_differences(red):
    """d pi / d Phi agrees with central differences at a non-CAD point."""
    phi = red.cad() * np.array([1.1, 0.9, 1.2, 0.8, 1.05, 0.95, 1.1, 0.6])
    jac = red.jacobian(phi)
    eps = 1e-6
    num = np.column_stack([(red.to_standard(phi + eps * e) - red.to_standard(phi - eps * e))
                           / (2 * eps) for e in np.eye(red.size)])
    assert np.abs(jac - num).max() < 1e-8


def test_from_standard_inverts_to_standard(red):
    """from_standard(to_standard(Phi)) == Phi."""
    phi = red.cad() * np.array([1.02, 0.97, 1.1, 0.9, 1.07, 1.0, 0.95, 0.52])
    assert np.allclose(red.from_standard(red.to_standard(phi)), phi, atol=1e-12)


def test_bad_shape_rejected(red):
    """A Phi of the wrong length raises BadInputError."""
    with pytest.raises(BadInputError):
        red.to_standard(np.ones(7))


def test_pi_is_not_changed_for_ungrouped_links(red):
    """Links outside the groups (hip and ankle links) keep their CAD parameters."""
    robot = load_robot('biped')
    pi = red.to_standard(red.cad() * 1.3)
    cad = get_parameters(robot.model)
    idx = robot.body_names.index('l_hip_yaw_link')
    assert np.array_equal(pi[10 * idx:10 * idx + 10], cad[10 * idx:10 * idx + 10])


def test_analytic_curvature_matches_differences_of_the_jacobian():
    """The reduced set's analytic curvature equals central differences of its Jacobian, and
    the vectorised Jacobian equals differences of to_standard."""
    from legid_ros.core.identification.parameters.grouped import jacobian_curvature
    from legid_ros.core.identification.parameters.reduced import ReducedParameterization
    from legid_ros.core.robot import load_robot
    red = ReducedParameterization(load_robot('biped'))
    rng = np.random.default_rng(3)
    x = red.cad() + 0.01 * rng.normal(size=red.size)
    g = rng.normal(size=red.pi_cad.size)
    assert red.curvature(x, g) == pytest.approx(jacobian_curvature(red.jacobian, x, g),
                                                abs=1e-8)
    eps = 1e-6
    num = np.array([(red.to_standard(x + eps * e) - red.to_standard(x - eps * e)) / (2 * eps)
                    for e in np.eye(red.size)]).T
    assert red.jacobian(x) == pytest.approx(num, abs=1e-7)
