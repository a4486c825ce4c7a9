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


@pytest.mark.parametrize('n_pinned', [0, 1, 2])
def test_converged_means_optimal_on_random_box_problems(n_pinned):
    """Random convex problems, bounds active at the optimum, 0-2 pinned variables: every run
    converges to the reference optimum (better of SLSQP and OSQP) within 1e-6 relative cost.
    """
    from legid_ros.bench.solver_problems import random_problem, reference_cost, relative_gap
    rng = np.random.default_rng(100 + n_pinned)
    for _ in range(40):
        prob = random_problem(rng, n_pinned=n_pinned)
        res = newton_solve(prob.fun, prob.x0, prob.c, prob.total, prob.lb, prob.ub,
                           scales=prob.scales)
        assert res.converged and res.status == 'converged'
        assert relative_gap(prob.fun(res.x, derivatives=False).e,
                            reference_cost(prob)) <= 1e-6
        assert prob.c @ res.x == pytest.approx(prob.total, rel=1e-10)
        assert np.all(res.x >= prob.lb) and np.all(res.x <= prob.ub)
        pinned = prob.lb == prob.ub
        assert np.all(res.x[pinned] == prob.lb[pinned])


def test_not_converged_is_reported_with_the_last_iterate():
    """An iteration limit too small for the problem: status 'max_iterations', converged
    False, the last feasible iterate returned, and a SolverError carrying it on request."""
    from legid_ros.bench.solver_problems import random_problem
    from legid_ros.core.errors import SolverError
    prob = random_problem(np.random.default_rng(7), n_pinned=1)
    # unscaled steepest descent only (alpha tiny): no chance to converge in 3 iterations
    res = newton_solve(prob.fun, prob.x0, prob.c, prob.total, prob.lb, prob.ub, max_iter=3,
                       min_eig_ratio=2.0, alpha=1e-6)
    assert not res.converged and res.status == 'max_iterations' and res.iterations == 3
    assert res.descent_steps == 3 and res.predicted_decrease > 0
    assert prob.c @ res.x == pytest.approx(prob.total)
    with pytest.raises(SolverError) as err:
        newton_solve(prob.fun, prob.x0, prob.c, prob.total, prob.lb, prob.ub, max_iter=3,
                     min_eig_ratio=2.0, alpha=1e-6, raise_on_failure=True)
    assert err.value.status == 'max_iterations'
    assert err.value.last_state == pytest.approx(res.x)


def test_weighed_foot_reaches_the_slsqp_optimum(biped, run_a, samples_a):
    """The biped with the foot mass known (pinned, ``known={'m_foot': 1.26}``): the ZMP
    Newton's cost equals SLSQP's on the same cost within 1e-6 (it used to stop 3 % above)."""
    from legid_ros.bench.solver_problems import captured_newton_problems, relative_gap, slsqp
    from legid_ros.core.identification.api import identify
    store = []
    with captured_newton_problems(store):
        res = identify(run_a, biped, 'zmp_newton', samples=samples_a,
                       known={'m_foot': 1.26})
    call = store[-1]
    assert res.info['converged'] and res.info['status'] == 'converged'
    assert res.x[7] == 1.26
    x_ref = slsqp(call['fun'], call['x0'], call['c'], call['total'], call['lb'], call['ub'],
                  call['scales'])
    ref = call['fun'](x_ref, derivatives=False).e
    assert relative_gap(call['fun'](res.x, derivatives=False).e, ref) <= 1e-6


