"""Tests of the published parameter sets: CAD inertia about the COM keeps sets consistent."""

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.inertial import check_consistency, get_parameters
from legid_ros.core.pipeline.published_parameters import inertia_about_com, with_cad_inertia
from legid_ros.core.robot import load_robot


def test_keeps_mass_and_com_and_fixes_inertia():
    """Masses and COMs stay, inertia about the COM becomes CAD x mass ratio, set consistent."""
    robot = load_robot('biped')
    cad = get_parameters(robot.model)
    rng = np.random.default_rng(0)
    pi = cad.copy()
    pi[0::10] *= rng.uniform(0.7, 1.3, pi[0::10].size)
    for k in range(pi.size // 10):
        pi[10 * k + 4:10 * k + 10] += rng.normal(0, 0.05, 6)  # wreck the inertias
    assert not check_consistency(pi, robot.body_names).ok
    out = with_cad_inertia(pi, cad)
    assert check_consistency(out, robot.body_names).ok
    np.testing.assert_allclose(out[0::10], pi[0::10])
    for k in range(pi.size // 10):
        np.testing.assert_allclose(out[10 * k + 1:10 * k + 4], pi[10 * k + 1:10 * k + 4])
        ratio = pi[10 * k] / cad[10 * k]
        np.testing.assert_allclose(inertia_about_com(out[10 * k:10 * k + 10]),
                                   ratio * inertia_about_com(cad[10 * k:10 * k + 10]),
                                   atol=1e-12)


def test_rejects_non_positive_mass():
    """A non-positive identified mass cannot be made consistent: BadInputError."""
    robot = load_robot('biped')
    cad = get_parameters(robot.model)
    pi = cad.copy()
    pi[0] = -1.0
    with pytest.raises(BadInputError):
        with_cad_inertia(pi, cad)
