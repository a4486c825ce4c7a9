"""Tests of the model ZMP of Wu & Gao 2021 (legid_ros.core.identification.rows.zmp): forms,
derivatives, objective."""

import numpy as np
import pinocchio as pin
import pytest

from legid_ros.core.identification.parameters.sets import (ReducedSet, StandardSet,
                                                           point_mass_parameters)
from legid_ros.core.contact.base_state import support_base_state
from legid_ros.core.identification.rows.regressors import compute_regressors
from legid_ros.core.identification.rows.zmp import (ZmpObjective, model_zmp, model_zmp_from_state,
                                                    zmp_derivatives)
from legid_ros.core.inertial import get_parameters
from legid_ros.core.robot import load_robot


@pytest.fixture(scope='module')
def robot():
    """Floating-base biped."""
    return load_robot('biped')


def _motion(t, seed=0):
    rng = np.random.default_rng(seed)
    amp, w = rng.normal(0, 0.25, 12), rng.uniform(1, 3, 12)
    return (amp * np.sin(np.outer(t, w)), amp * w * np.cos(np.outer(t, w)),
            -amp * w ** 2 * np.sin(np.outer(t, w)))


@pytest.fixture(scope='module')
def wrench(robot):
    """World wrench regressors of 30 samples of random smooth motion."""
    q, qd, qdd = _motion(np.linspace(0, 3, 30))
    st = support_base_state(robot, q, qd, qdd, 'right')
    return compute_regressors(robot, st['q'], st['v'], st['a']).wrench, st


def test_model_zmp_matches_rnea_path(robot, wrench):
    """The regressor ZMP equals the ZMP of pinocchio's RNEA base wrench."""
    w, st = wrench
    pi = get_parameters(robot.model)
    zmp, fz = model_zmp(w, pi)
    for k in (0, 11, 29):
        assert zmp[k] == pytest.approx(model_zmp_from_state(robot, st['q'][k], st['v'][k],
                                                            st['a'][k]), abs=1e-12)
    assert np.all(fz > 0)


def test_point_mass_form_matches_the_papers_equations(robot):
    """The point-mass form equals Wu & Gao's eqs. (5)-(8) with COM accelerations by FD."""
    tc, h = 1.3, 1e-4
    ts = np.array([tc - h, tc, tc + h])
    q, qd, qdd = _motion(ts, seed=3)
    st = support_base_state(robot, q, qd, qdd, 'right')
    model, data = robot.model, robot.new_data()
    pi = get_parameters(model)
    coms = []
    for k in range(3):
        pin.forwardKinematics(model, data, st['q'][k])
        coms.append([data.oMi[j].act(model.inertias[j].lever) for j in range(1, model.njoints)])
    coms = np.array(coms)
    acc = (coms[2] - 2 * coms[1] + coms[0]) / h ** 2
    m = np.array([model.inertias[j].mass for j in range(1, model.njoints)])
    g = np.array([0, 0, -9.81])
    big_m = m.sum()
    pc = m @ coms[1] / big_m
    f = (m[:, None] * (g - acc)).sum(axis=0)
    mom = -np.sum(m[:, None] * np.cross(coms[1] - pc, acc), axis=0)
    x = pc[0] - (f[0] * pc[2] + mom[1]) / f[2]
    y = pc[1] - (f[1] * pc[2] - mom[0]) / f[2]
    w = compute_regressors(robot, st['q'][1:2], st['v'][1:2], st['a'][1:2]).wrench
    zmp_pm, _ = model_zmp(w, pi, form='point_mass')
    assert zmp_pm[0] == pytest.approx([x, y], abs=2e-6)
    zmp_rigid, _ = model_zmp(w, pi)
    assert not np.allclose(zmp_rigid, zmp_pm, atol=1e-7)
    assert model_zmp(w, point_mass_parameters(pi))[0] == pytest.approx(zmp_pm)


def test_zmp_gradient_and_hessian_match_finite_differences(robot, wrench):
    """Per-sample ZMP gradient and Hessian in pi agree with central differences."""
    w = wrench[0][:4]
    pi = get_parameters(robot.model) * 1.05
    zmp, grad, hess = zmp_derivatives(w, pi)
    rng = np.random.default_rng(0)
    d = rng.normal(size=pi.size) * StandardSet(robot).scales() * 0.01
    eps = 1e-3
    zp, gp = zmp_derivatives(w, pi + eps * d, hessian=False)
    zm, gm = zmp_derivatives(w, pi - eps * d, hessian=False)
    assert np.einsum('nip,p->ni', grad, d) == pytest.approx((zp - zm) / (2 * eps), rel=1e-6,
                                                             abs=1e-12)
    assert np.einsum('nipq,q->nip', hess, d) == pytest.approx((gp - gm) / (2 * eps), rel=1e-5,
                                                               abs=1e-10)


@pytest.mark.parametrize('param_set', ['reduced', 'standard'])
def test_objective_derivatives_match_finite_differences(robot, wrench, param_set):
    """Gradient and full Newton Hessian of eq. (9) (+ prior) agree with central differences."""
    w = wrench[0]
    param = ReducedSet(robot) if param_set == 'reduced' else StandardSet(robot)
    x_true = param.cad() * 1.03
    zmp_meas = model_zmp(w, param.to_standard(x_true))[0] + 0.002
    obj = ZmpObjective(w, zmp_meas, param, reg=1e-7)
    x = param.cad()
    val = obj(x)
    s = param.scales()
    rng = np.random.default_rng(1)
    for _ in range(3):
        d = rng.normal(size=x.size) * s
        eps = 1e-4
        ep, em = obj(x + eps * d, False).e, obj(x - eps * d, False).e
        assert val.grad @ d == pytest.approx((ep - em) / (2 * eps), rel=1e-5)
        gp, gm = obj(x + eps * d).grad, obj(x - eps * d).grad
        assert val.hess @ d == pytest.approx((gp - gm) / (2 * eps), rel=1e-4,
                                             abs=1e-6 * np.abs(val.hess @ d).max())
