"""Tests of legid_ros.core.identification.identifiability: relative standard deviations and the
F-test parameter reduction (Zhu & Zhang); the core conditioning check is exercised through
test_api.py and test_online.py."""

import numpy as np

from legid_ros.core.identification.identifiability import f_test_reduction, relative_std


def test_relative_std_matches_monte_carlo():
    """eps_i from the LS covariance agrees with the scatter of repeated noisy fits."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=(400, 3))
    x_true = np.array([1.0, 0.5, 0.2])
    fits = [relative_std(a, a @ x_true + rng.normal(0, 0.3, 400))[0] for _ in range(300)]
    _, eps, _ = relative_std(a, a @ x_true + rng.normal(0, 0.3, 400))
    mc = 100 * np.std(fits, axis=0) / np.abs(x_true)
    assert np.allclose(eps, mc, rtol=0.3)


def test_f_test_removes_the_null_parameters_only():
    """Parameters that are truly zero are removed with F below its 95 % quantile."""
    rng = np.random.default_rng(1)
    a = rng.normal(size=(600, 6))
    x_true = np.array([1.0, -0.8, 0.0, 0.6, 0.0, 0.4])
    y = a @ x_true + rng.normal(0, 0.2, 600)
    names = [f'p{i}' for i in range(6)]
    res = f_test_reduction(a, y, names)
    assert set(res.removed) <= {'p2', 'p4'} and len(res.removed) >= 1
    assert res.f_stat <= res.f_crit
    assert res.ks_pvalue > 0.01
    assert set(res.kept) >= {'p0', 'p1', 'p3', 'p5'}
