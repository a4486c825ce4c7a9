"""Tests of the online forgetting in time: weights, memory independent of folding, tracking."""

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.identification.online import OnlineEstimator, TimeForgetting
from legid_ros.core.identification.parameters.sets import ReducedSet
from legid_ros.core.synthetic import SyntheticConfig, simulate_biped
from legid_ros.core.synthetic.config import TABLE2_TRUTH, NoiseModel


def test_weights_halve_every_half_life_and_rebase_on_jump():
    """A sample one half-life older weighs half; a jump back re-bases without decay."""
    f = TimeForgetting(2.0)
    decay, w = f.advance(np.array([10.0, 12.0]))
    assert decay == 1.0 and w == pytest.approx([0.5, 1.0])
    decay, w = f.advance(np.array([16.0]))
    assert decay == pytest.approx(0.25) and w == pytest.approx([1.0])
    decay, w = f.advance(np.array([1.0, 2.0]))  # clock jumped back: new time base
    assert decay == 1.0 and f.t_ref == 2.0
    assert TimeForgetting(0.0).advance(np.array([0.0, 100.0]))[1] == pytest.approx([1, 1])
    with pytest.raises(BadInputError):
        TimeForgetting(-1.0)


def _fold(est, rec, step, offset=0.0, size=50):
    for k in range(0, rec.n, size):
        idx = np.arange(k, min(k + size, rec.n))[::step]
        est.add_window(rec.t[idx] + offset, rec.q[idx], rec.qd[idx], rec.qdd_true[idx],
                       zmp=rec.zmp_true[idx], fz=rec.foot_wrench['right'][idx, 2]
                       + rec.foot_wrench['left'][idx, 2], support='right')


@pytest.fixture(scope='module')
def runs():
    """Two 16 s runs at 100 Hz, the second with 2 kg more in the trunk."""
    cfg = dict(duration_s=16.0, rate_hz=100.0, noise=NoiseModel.none())
    heavy = dict(TABLE2_TRUTH)
    m, shift = heavy['trunk']
    heavy['trunk'] = (m + 2.0 / 13.87, shift)
    return (simulate_biped(SyntheticConfig(seed=3, **cfg)),
            simulate_biped(SyntheticConfig(seed=4, truth=heavy, **cfg)))


def test_memory_does_not_depend_on_the_fold_rate(biped, runs):
    """Folding every row or every 5th row gives the same effective memory (in seconds)."""
    rec = runs[0]
    every = OnlineEstimator(biped, half_life_s=3.0, use_imu=False)
    fifth = OnlineEstimator(biped, half_life_s=3.0, use_imu=False)
    _fold(every, rec, 1)
    _fold(fifth, rec, 5)
    # samples per second differ by 5: the weighted counts do too, their ratio is the fold step
    assert every.normal.n / fifth.normal.n == pytest.approx(5.0, rel=0.02)
    # memory in seconds: sum of weights / rate is the same (about T / ln 2 for a long run)
    assert every.normal.n / 100.0 == pytest.approx(fifth.normal.n / 20.0, rel=0.02)
    assert every.normal.n / 100.0 == pytest.approx(3.0 / np.log(2.0), rel=0.05)


def test_trunk_payload_is_tracked_with_a_half_life(biped, runs):
    """After 2 kg is added to the trunk, a 2 s half-life follows it; no forgetting does not."""
    before, after = runs
    span = before.t[-1] - before.t[0] + 0.01
    trunk = ReducedSet(biped).names.index('m_trunk')
    out = {}
    for hl in (2.0, 0.0):
        est = OnlineEstimator(biped, param_set='reduced', half_life_s=hl, use_imu=False)
        _fold(est, before, 2)
        _fold(est, after, 2, offset=span)
        out[hl] = est.update().x[trunk]
    true_after = TABLE2_TRUTH['trunk'][0] * 13.87 + 2.0
    assert out[2.0] == pytest.approx(true_after, rel=0.02)
    assert abs(out[0.0] - true_after) > 0.5  # a constant-parameter fit averages the two
