"""Tests of legid_ros.core.friction.fitting."""

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.friction.fitting import (fit_exponential, fit_linear, fit_model,
                                             fit_piecewise, fit_stribeck)
from legid_ros.core.friction.models import CoulombViscous, ExponentialViscous, Stribeck

SPEEDS = np.array([0.01, 0.02, 0.04, 0.07, 0.1, 0.15, 0.2, 0.3, 0.45, 0.7, 1.0, 1.5, 2.0,
                   3.0, 4.0, 5.0])


def _truth(v):
    """A friction law outside every family: Stribeck exponent 1.4 plus a |v|^1.5 term."""
    av = np.abs(v)
    return (np.sign(v) * (0.6 + 0.35 * np.exp(-(av / 0.08) ** 1.4)) + 0.1 * v
            + 0.07 * np.sign(v) * av ** 1.5)


def test_linear_fit_recovers_parameters_with_noise():
    """Coulomb-viscous LS recovers f_c and f_v from noisy points."""
    rng = np.random.default_rng(0)
    v = np.r_[SPEEDS, -SPEEDS]
    tau = CoulombViscous(0.5, 0.12)(v) + rng.normal(0, 0.005, v.size)
    fit = fit_linear(CoulombViscous(), v, tau)
    assert fit.model.f_c == pytest.approx(0.5, abs=0.01)
    assert fit.model.f_v == pytest.approx(0.12, abs=0.01)


def test_stribeck_and_exponent_fits_recover_shape_constants():
    """The Stribeck velocity and the exponential-viscous exponent are found by the 1-D search."""
    rng = np.random.default_rng(1)
    tau = Stribeck(0.5, 0.9, 0.1, v_s=0.06)(SPEEDS) + rng.normal(0, 0.002, SPEEDS.size)
    assert fit_stribeck(SPEEDS, tau, mirror=True).model.v_s == pytest.approx(0.06, rel=0.1)
    tau = ExponentialViscous(0.5, 0.2, 0.0, delta=1.6)(SPEEDS) + rng.normal(0, 0.002,
                                                                            SPEEDS.size)
    assert fit_exponential(SPEEDS, tau, mirror=True).model.delta == pytest.approx(1.6, abs=0.1)


def test_piecewise_beats_other_families_and_is_continuous():
    """The piecewise fit (Xiao et al. 2025) of a foreign law has far lower MSE, meets at v_th."""
    rng = np.random.default_rng(2)
    tau = _truth(SPEEDS) + rng.normal(0, 0.002, SPEEDS.size)
    pw = fit_piecewise(SPEEDS, tau, mirror=True, n_particles=20, iters=60)
    cv = fit_model('coulomb_viscous', SPEEDS, tau, mirror=True)
    st = fit_model('stribeck', SPEEDS, tau, mirror=True)
    assert pw.mse < 0.2 * st.mse < cv.mse
    m = pw.model
    assert m.low(np.array([m.v_th]))[0] == pytest.approx(m.high(np.array([m.v_th]))[0],
                                                          abs=1e-6)
    dense = np.linspace(0.02, 5.0, 300)
    assert np.sqrt(np.mean((m(dense) - _truth(dense)) ** 2)) < 0.02


def test_piecewise_needs_enough_speeds():
    """Too few distinct speeds for the two branches is a BadInputError."""
    with pytest.raises(BadInputError, match='too few'):
        fit_piecewise(SPEEDS[:6], _truth(SPEEDS[:6]))


def test_unknown_model_kind():
    """An unknown model name is a BadInputError listing the known ones."""
    with pytest.raises(BadInputError, match='coulomb_viscous'):
        fit_model('lugre', SPEEDS, _truth(SPEEDS))


def test_piecewise_fit_is_continuous_on_a_dense_sweep():
    """Sweep points up to 6 rad/s weighted 1/std^2 with a 0.1 mN.m std (the weighted v^3|v|
    column dwarfs the continuity row): the fitted branches still meet at v_th to round-off,
    so the model loads from a dict, and the fit stays close to the law."""
    from legid_ros.core.friction.models import model_from_dict
    rng = np.random.default_rng(3)
    v = np.repeat(np.r_[np.geomspace(0.005, 0.3, 15), np.linspace(0.35, 6.0, 25)], 6)
    tau = _truth(v) + rng.normal(0, 0.01, v.size)
    m = fit_piecewise(v, tau, np.full(v.size, 1e8), mirror=True, v_th=0.32, n_particles=20,
                      iters=40).model
    at = np.array([m.v_th, -m.v_th])
    assert np.max(np.abs(m.high(at) - m.low(at))) < 1e-9
    model_from_dict(m.as_dict(), joint='knee')
    dense = np.linspace(0.02, 6.0, 300)
    assert np.sqrt(np.mean((m(dense) - _truth(dense)) ** 2)) < 0.02


def test_vectorised_low_branch_matches_the_model_and_its_derivatives():
    """The swarm's all-particle low branch equals Piecewise.low row by row, and the polish's
    analytic Jacobian equals central differences of it."""
    from legid_ros.core.friction.fitting import _low_jac, _low_rows
    from legid_ros.core.friction.models import Piecewise, smooth_sign
    v = np.r_[SPEEDS[:8], -SPEEDS[:8]]
    av, s = np.abs(v), smooth_sign(v)
    rows = np.array([[0.8, -0.5, 0.1, 0.6], [0.3, 0.4, 0.02, -1.0], [1.1, 0.0, 0.25, 0.0]])
    got = _low_rows(rows, av, s, v)
    for p, row in zip(rows, got):
        want = Piecewise(v_th=0.3, f_sl=p[0], f_scl=p[1], v_sl=p[2], f_vl=p[3]).low(v)
        assert np.array_equal(row, want)
    p, h = rows[0], 1e-6
    num = np.stack([(_low_rows(p + h * e, av, s, v) - _low_rows(p - h * e, av, s, v)) / (2 * h)
                    for e in np.eye(4)], axis=-1)
    assert np.allclose(_low_jac(p, av, s, v), num, atol=1e-6)
