"""Tests of legid_ros.core.identification.excitation_trajectory."""

import numpy as np
import pytest

from legid_ros.core.errors import InfeasibleProblemError, SolverError
from legid_ros.core.identification.excitation_trajectory import (ExcitationLimits,
                                                                 FourierExcitation,
                                                                 excitation_basis,
                                                                 optimise_excitation,
                                                                 random_excitation)

LIMITS = ExcitationLimits(np.array([-1.0, -0.5]), np.array([1.0, 1.5]), np.array([2.0, 3.0]),
                          np.array([10.0, 15.0]))
T_GRID = np.linspace(0, 4.0, 60)


def _toy_cond(ex):
    """Condition number of a small regressor with inertial, Coulomb-like and gravity columns."""
    q, qd, qdd = ex.evaluate(T_GRID)
    cols = [qdd[:, 0], qdd[:, 1], np.tanh(20 * qd[:, 0]), qd[:, 1], np.sin(q[:, 0]),
            np.cos(q[:, 1]) * qdd[:, 0]]
    return float(np.linalg.cond(np.column_stack(cols)))


def test_quintic_makes_ends_rest_at_the_centre():
    """Offset, velocity and acceleration vanish at t = 0 and t = T for any coefficients."""
    ex = FourierExcitation(4.0, np.array([0.2, 0.5]),
                           np.random.default_rng(0).normal(size=(2, 10)))
    q, qd, qdd = ex.evaluate(np.array([0.0, 4.0]))
    assert np.allclose(q, ex.q0, atol=1e-9)
    assert np.allclose(qd, 0, atol=1e-9) and np.allclose(qdd, 0, atol=1e-8)


def test_basis_derivatives_are_consistent():
    """The velocity and acceleration maps are the time derivatives of the position map."""
    t = np.linspace(0, 4.0, 4001)
    g0, g1, g2 = excitation_basis(t, 4.0)
    assert np.allclose(np.gradient(g0, t, axis=0)[5:-5], g1[5:-5], atol=1e-4)
    assert np.allclose(np.gradient(g1, t, axis=0)[5:-5], g2[5:-5], atol=1e-3)


def test_random_excitation_respects_limits():
    """Random coefficients are scaled so every limit holds and one is reached."""
    ex = random_excitation(2, 4.0, LIMITS, seed=3, n_grid=400)
    q, qd, qdd = ex.evaluate(np.linspace(0, 4.0, 400))
    assert np.all(q >= LIMITS.q_low - 1e-9) and np.all(q <= LIMITS.q_high + 1e-9)
    assert np.all(np.abs(qd) <= LIMITS.qd_max + 1e-9)
    assert np.all(np.abs(qdd) <= LIMITS.qdd_max + 1e-9)
    q0 = ex.q0
    ratios = np.r_[(q.max(0) - q0) / (LIMITS.q_high - q0), (q0 - q.min(0)) / (q0 - LIMITS.q_low),
                   np.abs(qd).max(0) / LIMITS.qd_max, np.abs(qdd).max(0) / LIMITS.qdd_max]
    assert ratios.max() > 0.99


def test_optimisation_lowers_the_condition_number_within_limits():
    """Optimised coefficients give a condition number well below random ones, within limits."""
    res = optimise_excitation(_toy_cond, 2, 4.0, LIMITS, n_grid=100, starts=1, seed=1)
    rand = np.median([_toy_cond(random_excitation(2, 4.0, LIMITS, seed=s)) for s in range(5)])
    assert res.cond < rand / 3
    q, qd, qdd = res.excitation.evaluate(np.linspace(0, 4.0, 100))
    assert np.all(np.abs(qd) <= LIMITS.qd_max + 1e-5)
    assert np.all(q <= LIMITS.q_high + 1e-5) and np.all(q >= LIMITS.q_low - 1e-5)


def test_non_convergence_is_reported_with_last_state():
    """An iteration cap too small raises SolverError carrying the last coefficients."""
    with pytest.raises(SolverError) as err:
        optimise_excitation(_toy_cond, 2, 4.0, LIMITS, n_grid=50, starts=1, maxiter=1)
    assert err.value.last_state.shape == (2, 10)


def test_centre_outside_limits_is_infeasible():
    """A centre position outside the limits is an InfeasibleProblemError."""
    with pytest.raises(InfeasibleProblemError):
        optimise_excitation(_toy_cond, 2, 4.0, LIMITS, q0=[2.0, 0.0])