def test_osqp_short_of_tolerance_is_never_a_solution():
    """OSQP stopped by its iteration limit: the exact active-set solve replaces it (same
    optimum as a full OSQP solve); if that fails too, SolverNotConvergedError with OSQP's
    last iterate."""
    from legid_ros.core.errors import SolverNotConvergedError
    from legid_ros.core.identification.solvers.qp import ParameterQP
    rng = np.random.default_rng(4)
    a = rng.normal(size=(40, 6)) * np.array([1.0, 10.0, 0.1, 1.0, 3.0, 0.3])
    target = np.array([2.0, -1.0, 0.5, 3.0, 0.1, -0.4])
    hmat, hvec = a.T @ a, a.T @ (a @ target)
    cad, s = np.ones(6), np.ones(6)
    lb, ub = np.full(6, -0.5), np.full(6, 2.5)
    c = np.array([1.0, 1.0, 0.0, 1.0, 0.0, 0.0])
    full = ParameterQP(cad, s, lb, ub, c, 3.0, reg=1e-3).solve(hmat, hvec, 40.0)
    short = ParameterQP(cad, s, lb, ub, c, 3.0, reg=1e-3)
    short.solve(hmat, hvec, 40.0)
    short._prob.update_settings(max_iter=2, polishing=False)
    sol = short.solve(2 * hmat, 2 * hvec, 80.0, warm=cad)
    assert sol.status == 'solved (active set after OSQP maximum iterations reached)'
    assert sol.x == pytest.approx(full.x, abs=1e-5)
    short._active_set = lambda p, q: None
    with pytest.raises(SolverNotConvergedError, match='short of its tolerance') as err:
        short.solve(hmat, hvec, 40.0, warm=cad)
    assert err.value.status == 'maximum iterations reached' and err.value.last_state.size == 6


def test_box_step_settles_on_an_ill_conditioned_model():
    """A model Hessian of condition 1e13 (a direction the data barely sees, as the exact ZMP
    invariance with no prior): the active-set step still ends, at the KKT point."""
    from legid_ros.core.identification.solvers.box_qp import augment_equality, box_qp_step
    rng = np.random.default_rng(5)
    q, _ = np.linalg.qr(rng.normal(size=(6, 6)))
    b = q @ np.diag([1.0, 0.5, 0.3, 0.2, 0.1, 1e-13]) @ q.T
    c = np.array([1.0, 1.0, 0.0, 1.0, 0.0, 0.0])
    g = rng.normal(size=6)
    step = box_qp_step(g, augment_equality(b, c), c, np.full(6, -5.0), np.full(6, 5.0))
    assert step is not None and abs(c @ step.d) < 1e-9
    assert np.all(np.abs(step.d) <= 5.0 + 1e-12) and step.decrease > 0


def test_pinned_variable_curvature_does_not_force_descent():
    """Negative curvature along a pinned variable only (it cannot move): Newton steps, not
    the steepest-descent fallback, and the optimum of the remaining convex problem."""
    h = np.diag([2.0, 1.0, 3.0, -5.0])
    c = np.array([1.0, 1.0, 0.0, 1.0])
    t = np.array([0.4, 0.9, 0.2, 0.0])
    lb, ub = np.array([-2.0, -2.0, -2.0, 0.3]), np.array([2.0, 2.0, 2.0, 0.3])
    res = newton_solve(_Quad(h, t), np.zeros(4), c, 1.5, lb, ub)
    assert res.converged and res.descent_steps == 0 and res.x[3] == 0.3
    # the free part: min (x0 - 0.4)^2 + (x1 - 0.9)^2 / 2 s.t. x0 + x1 = 1.2 (KKT system)
    kkt = np.array([[2.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 1.0, 0.0]])
    expect = np.linalg.solve(kkt, [2.0 * 0.4, 0.9, 1.2])[:2]
    assert res.x[:2] == pytest.approx(expect, abs=1e-9) and res.x[2] == pytest.approx(0.2)


def test_mass_box_projection_at_the_edge_of_reach_is_finite():
    """A total inside check_bounds' tolerance but beyond what the box reaches: the projection
    is the box corner, never NaN."""
    lb, ub = np.zeros(3), np.ones(3)
    c = np.ones(3)
    x = project_mass_box(np.array([0.2, 0.5, 0.9]), c, 3.0 + 5e-10, lb, ub)
    assert np.all(np.isfinite(x)) and x == pytest.approx(np.ones(3))
    pinned = project_mass_box(np.zeros(2), np.array([0.5, 2.0]), 2.5, np.ones(2), np.ones(2))
    assert pinned == pytest.approx(np.ones(2))


