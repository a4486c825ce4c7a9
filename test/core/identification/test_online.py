"""Tests of the online estimator: convergence, state, forgetting, bad input, ankle F/T."""

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError, NotIdentifiableError
from legid_ros.core.identification.api import identify
from legid_ros.core.identification.rows.linear import Normal, build_rows, total_mass_from_forces
from legid_ros.core.identification.parameters.sets import StandardSet
from legid_ros.core.identification.solvers.qp import ParameterQP
from legid_ros.core.identification.solvers.sdp import solve_sdp
from legid_ros.core.identification.online import OnlineEstimator
from legid_ros.core.inertial import link_index


def _feed(est, rec, samples, size=50, stop=None):
    n = samples.n if stop is None else stop
    for k in range(0, n, size):
        sl = slice(k, min(k + size, n))
        est.add_window(samples.t[sl], samples.q[sl, 7:], samples.v[sl, 6:], samples.a[sl, 6:],
                       samples.zmp[sl], samples.fz[sl], None, 'right')


def test_online_matches_batch_statistics(biped, run_a, samples_a):
    """Folding the run window by window equals the batch QP on all rows at once."""
    est = OnlineEstimator(biped, use_imu=False)
    _feed(est, run_a, samples_a)
    res = est.update()
    rows = build_rows(samples_a, biped, 'zmp')
    normal = Normal(rows.A.shape[1])
    normal.fold(rows.A / est.sigma, rows.b, rows.n_samples)
    # the batch samples took base roll/pitch from the IMU, the online fold from the sole: ~1e-3
    assert est.normal.H == pytest.approx(normal.H, rel=1e-2, abs=1e-3 * np.abs(normal.H).max())
    std = StandardSet(biped)
    total = total_mass_from_forces(samples_a)
    qp = ParameterQP(std.cad(), std.scales(), est.solver.lb, est.solver.ub, std.mass_row(),
                     total, est.reg)
    batch = qp.solve(normal.H, normal.h, normal.n).x
    if res.info['consistent_by'] == 'lmi':  # the QP's own solution was not consistent
        batch, _ = solve_sdp(normal.H, normal.h, normal.n, std, total, est.solver.lb,
                             est.solver.ub, est.reg)
    assert res.consistency.ok
    assert res.pi[::10] == pytest.approx(batch[::10], abs=0.05)
    assert res.residual_rms < 0.001
    assert res.n_samples == samples_a.n
    assert res.total_mass == pytest.approx(run_a.meta['total_mass_true_kg'], rel=0.005)
    batch_qp = identify(run_a, biped, 'zmp_qp', samples=samples_a)
    assert np.sum(np.abs(res.pi[::10] - batch_qp.pi[::10])) < 2.0


def test_update_reports_its_cpu_time_within_its_wall_time(biped, run_a, samples_a):
    """Each update carries its thread's CPU time, positive and not above its wall time."""
    est = OnlineEstimator(biped, param_set='grouped_sides')
    _feed(est, run_a, samples_a, stop=600)
    res = est.update()
    cpu = res.info['cpu_time_s']
    assert 0.0 < cpu <= res.solve_time_s + 1e-3  # thread_time ticks are coarser than perf


def test_kept_standard_deviations_are_read_at_the_newest_estimate(biped, run_a, samples_a):
    """Between two computations of the stds (uncertainty_period_s) an update keeps them but
    its uncertainty's values are its own estimate's core values, not the older estimate's."""
    from legid_ros.core.identification.uncertainty.core import _core_basis
    est = OnlineEstimator(biped, param_set='grouped_sides', uncertainty_period_s=1e6)
    _feed(est, run_a, samples_a, stop=600)
    first = est.update()
    _feed(est, run_a, samples_a)
    later = est.update()
    assert first.uncertainty is not None and later.info['uncertainty_age_s'] > 0
    assert later.uncertainty.std == pytest.approx(first.uncertainty.std)
    now = _core_basis(biped, later.pi, 'grouped_sides')[0]
    assert later.uncertainty.value == pytest.approx(now, abs=1e-12)
    assert np.max(np.abs(now - first.uncertainty.value)) > 1e-6  # the estimate moved


