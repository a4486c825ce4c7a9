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