def test_fast_parameter_qp_solves_ill_conditioned_problems():
    """The active-set path of ParameterQP settles on ill-conditioned problems (n = 40, one
    direction seen 1e-10 as well as the rest) at the optimum of an independent solver."""
    import quadprog
    from legid_ros.core.identification.solvers.qp import ParameterQP
    rng = np.random.default_rng(8)
    n, settled = 40, 0
    for _ in range(40):
        q, _ = np.linalg.qr(rng.normal(size=(n, n)))
        hmat = q @ np.diag(np.logspace(0, -10, n)) @ q.T * 100.0
        hvec = rng.normal(size=n)
        cad, s = np.ones(n), np.ones(n)
        lb, ub = np.full(n, 0.5), np.full(n, 1.5)
        c = (rng.random(n) < 0.3).astype(float)
        total = float(c.sum())
        sol = ParameterQP(cad, s, lb, ub, c, total, reg=1e-6).solve(hmat, hvec, 1.0,
                                                                    fast=True)
        settled += sol.status == 'solved (active set)'
        g = 2 * (hmat + 1e-6 * np.eye(n))
        a = 2 * (hvec - hmat @ cad)
        cm = np.vstack([c, np.eye(n), -np.eye(n)]).T
        ref = quadprog.solve_qp(g, a, cm, np.concatenate([[0.0], lb - cad, cad - ub]), 1)[0]
        assert sol.x == pytest.approx(cad + ref, abs=1e-5)
    assert settled == 40


def test_mass_box_projection_matches_an_independent_qp():
    """The exact breakpoint projection equals quadprog's on random boxes and planes
    (some bounds infinite, some plane coefficients zero)."""
    import quadprog
    rng = np.random.default_rng(12)
    for _ in range(300):
        n = int(rng.integers(1, 10))
        c = np.where(rng.random(n) < 0.7, 3 * rng.random(n), 0.0)
        c[0] = max(c[0], 0.5)
        lb = rng.normal(size=n) - 1.0
        ub = lb + 3 * rng.random(n)
        if rng.random() < 0.3:
            ub[rng.integers(n)] = np.inf
        fin_lb, fin_ub = np.where(np.isfinite(lb), lb, -1e4), np.where(np.isfinite(ub), ub, 1e4)
        total = float(c @ fin_lb + rng.random() * (c @ np.minimum(fin_ub, fin_lb + 3)
                                                    - c @ fin_lb))
        y = 2 * rng.normal(size=n)
        x = project_mass_box(y, c, total, lb, ub)
        cm = np.vstack([c, np.eye(n), -np.eye(n)]).T
        ref = quadprog.solve_qp(np.eye(n), y, cm, np.concatenate([[total], fin_lb, -fin_ub]),
                                1)[0]
        assert x == pytest.approx(ref, abs=1e-7)


class _CountingQuartic:
    """``0.5 d^T H d + 0.25 k sum d^4``: non-quadratic; counts the Hessians it computes."""

    def __init__(self, hess, target, k, gradient_only):
        self.h, self.t, self.k = hess, target, k
        self.gradient_only = gradient_only
        self.hessians = 0

    def __call__(self, x, derivatives=True):
        d = x - self.t

        class V:
            pass
        v = V()
        v.e = float(0.5 * d @ self.h @ d + 0.25 * self.k * np.sum(d ** 4))
        v.grad = self.h @ d + self.k * d ** 3 if derivatives else None
        v.hess = None
        if derivatives and not (derivatives == 'gradient' and self.gradient_only):
            v.hess = self.h + np.diag(3 * self.k * d ** 2)
            self.hessians += 1
        return v


