"""End-to-end identification on noisy synthetic biped runs, against ground truth."""

import dataclasses

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError, InfeasibleProblemError, NotIdentifiableError
from legid_ros.core.identification.api import identify
from legid_ros.core.identification.parameters.sets import ReducedSet
from legid_ros.core.identification.prepare import prepare
from legid_ros.core.identification.rows.linear import regressors_for
from legid_ros.core.identification.rows.zmp import model_zmp
from legid_ros.core.metrics import zmp_deviation


@pytest.fixture(scope='module')
def validate(biped, samples_b):
    """Mean ZMP deviation [mm] of a parameter set on the validation run."""
    wrench = regressors_for(samples_b, biped, []).wrench

    def dev(pi):
        return zmp_deviation(model_zmp(wrench, pi)[0], samples_b.zmp).mean_mm
    return dev


def _check_identifiable_masses(biped, pi, pi_true, tol_pct):
    red = ReducedSet(biped)
    x, xt = red.from_standard(pi), red.from_standard(pi_true)
    # trunk, thigh, and shank + foot (the combinations the ZMP separates, see equivalence.py)
    got = [x[4], x[5], x[6] + x[7]]
    want = [xt[4], xt[5], xt[6] + xt[7]]
    err = 100 * np.abs(np.subtract(got, want)) / np.array(want)
    assert np.all(err < tol_pct), err


def test_zmp_newton_reduced_set_recovers_truth(biped, run_a, samples_a, validate):
    """ZMP Newton (Wu & Gao 2021): validation ZMP at the noise floor, identifiable masses."""
    res = identify(run_a, biped, 'zmp_newton', samples=samples_a)
    assert res.info['converged']
    assert validate(res.pi) < 0.6 < validate(run_a.pi_cad) / 5
    _check_identifiable_masses(biped, res.pi, run_a.pi_true, 3.0)
    assert res.total_mass == pytest.approx(run_a.meta['total_mass_true_kg'], rel=0.005)
    assert any('POOR' in line for line in res.identifiable)
    assert res.consistency.ok


def test_zmp_qp_beats_cad_and_plain_ls_is_inconsistent(biped, run_a, samples_a, validate):
    """The linear ZMP QP validates at the noise floor; without LMIs it is not consistent."""
    res = identify(run_a, biped, 'zmp_qp', samples=samples_a)
    assert validate(res.pi) < 0.6
    assert np.sum(res.pi[::10]) == pytest.approx(run_a.meta['total_mass_true_kg'], rel=0.005)
    assert not res.consistency.ok
    sdp = identify(run_a, biped, 'sdp', samples=samples_a)
    assert sdp.consistency.ok
    assert validate(sdp.pi) < 0.6


def test_torque_ls_recovers_friction(biped, run_simple, validate):
    """Torque WLS (support foot as base) fits friction of its own family (0.8, 1.2 N.m)."""
    res = identify(run_simple, biped, 'torque_ls')
    nj = 12
    assert np.median(res.friction[nj:]) == pytest.approx(1.2, rel=0.05)
    assert np.median(res.friction[:nj]) == pytest.approx(0.8, rel=0.2)
    assert validate(res.pi) < 0.8


def test_torque_baseline_suffers_from_realistic_efforts(biped, run_a, samples_a, validate):
    """With Stribeck/asymmetric friction and torque-constant errors the ZMP method wins."""
    zmp = validate(identify(run_a, biped, 'zmp_newton', samples=samples_a).pi)
    torque = validate(identify(run_a, biped, 'torque_ls', samples=samples_a,
                               param_set='reduced').pi)
    assert zmp < 0.6 and torque > 1.5 * zmp


def test_floating_and_primitives_are_consistent(biped, run_simple, validate):
    """Floating-base QP fits; primitive bodies (Tencent patent) are always consistent."""
    samples = prepare(run_simple, biped)
    res = identify(run_simple, biped, 'floating_qp', samples=samples)
    assert np.median(res.friction[12:]) == pytest.approx(1.2, rel=0.05)
    assert validate(res.pi) < 0.8
    prim = identify(run_simple, biped, 'primitives', samples=samples, rows='floating')
    assert prim.consistency.ok
    assert np.all(prim.x >= 1e-3 - 1e-6)  # body masses >= eps up to the QP tolerance [kg]
    assert validate(prim.pi) < 1.0


