"""The online uncertainty counts how much neighbouring folded rows share their noise."""

import numpy as np
import pytest

from legid_ros.core.identification.online import OnlineEstimator
from legid_ros.core.identification.online.correlation import RowCorrelation
from legid_ros.core.robot import load_robot
from legid_ros.core.synthetic import NoiseModel, SyntheticConfig, simulate_biped
from legid_ros.core.synthetic.truth import truth_table

from noise_helpers import coloured, coverage_ratio


def test_correlation_time_of_white_and_smoothed_residuals():
    """White residuals: about 1 row; a moving average over 9 rows, folded in short windows: its
    correlation across windows (about 9 rows); CAD rows count only until rows at an estimate
    exist; the saved state restores it."""
    rng = np.random.default_rng(0)
    corr = RowCorrelation()
    assert corr.factor == 1.0
    smooth = np.column_stack([np.convolve(rng.normal(size=4000), np.ones(9) / 9, 'same')
                              for _ in range(2)])  # tau = 1 + 2 sum (9 - l) / 9 = 9
    for k in range(0, 4000, 5):  # windows of 5 rows: shorter than the correlation
        corr.fold(smooth[k:k + 5], at_estimate=False)
    assert 6.0 < corr.factor < 12.0, corr.factor
    for k in range(40):
        corr.fold(rng.normal(size=(50, 2)), at_estimate=True)
    assert 1.0 <= corr.factor < 1.3, corr.factor
    other = RowCorrelation()
    other.load(corr.state())
    assert other.factor == pytest.approx(corr.factor)


@pytest.fixture(scope='module')
def exact():
    """The biped and a noise-free 40 s run at 50 Hz inside the reduced set (Table 2)."""
    robot = load_robot('biped')
    rec = simulate_biped(SyntheticConfig(duration_s=40.0, rate_hz=50.0, seed=4,
                                         noise=NoiseModel.none(), truth=truth_table('table2')))
    return robot, rec


def test_online_noise_std_matches_the_spread_with_correlated_rows(exact):
    """With ZMP noise shared by neighbouring rows (AR(1), 0.8: a correlation time of 9 rows),
    the online estimator's noise std along the combinations its noise determines is within a
    factor 1.5 of the spread over 16 noise seeds (the white-row form alone: about a third of
    it). Table 2's truth is further from CAD than the prior width (foot 2.52 kg, CAD 4.82), so
    the total std reads those moves as model error and calls none determined."""
    robot, rec = exact
    values, uncs = [], []
    fz = rec.foot_wrench['right'][:, 2] + rec.foot_wrench['left'][:, 2]
    for seed in range(16):
        zmp = rec.zmp_true + coloured(np.random.default_rng(seed), rec.n, 0.002)  # [m]
        est = OnlineEstimator(robot, param_set='reduced', min_samples=50, use_imu=False,
                              total_mass=rec.meta['total_mass_true_kg'])
        for k in range(0, rec.n, 50):
            idx = np.arange(k, min(k + 50, rec.n))
            est.add_window(rec.t[idx], rec.q[idx], rec.qd[idx], rec.qdd_true[idx],
                           zmp=zmp[idx], fz=fz[idx], support='right')
            if k == 500:
                est.update()  # the rest measured at an estimate
        res = est.update()
        values.append(res.uncertainty.value)
        uncs.append(res.uncertainty)
    ratio = coverage_ratio(values, uncs, by_noise=True)
    assert np.all(ratio > 1 / 1.5) and np.all(ratio < 1.5), ratio
