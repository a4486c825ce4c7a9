"""Extended Jacobian method: closed form, differential form, checks (legid_ros.core.ik.ejm)."""

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError, UnreachableTargetError
from legid_ros.core.ik.ejm import (det_extended, extended_jacobian, solve_closed_form,
                                   solve_differential, solve_point, two_link)
from legid_ros.core.ik.leg import LegKinematics, from_leg_plane, planar_fk


@pytest.fixture(scope='module')
def lk():
    return LegKinematics('rf')


def _random_q(rng, geo, n):
    return rng.uniform(geo.lower + 0.06, geo.upper - 0.06, size=(n, 4))


def _reachable(geo, q):
    """Keep configurations whose foot is below the hip (the leg-plane map needs z < 0)."""
    p = from_leg_plane(q[:, 0], planar_fk(q[:, 1:], geo))
    return q[p[:, 2] < -0.05], p[p[:, 2] < -0.05]


@pytest.mark.parametrize('task', ['landing', 'hip'])
def test_closed_form_recovers_joints(lk, task):
    """Closed-form IK of FK(q), psi(q) returns q (1e-9 rad); pinocchio foot error <= 1e-12 m."""
    geo = lk.geometry
    q, p = _reachable(geo, _random_q(np.random.default_rng(5), geo, 400))
    psi = q[:, 1:].sum(-1) if task == 'landing' else q[:, 1]
    sol = solve_closed_form(geo, p, task, psi, leg='rf')
    assert np.max(np.abs(sol.q - q)) < 1e-9
    for k in range(0, len(q), 20):
        assert np.linalg.norm(lk.fk(sol.q[k]) - p[k]) < 1e-12


def test_det_closed_form_matches_numeric(lk):
    """det Je is l1 l2 sin th3 (landing) and l2 l3 sin th4 (hip), equal to numpy's det."""
    geo = lk.geometry
    th = _random_q(np.random.default_rng(6), geo, 100)[:, 1:]
    for task in ('landing', 'hip'):
        num = np.linalg.det(extended_jacobian(th, geo, task))
        assert np.max(np.abs(num - det_extended(th, geo, task))) < 1e-14
    assert det_extended(th, geo, 'landing') == pytest.approx(0.35 * 0.35 * np.sin(th[:, 1]))


def test_unreachable_target_names_leg_time_distance(lk):
    """A too distant target raises UnreachableTargetError with leg, time and exact distance."""
    geo = lk.geometry
    targets = np.array([[0.0, 0.0, -0.6], [0.0, 0.0, -1.5]])
    with pytest.raises(UnreachableTargetError) as info:
        solve_closed_form(geo, targets, 'landing', 0.0, times=[0.1, 0.2], leg='rf')
    err = info.value
    r_max = np.sqrt(0.35 ** 2 * 2 + 2 * 0.35 * 0.35 * np.cos(0.05))
    assert err.leg == 'rf' and err.time == pytest.approx(0.2)
    assert err.distance == pytest.approx(1.3 - r_max, abs=1e-12)
    assert 'rf' in str(err) and '0.2000' in str(err)


def test_joint_range_violation_raises(lk):
    """A reachable point that needs an ankle below its range raises and names the ankle."""
    geo = lk.geometry
    q = np.array([[0.0, -0.6, 1.2, 0.6]])
    p = from_leg_plane(q[:, 0], planar_fk(q[:, 1:], geo))
    with pytest.raises(UnreachableTargetError, match='ankle'):
        solve_closed_form(geo, p, 'landing', q[0, 1:].sum() - 0.7, leg='rf')


def test_nan_target_rejected(lk):
    """A NaN target raises BadInputError instead of returning NaN joints."""
    with pytest.raises(BadInputError, match='non-finite'):
        solve_closed_form(lk.geometry, np.array([[np.nan, 0.0, -0.6]]), 'landing', 0.5)