def test_static_data_is_not_identifiable(biped, run_a):
    """A robot standing still raises NotIdentifiableError naming directions and cond."""
    still = run_a.slice(0, 200)
    still.q[:] = still.q[0]
    with pytest.raises(NotIdentifiableError) as info:
        identify(still, biped, 'zmp_qp')
    assert info.value.condition_number > 1e10
    assert info.value.directions and all(isinstance(d, str) for d in info.value.directions)


def test_infeasible_mass_and_nan_rows(biped, run_a):
    """An impossible total mass is a clear error; NaN samples are dropped and counted."""
    with pytest.raises(InfeasibleProblemError):
        identify(run_a.slice(0, 400), biped, 'zmp_qp', total_mass=500.0)
    bad = run_a.slice(0, 400)
    bad.q[[10, 50, 51], 3] = np.nan
    bad.fsr['right'][70, 0] = np.inf
    res = identify(bad, biped, 'zmp_qp', check=False)
    assert sum(v for k, v in res.dropped.items() if k.startswith('non-finite')) == 4
    assert res.dropped['filter edges (0.5 s each end)'] == pytest.approx(2 * 25, abs=1)  # 50 Hz
    assert np.all(np.isfinite(res.pi))


def test_gauss_newton_fallback_reaches_same_fit_faster(biped, run_a, samples_a, validate):
    """The optional Gauss-Newton fallback ends at the descent fallback's fit in fewer steps."""
    paper = identify(run_a, biped, 'zmp_newton', samples=samples_a)
    gn = identify(run_a, biped, 'zmp_newton', samples=samples_a, fallback='gauss_newton')
    assert gn.iterations < paper.iterations
    assert gn.info['gauss_newton_steps'] + gn.info['newton_steps'] == gn.iterations
    assert validate(gn.pi) == pytest.approx(validate(paper.pi), abs=0.02)
    assert gn.x[4:] == pytest.approx(paper.x[4:], rel=0.01)


def test_sdp_with_scs_matches_clarabel(biped, run_a, samples_a):
    """The SCS path gives a consistent solution close to CLARABEL's."""
    sub = samples_a.take(slice(0, samples_a.n, 3))
    a = identify(run_a, biped, 'sdp', samples=sub)
    b = identify(run_a, biped, 'sdp', samples=sub, solver='SCS')
    assert a.info['solver'] == 'CLARABEL' and b.info['solver'] == 'SCS'
    assert b.consistency.ok
    assert b.residual_rms == pytest.approx(a.residual_rms, rel=0.02)


def test_plain_base_parameter_ls_fits_rows_but_is_not_consistent(biped, run_a, samples_a):
    """Unregularised LS on base parameters fits the torques at least as well, inconsistently."""
    sub = samples_a.take(slice(0, samples_a.n, 2))
    plain = identify(run_a, biped, 'torque_ls', samples=sub, param_set='base')
    reg = identify(run_a, biped, 'torque_ls', samples=sub)
    assert 0 < plain.info['base_rank'] < 130 + 24
    assert plain.residual_rms <= reg.residual_rms * 1.001
    assert not plain.consistency.ok
    assert min(v['mass'] for v in [{'mass': m} for m in plain.pi[::10]]) < 0 or \
        len(plain.consistency.failing) > 3


def test_every_method_reports_core_standard_deviations(biped, run_a, samples_a):
    """IdentResult.uncertainty: finite stds of the identifiable combinations, held std 0; the
    summary leads with what the data determine and prints no 'inf'."""
    res = identify(run_a, biped, 'zmp_newton', samples=samples_a, known={'m_foot': 1.26})
    unc = res.uncertainty
    assert unc is not None and unc.names == ReducedSet(biped).names
    assert unc.std[unc.names.index('m_foot')] == 0.0
    assert np.all(np.isfinite(unc.std)) and np.isfinite(unc.combination_std).any()
    # a combination is identifiable by its data std and the held parameters' pull together
    assert np.all(unc.combination_total_std >= unc.combination_std)
    assert np.array_equal(unc.identifiable, unc.combination_total_std <= 0.05)
    assert res.summary().startswith('what the data determine')  # then per link, then the fit
    assert 'inf' not in res.summary().replace('information', '')
    err = unc.identifiable_part(np.ones(len(unc.names)) * unc.scales)
    assert err.shape == (len(unc.names),)
    for method in ('zmp_qp', 'torque_ls'):
        other = identify(run_a, biped, method, samples=samples_a)
        assert other.uncertainty is not None
        assert np.all(other.uncertainty.std >= 0)


