"""The grouped parameter set: map, derivatives, physical consistency, recovery of what the ZMP
reduced set of Wu & Gao 2021 cannot represent, and the methods that run on it."""

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.identification.api import identify
from legid_ros.core.identification.parameters.grouped import (GroupedSet, jacobian_curvature,
                                                              link_side)
from legid_ros.core.identification.prepare import PrepareOptions, prepare
from legid_ros.core.identification.solvers.zmp_newton import (identify_normal_newton,
                                                              make_param, param_bounds)
from legid_ros.core.inertial import PARAMS_PER_LINK, check_consistency, link_index, unpack
from legid_ros.core.synthetic import FrictionModel, NoiseModel, SyntheticConfig, simulate_biped
from legid_ros.core.synthetic.truth import LinkChange

VARIANTS = [('grouped', False), ('grouped_sides', False), ('grouped', True),
            ('grouped_sides', True)]
# 3-D COM shifts and a left/right asymmetry, CAD inertia about every COM: inside the
# per-side grouped set, outside the ZMP reduced set (axial COMs, legs alike)
ASYMMETRIC_TRUTH = {'trunk': LinkChange(1.05, (0.015, -0.010, 0.012)),
                    'l_thigh': LinkChange(0.92, (0.008, 0.010, -0.015)),
                    'r_thigh': LinkChange(1.04, (-0.006, -0.004, 0.010)),
                    'l_shank': LinkChange(1.15, (0.012, 0.012, -0.008)),
                    'r_shank': LinkChange(0.95, (-0.010, -0.006, 0.006))}


def _random_x(param, rng, spread=0.5):
    return param.cad() + spread * rng.standard_normal(param.size) * param.scales()


@pytest.mark.parametrize('param_set, inertia', VARIANTS)
def test_map_round_trip(biped, param_set, inertia):
    """from_standard(to_standard(x)) == x, and CAD maps to the CAD standard vector."""
    param = make_param(biped, param_set, identify_inertia=inertia)
    x = _random_x(param, np.random.default_rng(1), 0.3)
    assert np.allclose(param.from_standard(param.to_standard(x)), x, atol=1e-12)
    assert np.allclose(param.to_standard(param.cad()), param.pi_cad, atol=1e-12)
    assert param.mass_row() @ param.cad() + param.fixed_mass == pytest.approx(biped.total_mass)


@pytest.mark.parametrize('param_set, inertia', VARIANTS)
def test_jacobian_and_curvature_match_finite_differences(biped, param_set, inertia):
    """The analytic Jacobian and curvature agree with central differences of the map."""
    param = make_param(biped, param_set, identify_inertia=inertia)
    rng = np.random.default_rng(2)
    x = _random_x(param, rng)
    jac = param.jacobian(x)
    num = np.zeros_like(jac)
    for k in range(param.size):
        e = np.zeros(param.size)
        e[k] = 1e-6
        num[:, k] = (param.to_standard(x + e) - param.to_standard(x - e)) / 2e-6
    assert np.allclose(jac, num, atol=1e-7 * max(1.0, np.abs(jac).max()))
    g = rng.standard_normal(param.pi_cad.size)
    ref = jacobian_curvature(param.jacobian, x, g)
    assert np.allclose(param.curvature(x, g), ref, atol=1e-8 * max(1.0, np.abs(ref).max()))


def test_right_link_com_is_mirrored(biped):
    """Mirrored set: the right link's lateral COM is minus the left's, the others equal."""
    param = GroupedSet(biped)
    x = param.cad()
    i = param.names.index('cy_thigh')
    x[i - 2:i + 2] = [3.5, 0.01, 0.02, -0.15]
    pi = param.to_standard(x)
    coms = {}
    for link in ('l_thigh', 'r_thigh'):
        m, h, _ = unpack(pi[PARAMS_PER_LINK * link_index(biped.model, link):][:PARAMS_PER_LINK])
        coms[link] = h / m
    assert np.allclose(coms['l_thigh'], [0.01, 0.02, -0.15])
    assert np.allclose(coms['r_thigh'], [0.01, -0.02, -0.15])


def test_sides_from_link_names():
    """Sides come from l_/left_ prefixes and _l/_right suffixes; none for the trunk."""
    assert [link_side(n) for n in ('l_thigh', 'Left_foot', 'shank_r', 'right_hip', 'trunk',
                                   'leg')] == ['left', 'left', 'right', 'right', None, None]


def test_every_bounded_solution_is_consistent(biped):
    """Masses within the default bounds and CAD inertia: every link is physically consistent."""
    rng = np.random.default_rng(3)
    for param_set in ('grouped', 'grouped_sides'):
        param = make_param(biped, param_set)
        lb, ub = param_bounds(param)
        assert np.all(lb[param.mass_row() > 0] > 0)
        for _ in range(50):
            x = lb + rng.random(param.size) * (ub - lb)
            assert check_consistency(param.to_standard(x), biped.body_names).ok
    with pytest.raises(BadInputError):
        GroupedSet(biped).bounds(mass_lo=0.0)


def test_mass_names_per_side(biped):
    """Known-value names: m_foot for the mirrored set, m_left_foot / m_right_foot per side."""
    assert GroupedSet(biped).mass_name('r_foot') == 'm_foot'
    sides = GroupedSet(biped, per_side=True)
    assert (sides.mass_name('l_foot'), sides.mass_name('r_foot')) == ('m_left_foot',
                                                                     'm_right_foot')
    assert 'm_trunk' in sides.names and 'cz_left_shank' in sides.names