def test_two_link_distance_inside_is_zero():
    """two_link reports zero distance inside the annulus and the gap outside it."""
    _, _, d = two_link(np.array([[0.0, -0.5], [0.0, -0.8], [0.0, -0.01]]), 0.35, 0.35, 0.05, 3.09)
    r_max = np.sqrt(2 * 0.35 ** 2 + 2 * 0.35 ** 2 * np.cos(0.05))
    r_min = np.sqrt(2 * 0.35 ** 2 + 2 * 0.35 ** 2 * np.cos(3.09))
    assert d == pytest.approx([0.0, 0.8 - r_max, r_min - 0.01], abs=1e-12)


def test_differential_form_tracks_closed_form(lk):
    """Differential EJM (kp = 1/dt) stays within 1e-3 rad of the closed form, error not growing."""
    geo = lk.geometry
    t = np.arange(0, 0.8, 1e-3)
    w = 2 * np.pi / 0.4
    xz = np.stack([0.05 * np.sin(w * t) - 0.1, -0.7 + 0.03 * np.cos(w * t)], -1)
    xzd = np.gradient(xz, t, axis=0)
    psi = 0.6 + 0.1 * np.sin(2 * np.pi * t / 0.4)
    psid = np.gradient(psi, t)
    exact = solve_closed_form(geo, xz, 'landing', psi).q[:, 1:]
    res = solve_differential(geo, t, xz, xzd, 'landing', psi, psid, exact[0], kp=1e3)
    err = np.max(np.abs(res.th - exact), axis=-1)
    assert np.max(err) < 1e-3
    assert np.max(err[400:]) <= np.max(err[:400]) + 1e-9
    assert np.all(np.abs(res.det_je) > 0.01)


def test_differential_form_vectorised_over_legs(lk):
    """Two trajectories integrated side by side equal the same trajectories integrated alone."""
    geo = lk.geometry
    t = np.arange(0, 0.1, 1e-3)
    xz = np.stack([np.stack([-0.1 + 0.2 * t, -0.7 + 0.0 * t], -1),
                   np.stack([-0.05 - 0.1 * t, -0.65 + 0.1 * t], -1)], axis=1)  # (N, 2, 2)
    xzd = np.gradient(xz, t, axis=0)
    psi = np.stack([0.6 + 0.0 * t, 0.7 + 0.5 * t], axis=1)
    psid = np.gradient(psi, t, axis=0)
    th0 = np.stack([solve_closed_form(geo, xz[0, j], 'landing', psi[0, j]).q[0, 1:]
                    for j in range(2)])
    both = solve_differential(geo, t, xz, xzd, 'landing', psi, psid, th0, kp=500.0)
    for j in range(2):
        one = solve_differential(geo, t, xz[:, j], xzd[:, j], 'landing', psi[:, j], psid[:, j],
                                 th0[j], kp=500.0)
        assert np.max(np.abs(both.th[:, j] - one.th)) < 1e-12


@pytest.mark.parametrize('task', ['landing', 'hip'])
def test_solve_point_equals_vectorised(lk, task):
    """The plain-float single-target solver gives the vectorised result and the same errors."""
    geo = lk.geometry
    q, p = _reachable(geo, _random_q(np.random.default_rng(8), geo, 100))
    psi = q[:, 1:].sum(-1) if task == 'landing' else q[:, 1]
    vec = solve_closed_form(geo, p, task, psi).q
    one = np.array([solve_point(geo, p[k], task, psi[k]) for k in range(len(p))])
    assert np.max(np.abs(one - vec)) < 1e-12
    with pytest.raises(UnreachableTargetError) as info:
        solve_point(geo, [0.0, 0.0, -1.5], task, 0.0, time=0.3, leg='lh')
    assert info.value.leg == 'lh' and info.value.time == 0.3 and info.value.distance > 0.5
    with pytest.raises(BadInputError):
        solve_point(geo, [np.nan, 0.0, -0.6], task, 0.0)