def test_state_dict_round_trip_and_reset(biped, run_a, samples_a):
    """A restored estimator gives the same update; reset forgets everything."""
    est = OnlineEstimator(biped, half_life_s=2.0)
    _feed(est, run_a, samples_a, stop=600)
    first = est.update()
    state = {k: np.array(v) for k, v in est.state_dict().items()}
    other = OnlineEstimator(biped, half_life_s=2.0)
    other.load_state_dict(state)
    assert other.update().pi == pytest.approx(first.pi, abs=1e-6)
    assert est.normal.n < 600  # forgetting shrinks the effective count
    est.reset()
    with pytest.raises(NotIdentifiableError):
        est.update()


def test_bad_windows_are_counted_not_fatal(biped, run_a, samples_a):
    """NaN samples are dropped and counted; wrong shapes raise BadInputError."""
    est = OnlineEstimator(biped)
    zmp = samples_a.zmp[:60].copy()
    zmp[5] = np.nan
    n = est.add_window(samples_a.t[:60], samples_a.q[:60, 7:], None, None, zmp,
                       samples_a.fz[:60])
    assert n == 59 and est.dropped == 1
    with pytest.raises(BadInputError):
        est.add_window(samples_a.t[:10], samples_a.q[:10, 7:10], None, None, zmp[:10],
                       samples_a.fz[:10])


def test_absurd_magnitudes_cost_their_rows_not_the_statistics(biped, run_a, samples_a):
    """Velocities of 1e300 rad/s (finite, but their squares overflow) are dropped and counted
    like NaN: the statistics stay finite and the next update solves."""
    est = OnlineEstimator(biped, param_set='reduced', min_samples=50)
    v = samples_a.v[:60, 6:].copy()
    v[3:7] = 1e300
    n = est.add_window(samples_a.t[:60], samples_a.q[:60, 7:], v, samples_a.a[:60, 6:],
                       samples_a.zmp[:60], samples_a.fz[:60], None, 'right')
    assert n == 56 and est.dropped == 4
    _feed(est, run_a, samples_a, stop=600)
    assert np.isfinite(est.normal.H).all() and np.isfinite(est.update().pi).all()


def _feed_ft(est, samples, ankle_ft, size=25):
    for k in range(0, samples.n, size):
        sl = slice(k, min(k + size, samples.n))
        est.add_window(samples.t[sl], samples.q[sl, 7:], samples.v[sl, 6:], samples.a[sl, 6:],
                       samples.zmp[sl], samples.fz[sl], None, 'right',
                       ankle_ft=None if ankle_ft is None else
                       {f: w[sl] for f, w in ankle_ft.items()})


def _noisy_ankle_ft(samples, seed=5):
    rng = np.random.default_rng(seed)
    out = {}
    for f, w in samples.ankle_ft.items():
        w = w.copy()
        w[:, :3] += rng.normal(0.0, 1.0, w[:, :3].shape)  # [N]
        w[:, 3:] += rng.normal(0.0, 0.05, w[:, 3:].shape)  # [N.m]
        out[f] = w
    return out


def test_ankle_ft_rows_weigh_the_swing_foot(biped, run_a, samples_a):
    """The swinging foot's ankle F/T puts its mass within 5 % where the ZMP alone misses it."""
    left = 10 * link_index(biped.model, biped.feet['left'].link)
    m_true = run_a.pi_true[left]
    zmp_only = OnlineEstimator(biped)
    _feed_ft(zmp_only, samples_a, None)
    res0 = zmp_only.update()
    with_ft = OnlineEstimator(biped)
    _feed_ft(with_ft, samples_a, _noisy_ankle_ft(samples_a))
    res1 = with_ft.update()
    assert abs(res0.pi[left] / m_true - 1) > 0.10
    assert abs(res1.pi[left] / m_true - 1) < 0.05
    assert res1.info['ankle_ft_rows'] == 6 * samples_a.n  # left swings in every sample
    assert 0.2 < res1.info['ankle_ft_residual_rms_sigma'] < 1.0
    assert np.isnan(res0.info['ankle_ft_residual_rms_sigma'])
    assert res1.total_mass == pytest.approx(run_a.meta['total_mass_true_kg'], rel=0.005)
    assert res1.residual_rms < 0.001


