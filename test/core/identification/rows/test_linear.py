"""Tests of legid_ros.core.identification.rows.linear: the WLS weights of row groups."""

import numpy as np

from legid_ros.core.identification.rows.linear import Rows, group_weights


def _rows(rate_hz: float, seed: int) -> Rows:
    """Two row groups over 30 s read out at ``rate_hz`` from a 1 kHz run: an unfiltered
    effort (white noise averaged over the readout period, so its per-row variance grows with
    the rate) and a filtered one whose residual is slow model error (0.2 Hz) with little
    noise. One column, true value 0: the residual is the right-hand side."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, 30.0, 1e-3)  # [s] the run
    step = int(round(1000.0 / rate_hz))
    n = t.size // step
    white = rng.normal(0.0, 1.0, n * step).reshape(n, step).mean(axis=1)  # period average
    slow = 0.05 * np.sin(2 * np.pi * 0.2 * t[::step][:n]) + 0.002 * rng.normal(size=n)
    b = np.column_stack([white, slow]).reshape(-1)
    return Rows(np.zeros((2 * n, 1)), -b, np.tile([0, 1], n), n, 0, 'torque', rate_hz)


def test_group_weights_do_not_depend_on_the_recording_rate():
    """The weight of a slow model-error group relative to a white-noise group is the same at
    200 and 500 Hz (within 20 %), where the inverse variances differ by the rate's 2.5x."""
    ratio, plain = {}, {}
    for rate in (200.0, 500.0):
        rows = _rows(rate, seed=3)
        w = group_weights(rows, np.zeros(1))
        ratio[rate] = w[1] / w[0]
        r = rows.b.reshape(-1, 2)
        plain[rate] = np.var(r[:, 0]) / np.var(r[:, 1])
    assert abs(np.log(ratio[500.0] / ratio[200.0])) < np.log(1.2)
    assert plain[500.0] / plain[200.0] > 2.0  # what the inverse variance would do


def test_group_weights_leave_the_mean_weighted_square_at_one_and_count_a_bias():
    """The weighted squared residual averages 1 (the regularisation's units), and a group
    whose residual is a constant bias weighs no more than a zero-mean group of the same
    RMS."""
    n = 3000
    rng = np.random.default_rng(0)
    b = np.column_stack([rng.normal(size=n), np.full(n, 1.0)]).reshape(-1)
    rows = Rows(np.zeros((2 * n, 1)), b, np.tile([0, 1], n), n, 0, 'torque')
    w = group_weights(rows, np.zeros(1))
    assert abs(np.mean(w * b ** 2) - 1.0) < 1e-9
    assert w[1] < w[0]