def test_gradient_only_test_after_a_newton_step_keeps_the_optimum():
    """An objective that skips the Hessian after a Newton step reaches the same KKT point as
    one that always computes it, with fewer Hessians (the test uses the step's curvature)."""
    rng = np.random.default_rng(3)
    n = 6
    a = rng.normal(size=(n, n))
    h = a @ a.T + np.eye(n)
    t = rng.normal(size=n)
    c = np.abs(rng.normal(size=n)) + 0.1
    lb, ub = np.full(n, -5.0), np.full(n, 5.0)
    full = _CountingQuartic(h, t, 0.3, gradient_only=False)
    lean = _CountingQuartic(h, t, 0.3, gradient_only=True)
    r_full = newton_solve(full, np.zeros(n), c, 1.0, lb, ub, ftol=1e-14)
    r_lean = newton_solve(lean, np.zeros(n), c, 1.0, lb, ub, ftol=1e-14)
    assert r_full.converged and r_lean.converged
    assert r_lean.x == pytest.approx(r_full.x, abs=1e-6)
    assert float(c @ r_lean.x) == pytest.approx(1.0, abs=1e-12)
    assert lean.hessians < full.hessians


def test_warm_start_on_the_plane_is_not_moved():
    """A feasible start is used as given: a converged start takes no step and is returned."""
    h = np.diag([2.0, 3.0, 4.0])
    c = np.ones(3)
    first = newton_solve(_Quad(h, np.array([0.3, 0.1, -0.2])), np.zeros(3), c, 1.5,
                         np.full(3, -2.0), np.full(3, 2.0), ftol=1e-14)
    again = newton_solve(_Quad(h, np.array([0.3, 0.1, -0.2])), first.x, c, 1.5,
                         np.full(3, -2.0), np.full(3, 2.0), ftol=1e-14)
    assert again.iterations == 0 and again.converged
    assert np.array_equal(again.x, first.x)


def test_mass_box_projection_inside_the_box_is_the_plane_projection():
    """When the plane's nearest point is inside the box, that point is the projection (the
    quick path) and equals an independent QP's."""
    import quadprog
    rng = np.random.default_rng(5)
    for _ in range(100):
        n = int(rng.integers(2, 12))
        c = np.abs(rng.normal(size=n)) + 0.1
        lb, ub = np.full(n, -10.0), np.full(n, 10.0)
        y = rng.normal(size=n)
        total = float(c @ y + rng.normal())
        x = project_mass_box(y, c, total, lb, ub)
        cm = np.vstack([c, np.eye(n), -np.eye(n)]).T
        ref = quadprog.solve_qp(np.eye(n), y, cm, np.concatenate([[total], lb, -ub]), 1)[0]
        assert x == pytest.approx(ref, abs=1e-9)


def test_box_step_equals_an_independent_qp_inside_and_at_the_box():
    """The model step equals quadprog's, whether its plane minimiser is inside the box (the
    one-solve path) or cut by it (the active-set iteration)."""
    import quadprog
    from legid_ros.core.identification.solvers.box_qp import augment_equality, box_qp_step
    rng = np.random.default_rng(8)
    for width in (100.0, 0.05):
        for _ in range(50):
            n = int(rng.integers(2, 10))
            a = rng.normal(size=(n, n))
            b = a @ a.T + 0.1 * np.eye(n)
            g = rng.normal(size=n)
            c = np.abs(rng.normal(size=n)) + 0.1
            lo, hi = -width * rng.random(n) - 1e-3, width * rng.random(n) + 1e-3
            step = box_qp_step(g, augment_equality(b, c), c, lo, hi)
            cm = np.vstack([c, np.eye(n), -np.eye(n)]).T
            ref = quadprog.solve_qp(b, -g, cm, np.concatenate([[0.0], lo, -hi]), 1)[0]
            assert step.d == pytest.approx(ref, abs=1e-7)
            assert step.decrease == pytest.approx(-(g @ ref + 0.5 * ref @ b @ ref), abs=1e-9)
