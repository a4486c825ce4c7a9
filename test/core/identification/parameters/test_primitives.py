"""Tests of the Tencent patent application's primitive bodies (unit inertias, basis, consistency by
construction)."""

import numpy as np
import pinocchio as pin
import pytest

from legid_ros.core.identification.parameters.primitives import (parse_primitives, primitive_basis,
                                                                 unit_inertia)
from legid_ros.core.inertial import check_consistency, get_parameters


def test_unit_inertias_match_pinocchio():
    """Cuboid, cylinder and sphere unit inertias equal pinocchio's closed forms."""
    i, _ = unit_inertia('cuboid', {'size': [0.2, 0.3, 0.4]})
    assert i == pytest.approx(pin.Inertia.FromBox(1.0, 0.2, 0.3, 0.4).inertia)
    i, _ = unit_inertia('cylinder', {'radius': 0.05, 'length': 0.3})
    assert i == pytest.approx(pin.Inertia.FromCylinder(1.0, 0.05, 0.3).inertia)
    i, _ = unit_inertia('sphere', {'radius': 0.07})
    assert i == pytest.approx(pin.Inertia.FromSphere(1.0, 0.07).inertia)


def test_cone_inertia_by_sampling():
    """The cone's unit inertia about its centroid matches a Monte-Carlo estimate."""
    r, h = 0.05, 0.12
    rng = np.random.default_rng(0)
    p = rng.uniform([-r, -r, 0], [r, r, h], size=(400000, 3))
    inside = np.hypot(p[:, 0], p[:, 1]) <= r * (1 - p[:, 2] / h)
    p = p[inside]
    p -= p.mean(axis=0)
    ixx = np.mean(p[:, 1] ** 2 + p[:, 2] ** 2)
    izz = np.mean(p[:, 0] ** 2 + p[:, 1] ** 2)
    i, _ = unit_inertia('cone', {'radius': r, 'length': h})
    assert i[0, 0] == pytest.approx(ixx, rel=0.02)
    assert i[2, 2] == pytest.approx(izz, rel=0.02)


def test_basis_reproduces_cad_masses_and_any_mix_is_consistent(biped):
    """pi_fixed + P rho_cad keeps CAD masses; random non-negative masses are consistent."""
    cad = get_parameters(biped.model)
    basis, fixed, rho_cad, bodies = primitive_basis(biped, cad)
    pi = fixed + basis @ rho_cad
    assert pi[::10] == pytest.approx(cad[::10], rel=1e-3)
    assert len(bodies) == sum(len(v) for v in parse_primitives(biped).values())
    rng = np.random.default_rng(1)
    for _ in range(5):
        rho = rng.uniform(0.01, 5.0, rho_cad.size)
        assert check_consistency(fixed + basis @ rho, biped.body_names).ok
