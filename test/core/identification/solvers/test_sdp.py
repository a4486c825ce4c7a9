"""Tests of legid_ros.core.identification.solvers.sdp: the one pseudo-inertia LMI and solve."""

import cvxpy as cp
import numpy as np
import pytest

from legid_ros.core.errors import InfeasibleProblemError
from legid_ros.core.identification.fixed_base import leg_context
from legid_ros.core.identification.solvers.sdp import (build_consistent_ls, pseudo_inertia_lmi,
                                                       solve_consistent_ls)
from legid_ros.core.inertial import pack, pseudo_inertia
from legid_ros.core.robot import load_robot


def test_lmi_matrix_is_the_numeric_pseudo_inertia():
    """The cvxpy LMI builds the same 4x4 matrix as inertial.pseudo_inertia."""
    p = pack(2.0, np.array([0.1, -0.05, 0.2]), np.diag([0.02, 0.03, 0.04]))
    con = pseudo_inertia_lmi(cp.Constant(p), eps=0.0)
    assert con.args[0].value == pytest.approx(pseudo_inertia(p))


def test_leg_sdp_with_empty_mass_bounds_is_infeasible():
    """Mass bounds that exclude every mass raise InfeasibleProblemError."""
    robot = load_robot('leg3', floating_base=False)
    ctx = leg_context(robot)
    prob = build_consistent_ls(ctx.base.rank, ctx.base, ctx.theta_cad, ctx.n_links,
                               mass_tol=-0.5)
    rng = np.random.default_rng(0)
    prob.set_data(rng.normal(size=(100, ctx.base.rank)), rng.normal(size=100))
    with pytest.raises(InfeasibleProblemError):
        solve_consistent_ls(prob)


class _FakeProblem:
    """Stands for a cvxpy problem whose solvers end with given statuses."""

    def __init__(self, statuses):
        self.statuses = dict(statuses)
        self.var = cp.Variable(2)
        self.status = None
        self.solver_stats = None

    def solve(self, solver):
        self.status = self.statuses[solver]
        self.var.value = np.array([1.0, 2.0]) if solver == 'CLARABEL' else np.array([3.0, 4.0])

    def variables(self):
        return [self.var]


def test_inaccurate_sdp_is_not_a_solution():
    """'optimal_inaccurate' is never accepted: the next solver is tried, and if none is optimal
    a SolverNotConvergedError carries the inaccurate iterate; 'optimal' from the fallback
    solver is accepted."""
    from legid_ros.core.errors import SolverNotConvergedError
    from legid_ros.core.identification.solvers.sdp import solve_with_fallback
    prob = _FakeProblem({'CLARABEL': 'optimal_inaccurate', 'SCS': 'optimal'})
    assert solve_with_fallback(prob, ('CLARABEL', 'SCS'), 'test SDP', last=prob.var) == \
        ('SCS', 'SCS: optimal')
    prob = _FakeProblem({'CLARABEL': 'optimal_inaccurate', 'SCS': 'optimal_inaccurate'})
    with pytest.raises(SolverNotConvergedError, match='short of their tolerance') as err:
        solve_with_fallback(prob, ('CLARABEL', 'SCS'), 'test SDP', last=prob.var)
    assert err.value.last_state == pytest.approx([1.0, 2.0])
    assert 'CLARABEL: optimal_inaccurate; SCS: optimal_inaccurate' in err.value.status
