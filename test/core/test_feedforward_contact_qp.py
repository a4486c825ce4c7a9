"""Tests of legid_ros.core.feedforward.contact_qp: contact wrench distribution over the feet."""

import numpy as np
import pinocchio as pin
import pytest

from legid_ros.core.errors import BadInputError, InfeasibleProblemError
from legid_ros.core.feedforward import SoleContact, build_contact_qp

MU = 0.6
G = 9.81


def _feet():
    return [SoleContact('left', 0.0625, 0.05, MU), SoleContact('right', 0.0625, 0.05, MU)]


def _base_block(sole_in_base: pin.SE3) -> np.ndarray:
    """Base block of a sole's LOCAL Jacobian: the motion transform sole <- base."""
    return sole_in_base.inverse().action


def _check_constraints(foot: SoleContact, w: np.ndarray, tol: float = 1e-6):
    fz = w[2]
    assert fz >= foot.fz_min_n - tol
    lim = MU / np.sqrt(2)
    assert abs(w[0]) <= lim * fz + tol and abs(w[1]) <= lim * fz + tol
    assert abs(w[3]) <= (foot.half_width_m - foot.cop_margin_m) * fz + tol
    assert abs(w[4]) <= (foot.half_length_m - foot.cop_margin_m) * fz + tol


def test_two_feet_carry_the_base_wrench_inside_cones_and_soles():
    """With two feet, the wrenches meet the base rows exactly and every cone and CoP bound."""
    left = pin.SE3(pin.rpy.rpyToMatrix(0.02, -0.03, 0.1), np.array([0.01, 0.08, -0.5]))
    right = pin.SE3(pin.rpy.rpyToMatrix(-0.01, 0.02, -0.05), np.array([-0.02, -0.07, -0.5]))
    jb = [_base_block(left), _base_block(right)]
    need = np.array([4.0, -3.0, 33.0 * G, 2.0, -1.5, 0.3])
    sol = build_contact_qp(_feet()).solve(jb, need)
    total = sum(j.T @ w for j, w in zip(jb, sol.wrenches))
    np.testing.assert_allclose(total, need, atol=1e-3)
    for foot, w in zip(_feet(), sol.wrenches):
        _check_constraints(foot, w, tol=1e-3)
    # the base's weight is shared: neither foot carries (almost) all of it
    assert min(sol.wrenches[:, 2]) > 0.25 * need[2]


def test_symmetric_stance_shares_the_weight_equally():
    """Feet placed symmetrically under the base each carry half of a centred weight."""
    jb = [_base_block(pin.SE3(np.eye(3), np.array([0.0, y, -0.5]))) for y in (0.07, -0.07)]
    need = np.array([0.0, 0.0, 300.0, 0.0, 0.0, 0.0])
    sol = build_contact_qp(_feet()).solve(jb, need)
    np.testing.assert_allclose(sol.wrenches[:, 2], [150.0, 150.0], rtol=1e-4)


def test_one_foot_wrench_is_the_unique_solution_of_the_base_rows():
    """With one stance foot the wrench solves J_b^T w = need (nothing to distribute)."""
    sole = pin.SE3(pin.rpy.rpyToMatrix(0.05, -0.04, 0.2), np.array([0.01, -0.02, -0.5]))
    jb = _base_block(sole)
    need = np.array([3.0, -2.0, 320.0, 1.0, 2.0, 0.1])
    sol = build_contact_qp(_feet()[1:]).solve([jb], need)
    np.testing.assert_allclose(sol.wrenches[0], np.linalg.solve(jb.T, need), atol=1e-9)
    assert sol.base_residual < 1e-9


def test_centre_of_pressure_outside_the_sole_is_infeasible():
    """A base wrench whose CoP lies beyond the sole edge raises InfeasibleProblemError."""
    jb = _base_block(pin.SE3(np.eye(3), np.array([0.0, 0.0, -0.5])))
    need = np.array([0.0, 0.0, 300.0, 0.0, 0.1 * 300.0, 0.0])  # CoP 10 cm behind the centre
    with pytest.raises(InfeasibleProblemError):
        build_contact_qp(_feet()[1:]).solve([jb], need)
    with pytest.raises(InfeasibleProblemError):  # two feet, a push beyond the friction cones
        build_contact_qp(_feet()).solve(
            [_base_block(pin.SE3(np.eye(3), np.array([0.0, y, -0.5]))) for y in (0.07, -0.07)],
            np.array([300.0, 0.0, 300.0, 0.0, 0.0, 0.0]))


def test_bad_problem_set_up_is_refused():
    """No feet, a non-positive weight or Jacobians of the wrong shape raise BadInputError."""
    with pytest.raises(BadInputError):
        build_contact_qp([])
    with pytest.raises(BadInputError):
        build_contact_qp(_feet(), force_weight=0.0)
    with pytest.raises(BadInputError):
        build_contact_qp(_feet()).solve([np.eye(6)], np.zeros(6))


def test_active_bounds_are_left_to_osqp():
    """A weight far over one foot activates bounds: OSQP solves it and every row holds."""
    jb = [_base_block(pin.SE3(np.eye(3), np.array([0.0, y, -0.5]))) for y in (0.07, -0.07)]
    need = np.array([0.0, 0.0, 300.0, 300.0 * 0.1, 0.0, 0.0])  # COM 3 cm beyond the left foot
    sol = build_contact_qp(_feet()).solve(jb, need)
    assert sol.status == 'solved' and sol.iterations > 0
    np.testing.assert_allclose(sum(j.T @ w for j, w in zip(jb, sol.wrenches)), need, atol=1e-3)
    for foot, w in zip(_feet(), sol.wrenches):
        _check_constraints(foot, w, tol=1e-3)
    assert sol.wrenches[1, 2] < 0.15 * need[2]  # the left foot carries (almost) all