def test_ankle_ft_bad_input_and_dropped_readings(biped, samples_a):
    """Bad ankle F/T shapes or feet raise BadInputError; NaN swing readings are counted."""
    est = OnlineEstimator(biped)
    sl = slice(0, 60)
    args = (samples_a.t[sl], samples_a.q[sl, 7:], samples_a.v[sl, 6:], samples_a.a[sl, 6:],
            samples_a.zmp[sl], samples_a.fz[sl], None, 'right')
    with pytest.raises(BadInputError):
        est.add_window(*args, ankle_ft={'left': np.zeros((60, 5))})
    with pytest.raises(BadInputError):
        est.add_window(*args, ankle_ft={'middle': np.zeros((60, 6))})
    with pytest.raises(BadInputError):
        est.add_window(*args, ankle_ft=np.zeros((60, 6)))
    assert est.normal.n == 0 and est.ft_rows == 0
    ft = {f: w[sl].copy() for f, w in samples_a.ankle_ft.items()}
    ft['left'][[3, 7, 11]] = np.nan
    ft['right'][5] = np.nan  # the support foot's reading is not used: not counted
    assert est.add_window(*args, ankle_ft=ft) == 60
    assert est.dropped == 0 and est.ft_dropped == 3
    assert est.ft_rows == 6 * 57
    est.min_samples = 10
    assert est.update().dropped == {'non-finite ankle F/T': 3}
    contact = np.zeros(60, bool)
    contact[20:30] = True  # double support: the left foot touches the ground there
    est.add_window(*args, ankle_ft=ft, swing={'left': ~contact})
    assert est.ft_rows == 6 * (57 + 57 - 10) and est.ft_dropped == 6
    with pytest.raises(BadInputError):
        est.add_window(*args, ankle_ft=ft, swing={'left': np.ones(59, bool)})


def test_ankle_ft_state_round_trip_and_forgetting(biped, samples_a):
    """The F/T statistics survive state_dict, decay with forgetting; old states still load."""
    est = OnlineEstimator(biped, half_life_s=2.0)
    _feed_ft(est, samples_a, {f: w.copy() for f, w in samples_a.ankle_ft.items()})
    assert est.ft_rows < 6 * samples_a.n * 0.5  # forgetting shrinks the F/T rows too
    assert est.ft_rows == pytest.approx(6 * est.normal.n, rel=1e-9)
    first = est.update()
    state = {k: np.array(v) for k, v in est.state_dict().items()}
    other = OnlineEstimator(biped, half_life_s=2.0)
    other.load_state_dict(state)
    assert other.update().pi == pytest.approx(first.pi, abs=1e-6)
    old = {k: v for k, v in state.items() if not k.startswith('ft_')}
    other.load_state_dict(old)
    assert other.ft_rows == 0 and not other.ankle.normal.H.any()


def test_torque_rows_take_the_measured_total_mass(biped, run_a, samples_a):
    """Torque rows get the total-mass equality from the measured weight (fz / g), as the ZMP
    rows and the batch path do, not the CAD total."""
    est = OnlineEstimator(biped, method='torque', use_imu=False)
    n = 300
    for k in range(0, n, 50):
        sl = slice(k, k + 50)
        est.add_window(samples_a.t[sl], samples_a.q[sl, 7:], samples_a.v[sl, 6:],
                       samples_a.a[sl, 6:], None, 1.3 * samples_a.fz[sl], None, 'right',
                       tau=samples_a.tau[sl])
    expected = 1.3 * np.mean(samples_a.fz[:n]) / 9.81
    assert est.total_mass == pytest.approx(expected, rel=2e-3)
    assert abs(est.total_mass - biped.total_mass) > 0.05 * biped.total_mass
