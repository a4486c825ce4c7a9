"""pink reference solver on the same leg and targets (legid_ros.core.ik.pink_ref)."""

import numpy as np
import pytest

from legid_ros.core.errors import SolverError
from legid_ros.core.ik.ejm import solve_closed_form
from legid_ros.core.ik.leg import LegKinematics
from legid_ros.core.ik.pink_ref import PinkLegSolver


@pytest.fixture(scope='module')
def lk():
    return LegKinematics('rf')


def test_pink_converges_to_the_closed_form(lk):
    """pink reaches the closed-form joints (1e-6 rad) with a foot error <= 1e-9 m in few steps."""
    xz = np.array([[-0.10, -0.70], [-0.09, -0.70], [-0.08, -0.69]])
    a3 = np.array([0.60, 0.61, 0.62])
    exact = solve_closed_form(lk.geometry, xz, 'landing', a3).q[:, 1:]
    res = PinkLegSolver(lk).solve(xz, a3, exact[0] + 0.05)
    assert np.max(np.abs(res.th - exact)) < 1e-6
    assert np.max(res.foot_err) <= 1e-9
    assert 1 <= res.iterations[0] <= 10 and np.all(res.iterations[1:] <= 10)


def test_pink_failure_is_a_solver_error(lk):
    """A start outside the joint limits surfaces as SolverError, not a pink exception."""
    with pytest.raises(SolverError):
        PinkLegSolver(lk).solve(np.array([[-0.1, -0.7]]), np.array([0.6]),
                                np.array([-0.6, 1.2, 0.0]))
