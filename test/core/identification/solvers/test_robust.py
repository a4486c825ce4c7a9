"""Tests of the robust three-loop identification with exponential friction (Zhu & Zhang)."""

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.identification.fixed_base import leg_context, rigid_error
from legid_ros.core.identification.solvers.robust import RobustSettings, robust_identify
from legid_ros.core.synthetic.leg import make_truth, preprocess
from legid_ros.core.synthetic.leg_experiment import excitation_run, random_leg_excitation
from legid_ros.core.robot import load_robot


@pytest.fixture(scope='module')
def runs():
    """Context, truth and the same short excitation measured clean and with 2 % outliers."""
    robot = load_robot('leg3', floating_base=False)
    truth = make_truth(robot)
    ctx = leg_context(robot)
    ex = random_leg_excitation(ctx, seed=8)
    out = {}
    for frac in (0.0, 0.02):
        d = excitation_run(robot, truth, ex, cycles=2, reps=1, seed=4, rate=200.0,
                           outlier_fraction=frac, outlier_torque=10.0)
        out[frac] = (preprocess(d, decimate=2), d)
    return ctx, truth, out


def test_robust_rejects_outliers_and_keeps_its_accuracy(runs):
    """With 2 % outlier samples the robust error stays within 1.5x of its clean value."""
    ctx, truth, out = runs
    beta_true = ctx.base.B @ truth.theta
    clean, st_clean = robust_identify(ctx, *out[0.0][0])
    dirty, st_dirty = robust_identify(ctx, *out[0.02][0])
    states = out[0.0][0][:3]
    e_clean = rigid_error(ctx, clean.beta, beta_true, *states)
    e_dirty = rigid_error(ctx, dirty.beta, beta_true, *states)
    assert e_dirty <= 1.5 * e_clean + 1e-3
    assert clean.consistent and dirty.consistent
    # the spikes are among the rejected samples
    d = out[0.02][1]
    spikes = np.any(np.abs(d.tau - d.tau_true) > 5.0, axis=1)
    n = len(d.t)
    edge = int(min(n // 10, 0.2 * d.rate))
    spike_kept = spikes[edge:n - edge:2][st_dirty.kept]
    assert spike_kept.sum() == 0
    assert all(0.2 <= x <= 3.0 for x in dirty.meta['delta'])


def test_plain_ls_is_hurt_by_outliers_more_than_robust(runs):
    """Plain LS with the same model errs more than the robust method on outlier data."""
    ctx, truth, out = runs
    beta_true = ctx.base.B @ truth.theta
    states = out[0.0][0][:3]
    rob, _ = robust_identify(ctx, *out[0.02][0])
    plain, _ = robust_identify(ctx, *out[0.02][0], RobustSettings(whiten=False, talwar=False))
    assert plain.method == 'plain_ls' and plain.meta['rejected_samples'] == 0
    assert rigid_error(ctx, plain.beta, beta_true, *states) > \
        2 * rigid_error(ctx, rob.beta, beta_true, *states)


def test_robust_needs_enough_samples(runs):
    """Fewer than 50 samples is a BadInputError."""
    ctx, _, out = runs
    q, qd, qdd, tau = out[0.0][0]
    with pytest.raises(BadInputError):
        robust_identify(ctx, q[:20], qd[:20], qdd[:20], tau[:20])