def test_method_prerequisites_are_refused_before_any_data(biped):
    """check_method (run by identify first) refuses, with the option and the fix, a
    description without primitives and a parameter set or rows the method does not run on,
    without touching the recording (None here)."""
    from legid_ros.core.identification.prerequisites import check_method
    from legid_ros.core.robot import load_robot
    quad = load_robot('quadruped')  # a description without primitive bodies
    with pytest.raises(BadInputError, match="primitive bodies.*'primitives:' section"):
        identify(None, quad, 'primitives')
    for method, opts, words in (
            ('zmp_newton', {'param_set': 'base'}, 'choose one of reduced'),
            ('sdp', {'param_set': 'base'}, 'choose one of standard'),
            ('primitives', {'param_set': 'reduced'}, 'drop param_set'),
            ('torque_ls', {'rows': 'zmp'}, 'sdp and primitives only'),
            ('zmp_qp', {'reg': 'auto'}, 'zmp_newton')):
        with pytest.raises(BadInputError, match=words):
            identify(None, biped, method, **opts)
    with pytest.raises(BadInputError, match='--foot-from-ft needs an ankle F/T sensor'):
        check_method(quad, 'zmp_newton', {'foot_from_ft': True}, cli=True)
    with pytest.raises(BadInputError, match='^--method sdp does not run on --param-set base'):
        check_method(biped, 'sdp', {'param_set': 'base'}, cli=True)


def test_sensing_prerequisites_name_the_missing_topics(biped, run_a):
    """check_sensing refuses a recording lacking what the method needs (a foot's wrench for
    floating rows, efforts for torque rows, the IMU, ankle F/T), naming topic and fix."""
    from legid_ros.core.identification.prerequisites import Sensing, check_sensing
    feet = frozenset(biped.feet)
    full = Sensing(feet, feet, feet, True, True, 'bag b')
    for method, opts in (('floating_qp', {}), ('torque_ls', {}), ('sdp', {'rows': 'floating'}),
                         ('zmp_newton', {'foot_from_ft': True}), ('primitives', {})):
        check_sensing(biped, method, opts, full)  # everything there: no error
    cases = (
        ('floating_qp', {}, {'foot_wrench': frozenset({'right'})},
         r'--method floating_qp needs the 6-axis wrench.*left \(left_foot/wrench\)'),
        ('sdp', {'rows': 'torque'}, {'efforts': False}, '--method sdp --rows torque fits joint'),
        ('zmp_newton', {}, {'imu': False}, 'add --no-imu'),
        ('zmp_newton', {'foot_from_ft': True}, {'ankle_ft': frozenset()},
         '--foot-from-ft needs the raw ankle F/T.*left_foot/wrench_raw'),
        ('zmp_qp', {'zmp_source': 'fsr'}, {'fsr': frozenset({'left'})},
         '--zmp-source fsr needs.*right_foot/fsr/sensor_0'),
        ('zmp_qp', {}, {'fsr': frozenset(), 'foot_wrench': frozenset({'left'})},
         'needs the forces under every foot'))
    for method, opts, lacking, words in cases:
        with pytest.raises(BadInputError, match=words):
            check_sensing(biped, method, opts, dataclasses.replace(full, **lacking), cli=True)
    assert Sensing.of_recording(run_a).foot_wrench == feet and Sensing.of_recording(run_a).imu


@pytest.mark.parametrize('method,param_set', [('torque_ls', 'grouped_sides'),
                                              ('floating_qp', 'reduced'), ('sdp', 'grouped'),
                                              ('torque_ls', 'base')])
def test_excitation_check_options_reach_every_solver(biped, run_a, samples_a, method,
                                                     param_set):
    """``check`` and ``max_cond`` (``legid identify --no-check``) are accepted by the linear
    rows' Newton and base-parameter fits too (they raised TypeError)."""
    for opts in ({'check': False}, {'check': True, 'max_cond': 1e12}):
        res = identify(run_a, biped, method, samples=samples_a, param_set=param_set, **opts)
        assert res.info.get('param_set', 'base') == param_set
        assert np.all(np.isfinite(res.pi))
