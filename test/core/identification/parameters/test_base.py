"""Tests of base parameters by QR with column pivoting."""

import numpy as np
import pytest

from legid_ros.core.identification.parameters.base import base_parameters
from legid_ros.core.identification.rows.linear import build_rows
from legid_ros.core.identification.parameters.sets import StandardSet


def test_base_parameters_reproduce_rows_and_recover_with_prior(biped, run_a, samples_a):
    """A_b beta = A pi for any pi; standard parameters from beta and a prior fit the rows."""
    sub = samples_a.take(slice(0, samples_a.n, 5))
    rows = build_rows(sub, biped, 'torque', friction=False)
    std = StandardSet(biped)
    bp = base_parameters(rows.A, std.names, std.scales())
    assert 0 < bp.rank < std.size
    pi = run_a.pi_true
    assert bp.regressor(rows.A) @ bp.beta(pi) == pytest.approx(rows.A @ pi, abs=1e-8)
    back = bp.to_standard(bp.beta(pi), run_a.pi_cad, std.scales())
    assert rows.A @ back == pytest.approx(rows.A @ pi, abs=1e-8)
    assert np.linalg.norm(back - run_a.pi_cad) <= np.linalg.norm(pi - run_a.pi_cad) + 1e-12
    assert len(bp.names) == bp.rank


def test_zmp_rows_have_fewer_base_parameters_than_floating(biped, samples_a):
    """Two ZMP rows per sample carry less than the full floating-base rows."""
    sub = samples_a.take(slice(0, samples_a.n, 5))
    std = StandardSet(biped)
    zmp = base_parameters(build_rows(sub, biped, 'zmp').A, std.names, std.scales())
    sub.foot_wrench = {k: v for k, v in sub.foot_wrench.items()}
    flo = base_parameters(build_rows(sub, biped, 'floating', friction=False).A, std.names,
                          std.scales())
    assert zmp.rank < flo.rank


def test_unit_norm_columns_ascending_order_and_full_names():
    """The fixed-base leg's options: unit-norm columns, ascending order, zeroing, full names."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=(50, 3)) * [1.0, 100.0, 0.01]
    a = np.hstack([a, a[:, [0]] + 2 * a[:, [2]], np.zeros((50, 1))])
    names = ['p0', 'p1', 'p2', 'p3', 'p4']
    bp = base_parameters(a, names, 'norm', ascending=True, zero_below=1e-10, full_names=True)
    assert bp.rank == 3
    assert list(bp.independent) == sorted(bp.independent)
    assert np.allclose(bp.B[:, bp.independent], np.eye(3))
    pi = rng.normal(size=5)
    assert bp.regressor(a) @ bp.beta(pi) == pytest.approx(a @ pi, abs=1e-9)
    assert all(n.split()[0] == names[i] for n, i in zip(bp.names, bp.independent))
    assert np.array_equal(bp.K, bp.B[:, bp.dependent])
