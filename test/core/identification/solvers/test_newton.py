"""Tests of the projected Newton solver of Wu & Gao 2021 and the mass/box projection."""

import numpy as np
import pytest

from legid_ros.core.errors import InfeasibleProblemError
from legid_ros.core.identification.solvers.newton import newton_solve
from legid_ros.core.identification.solvers.qp import project_mass_box


class _Quad:
    def __init__(self, hess, target):
        self.h, self.t = hess, target

    def __call__(self, x, derivatives=True):
        d = x - self.t

        class V:
            pass
        v = V()
        v.e = float(0.5 * d @ self.h @ d)
        v.grad = self.h @ d if derivatives else None
        v.hess = self.h if derivatives else None
        return v


def test_newton_finds_equality_constrained_minimum():
    """A convex quadratic with c.x = M: the KKT solution, by Newton steps only."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=(4, 4))
    h = a @ a.T + np.eye(4)
    t = rng.normal(size=4)
    c = np.array([0.0, 0.0, 1.0, 1.0])
    res = newton_solve(_Quad(h, t), np.zeros(4), c, 2.0, np.full(4, -10.0), np.full(4, 10.0))
    kkt = np.block([[h, c[:, None]], [c[None, :], np.zeros((1, 1))]])
    expect = np.linalg.solve(kkt, np.r_[h @ t, 2.0])[:4]
    assert res.converged and res.descent_steps == 0
    assert res.x == pytest.approx(expect, abs=1e-8)


def test_indefinite_hessian_falls_back_to_descent_and_keeps_bounds():
    """An indefinite Hessian triggers steepest descent; the result stays in the box and plane."""
    h = np.diag([1.0, -3.0, 2.0])
    c = np.array([1.0, 1.0, 0.0])
    lb, ub = np.array([0.0, 0.0, -1.0]), np.array([3.0, 3.0, 1.0])
    res = newton_solve(_Quad(h, np.array([1.0, 1.0, 0.5])), np.array([1.2, 0.8, 0.0]), c, 2.0,
                       lb, ub, alpha=0.5)
    assert res.descent_steps > 0
    assert c @ res.x == pytest.approx(2.0)
    assert np.all(res.x >= lb - 1e-12) and np.all(res.x <= ub + 1e-12)
    # the concave direction in the plane pushes x1 to its lower bound; x2 reaches its target
    assert res.x[1] == pytest.approx(0.0, abs=1e-6)
    assert res.x[2] == pytest.approx(0.5, abs=1e-3)


def test_projection_is_euclidean_on_plane_and_box():
    """The projection satisfies the constraints and beats random feasible points."""
    rng = np.random.default_rng(1)
    c = np.array([1.0, 2.0, 1.0])
    lb, ub = np.zeros(3), np.full(3, 2.0)
    y = np.array([3.0, -1.0, 0.5])
    x = project_mass_box(y, c, 3.0, lb, ub)
    assert c @ x == pytest.approx(3.0)
    for _ in range(200):
        z = rng.uniform(0, 2, 3)
        z = project_mass_box(z, c, 3.0, lb, ub)
        assert np.linalg.norm(x - y) <= np.linalg.norm(z - y) + 1e-9


def test_infeasible_mass_raises():
    """A total mass outside what the bounds allow is a clear InfeasibleProblemError."""
    with pytest.raises(InfeasibleProblemError, match='total-mass'):
        project_mass_box(np.ones(2), np.ones(2), 10.0, np.zeros(2), np.ones(2))


def test_active_set_fast_path_equals_osqp():
    """The warm-started active-set path gives OSQP's solution when bounds are active."""
    from legid_ros.core.identification.solvers.qp import ParameterQP
    rng = np.random.default_rng(3)
    a = rng.normal(size=(40, 6))
    target = np.array([2.0, -1.0, 0.5, 3.0, 0.1, -0.4])
    hmat, hvec = a.T @ a, a.T @ (a @ target)
    cad, s = np.ones(6), np.ones(6)
    lb, ub = np.full(6, -0.5), np.full(6, 2.5)
    c = np.array([1.0, 1.0, 0.0, 1.0, 0.0, 0.0])
    slow = ParameterQP(cad, s, lb, ub, c, 3.0, reg=1e-3).solve(hmat, hvec, 40.0)
    fast_qp = ParameterQP(cad, s, lb, ub, c, 3.0, reg=1e-3)
    fast = fast_qp.solve(hmat, hvec, 40.0, fast=True)
    assert fast.status == 'solved (active set)'
    assert fast.x == pytest.approx(slow.x, abs=1e-5)
    assert np.any(np.isclose(fast.x, lb)) or np.any(np.isclose(fast.x, ub))
    again = fast_qp.solve(hmat * 1.01, hvec * 1.01, 40.4, fast=True)
    assert again.x == pytest.approx(fast.x, abs=1e-6)