@pytest.fixture(scope='module')
def exact_asymmetric(biped):
    """Noise-free synthetic run (exact signals) of a truth with 3-D COM shifts and asymmetric
    legs, its samples and ZMP wrench regressors."""
    from legid_ros.core.identification.rows.linear import regressors_for

    rec = simulate_biped(SyntheticConfig(duration_s=40.0, rate_hz=20.0, seed=5,
                                         noise=NoiseModel.none(), friction=FrictionModel.none(),
                                         truth=ASYMMETRIC_TRUTH))
    s = prepare(rec, biped, PrepareOptions(diff='exact', base='true', zmp_source='true',
                                           cutoff_hz=None))
    return rec, s, regressors_for(s, biped, []).wrench


def test_recovers_3d_com_shift_and_asymmetry(biped, exact_asymmetric):
    """Per-side grouped set fits exact ZMP data of an asymmetric truth the reduced set cannot:
    ZMP residual ~0 against > 1 mm, and every 3-D COM and left/right mass recovered."""
    rec, s, _ = exact_asymmetric
    common = dict(samples=s, check=False, total_mass=rec.meta['total_mass_true_kg'],
                  eps=1e-10, max_iter=200, reg=0.0)
    red = identify(rec, biped, 'zmp_newton', param_set='reduced', fallback='gauss_newton',
                   **common)
    grp = identify(rec, biped, 'zmp_newton', param_set='grouped_sides', **common)
    assert red.residual_rms > 1e-3
    assert grp.residual_rms < 1e-8 and grp.info['converged']
    sides = GroupedSet(biped, per_side=True)
    est, tru = sides.from_standard(grp.pi), sides.from_standard(rec.pi_true)
    masses = sides.mass_row() > 0
    assert np.allclose(est[masses], tru[masses], rtol=1e-4)
    assert np.allclose(est[~masses], tru[~masses], atol=1e-5)
    i, j = sides.names.index('m_left_thigh'), sides.names.index('m_right_thigh')
    assert est[j] - est[i] > 0.3  # the asymmetry is really there
    assert abs(est[sides.names.index('cy_trunk')] + 0.010) < 1e-5  # lateral trunk shift


def test_grouped_sides_holds_each_weighed_foot(biped, run_a, samples_a):
    """--foot-from-ft on the per-side set holds each weighed foot's own mass."""
    res = identify(run_a, biped, 'zmp_newton', samples=samples_a, param_set='grouped_sides',
                   foot_from_ft=True, reg=1e-7)
    weighed = res.info['foot_from_ft']
    names = {'left': 'm_left_foot', 'right': 'm_right_foot'}
    assert set(res.info['known']) == {names[f] for f in weighed}
    sides = GroupedSet(biped, per_side=True)
    x = sides.from_standard(res.pi)
    for foot, f in weighed.items():
        assert x[sides.names.index(names[foot])] == pytest.approx(f['mass_kg'], rel=1e-9)
    assert res.consistency.ok and res.info['converged']


@pytest.mark.parametrize('method', ['zmp_qp', 'sdp', 'torque_ls'])
def test_linear_row_methods_run_on_grouped(biped, run_a, samples_a, method):
    """Linear-row methods on the grouped set: Newton on their normal equations, consistent."""
    res = identify(run_a, biped, method, samples=samples_a, param_set='grouped')
    assert res.info['param_set'] == 'grouped' and res.info['converged']
    assert res.consistency.ok
    assert res.uncertainty is not None and 'cx_trunk' in res.uncertainty.names


def test_normal_newton_entry_point_recovers_grouped_truth(biped):
    """identify_normal_newton(param_set='grouped') on exact, fully exciting linear rows returns
    the grouped truth (the online estimator's entry point)."""
    param = GroupedSet(biped)
    rng = np.random.default_rng(7)
    x_true = param.cad() + 0.4 * rng.standard_normal(param.size) * param.scales()
    pi_true = param.to_standard(x_true)
    a = rng.standard_normal((400, pi_true.size))
    b = a @ pi_true
    res = identify_normal_newton(a.T @ a, a.T @ b, float(b @ b), 400, biped,
                                 param.mass_row() @ x_true + param.fixed_mass, 'online',
                                 param_set='grouped', reg=0.0, eps=1e-12)
    assert res.info['converged']
    assert np.allclose(res.x, x_true, atol=1e-6)


@pytest.mark.parametrize('name, sides', [('talos', 2), ('solo12', 4)])
def test_groups_without_side_names_map_by_cad_mirrors(request, name, sides):
    """Robots whose link names carry no side token (leg_left_1_link, FL_UPPER_LEG): per side,
    every link is its own unit; mirrored, one unit per group whose CAD-chosen mirrors carry
    the first link's CAD COM onto every other link's (CAD legs are mirror images, 1 mm)."""
    from legid_ros.core.inertial import get_parameters
    robot = request.getfixturevalue(name)
    per = GroupedSet(robot, per_side=True)
    grouped_links = [link for g in robot.link_groups.values() for link in g.links]
    assert per.n_groups == len(grouped_links)
    sym = GroupedSet(robot)
    assert sym.n_groups == len(robot.link_groups)
    cad = get_parameters(robot.model)
    back = sym.to_standard(sym.from_standard(cad))
    for i in range(len(robot.body_names)):
        c0 = cad[10 * i + 1:10 * i + 4] / cad[10 * i]
        c1 = back[10 * i + 1:10 * i + 4] / back[10 * i]
        assert np.linalg.norm(c1 - c0) < 1e-3
    assert max(len(g.links) for g in robot.link_groups.values()) == sides
