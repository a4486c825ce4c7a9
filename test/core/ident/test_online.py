"""Tests of the online estimator: convergence, state round trip, forgetting, bad input."""

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError, NotIdentifiableError
from legid_ros.core.ident.api import identify
from legid_ros.core.ident.linear import Normal, build_rows, total_mass_from_forces
from legid_ros.core.ident.params import StandardSet
from legid_ros.core.ident.qp import ParameterQP
from legid_ros.core.ident.online import OnlineEstimator


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
    qp = ParameterQP(std.cad(), std.scales(), est.lb, est.ub, std.mass_row(),
                     total_mass_from_forces(samples_a), est.reg)
    batch = qp.solve(normal.H, normal.h, normal.n)
    assert res.pi[::10] == pytest.approx(batch.x[::10], abs=0.05)
    assert res.residual_rms < 0.001
    assert res.n_samples == samples_a.n
    assert res.total_mass == pytest.approx(run_a.meta['total_mass_true_kg'], rel=0.005)
    batch_qp = identify(run_a, biped, 'zmp_qp', samples=samples_a)
    assert np.sum(np.abs(res.pi[::10] - batch_qp.pi[::10])) < 2.0


def test_state_dict_round_trip_and_reset(biped, run_a, samples_a):
    """A restored estimator gives the same update; reset forgets everything."""
    est = OnlineEstimator(biped, forgetting=0.999)
    _feed(est, run_a, samples_a, stop=600)
    first = est.update()
    state = {k: np.array(v) for k, v in est.state_dict().items()}
    other = OnlineEstimator(biped, forgetting=0.999)
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
