"""Tests of legid_ros.core.identification.rows.linear: the WLS weights of row groups."""

import numpy as np
import pytest

from legid_ros.core.identification.rows.linear import Rows, group_weights


def _rows(b: np.ndarray) -> Rows:
    """Rows of two groups (alternating) with one zero column: the residual is ``-b``."""
    n = b.size // 2
    return Rows(np.zeros((b.size, 1)), -b, np.tile([0, 1], n), n, 0, 'torque')


def test_group_weights_are_the_inverse_group_variances_with_a_relative_floor():
    """Each row's weight is 1 / its group's mean squared residual; a group the fit reproduces
    exactly is floored at ``rel_floor`` of the largest group's RMS, not at ``floor`` alone."""
    rng = np.random.default_rng(0)
    n = 400
    noisy = np.column_stack([rng.normal(0.0, 2.0, n), rng.normal(0.0, 0.1, n)]).reshape(-1)
    w = group_weights(_rows(noisy), np.zeros(1))
    for g in (0, 1):
        assert w[g] == pytest.approx(1.0 / np.mean(noisy[g::2] ** 2))
    exact = np.column_stack([rng.normal(0.0, 2.0, n), np.zeros(n)]).reshape(-1)
    rms0 = np.sqrt(np.mean(exact[0::2] ** 2))
    assert group_weights(_rows(exact), np.zeros(1))[1] == pytest.approx(1e18)
    w = group_weights(_rows(exact), np.zeros(1), rel_floor=1e-6)
    assert w[1] == pytest.approx(1.0 / (1e-9 + 1e-6 * rms0) ** 2)
    assert w[0] == pytest.approx(1.0 / rms0 ** 2)
