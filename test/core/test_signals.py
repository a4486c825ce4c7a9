"""Tests of legid_ros.core.signals on signals with known answers."""

import numpy as np
import pytest

from legid_ros.core import signals
from legid_ros.core.errors import BadInputError


def test_zmp_from_sensors_is_force_weighted_centroid():
    """Four corner forces give the force-weighted mean position; unloaded gives NaN."""
    pos = np.array([[0.06, 0.05], [0.06, -0.05], [-0.06, 0.05], [-0.06, -0.05]])
    f = np.array([[10.0, 30.0, 20.0, 40.0], [0.1, 0.1, 0.1, 0.1]])
    zmp, fz = signals.zmp_from_sensors(f, pos)
    assert zmp[0] == pytest.approx([(0.6 + 1.8 - 1.2 - 2.4) / 100, (0.5 - 1.5 + 1.0 - 2.0) / 100])
    assert fz[0] == pytest.approx(100.0)
    assert np.isnan(zmp[1]).all()


def test_zmp_from_wrench_recovers_point_of_application():
    """A point force applied at p, seen by a rotated sensor elsewhere, has its ZMP at p."""
    rng = np.random.default_rng(0)
    p = np.array([0.03, -0.02, 0.0])
    force = np.array([5.0, -3.0, 300.0])
    tz = 0.7  # a vertical moment does not move the ZMP
    rot = np.array([[np.cos(0.3), -np.sin(0.3), 0], [np.sin(0.3), np.cos(0.3), 0], [0, 0, 1]])
    s = np.array([0.01, 0.02, 0.104]) + rng.normal(0, 0.01, 3)
    # wrench at the sensor origin, in sensor axes
    n_world_at_s = np.cross(p - s, force) + np.array([0, 0, tz])
    w_sensor = np.concatenate([rot.T @ force, rot.T @ n_world_at_s])
    world = signals.wrench_to_world(w_sensor[None], rot, s)
    zmp, fz = signals.zmp_from_wrench(world)
    assert zmp[0] == pytest.approx(p[:2], abs=1e-12)
    assert fz[0] == pytest.approx(300.0)


def test_zmp_double_support_sums_wrenches():
    """Two feet: the ZMP of the summed wrench is the force-weighted mean of both CoPs."""
    f1, p1 = np.array([0, 0, 100.0]), np.array([0.0, 0.1, 0.0])
    f2, p2 = np.array([0, 0, 300.0]), np.array([0.1, -0.1, 0.0])
    w = np.concatenate([f1 + f2, np.cross(p1, f1) + np.cross(p2, f2)])
    zmp, _ = signals.zmp_from_wrench(w[None])
    assert zmp[0] == pytest.approx([0.075, -0.05])


def test_lag_filter_step_response():
    """The lag filter of Wu & Gao 2021 answers a unit step with 1 - l^(k+1)."""
    lam = 0.8
    u = np.ones(20)
    z = signals.lag_filter(u, lam, z0=np.array(0.0))
    assert z == pytest.approx(1 - lam ** (np.arange(20) + 1))
    with pytest.raises(BadInputError):
        signals.lag_filter(u, 1.0)


def test_butter_zero_phase_keeps_phase_and_cuts_noise():
    """A 1 Hz sine passes a 5 Hz zero-phase low-pass without lag; 40 Hz is removed."""
    t = np.arange(0, 4, 0.001)
    slow = np.sin(2 * np.pi * t)
    y = signals.butter_zero_phase(slow + 0.3 * np.sin(2 * np.pi * 40 * t), 5.0, 1000.0)
    inner = slice(500, -500)
    assert np.max(np.abs(y[inner] - slow[inner])) < 0.01


def test_causal_butterworth_chunks_equal_one_pass():
    """Filtering in chunks continues the state: same output as one call; DC passes."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(300, 2)) + 5.0
    f1 = signals.CausalButterworth(10.0, 200.0)
    one = f1(x)
    f2 = signals.CausalButterworth(10.0, 200.0)
    chunks = np.concatenate([f2(x[:70]), f2(x[70:200]), f2(x[200:])])
    assert chunks == pytest.approx(one)
    dc = signals.CausalButterworth(10.0, 200.0)(np.full((50, 1), 3.0))
    assert dc == pytest.approx(np.full((50, 1), 3.0))


def test_finite_differences_exact_on_quadratic():
    """Central differences are exact for a quadratic, even with non-uniform times."""
    t = np.cumsum(np.r_[0.0, np.random.default_rng(2).uniform(0.01, 0.02, 49)])
    x = 3 * t ** 2 - t + 1
    xd, xdd = signals.finite_differences(t, x)
    assert xd == pytest.approx(6 * t - 1, abs=1e-9)
    assert xdd == pytest.approx(np.full_like(t, 6.0), abs=1e-6)


def test_savgol_derivatives_of_noisy_sine():
    """Savitzky-Golay velocity and acceleration of a noisy sine are close to the truth."""
    t = np.arange(0, 5, 0.001)
    rng = np.random.default_rng(3)
    x = np.sin(2 * t) + rng.normal(0, 1e-5, t.size)
    _, xd, xdd = signals.savgol_derivatives(t, x, 0.1)
    inner = slice(100, -100)
    assert np.max(np.abs(xd[inner] - 2 * np.cos(2 * t[inner]))) < 2e-3
    assert np.max(np.abs(xdd[inner] + 4 * np.sin(2 * t[inner]))) < 0.05


def test_finite_rows_masks_nan_and_inf():
    """finite_rows flags every sample with a NaN or inf in any array."""
    a = np.ones((5, 2))
    b = np.ones(5)
    a[1, 0] = np.nan
    b[3] = np.inf
    assert signals.finite_rows(a, b, None).tolist() == [True, False, True, False, True]


def _window_with_nan(at):
    """A 200-row, 1 kHz window of two sine columns with one NaN at row ``at`` in column 0."""
    t = np.arange(200) * 0.001
    x = np.column_stack([np.sin(3 * t), np.cos(2 * t)])
    x_bad = x.copy()
    x_bad[at, 0] = np.nan
    return t, x, x_bad


@pytest.mark.parametrize('at', [0, 3, 100, 196, 199])
def test_savgol_nan_costs_its_fit_support_only(at):
    """A NaN anywhere (edges included) costs only the outputs whose fit uses it, per column."""
    t, x, x_bad = _window_with_nan(at)
    win = 51  # 0.05 s at 1 kHz
    clean = signals.savgol_derivatives(t, x, 0.05)
    got = signals.savgol_derivatives(t, x_bad, 0.05)
    k = np.arange(200)
    if at < win:
        lost = (np.abs(k - at) <= 25) | (k < 25)
    elif at >= 200 - win:
        lost = (np.abs(k - at) <= 25) | (k >= 175)
    else:
        lost = np.abs(k - at) <= 25
    for a, b in zip(clean, got):
        assert np.isnan(b[lost, 0]).all()
        assert b[~lost, 0] == pytest.approx(a[~lost, 0], abs=1e-9)
        assert b[:, 1] == pytest.approx(a[:, 1], abs=1e-12)
    assert (~lost).sum() >= 200 - 2 * 25 - 1 - 25


def test_savgol_without_nan_is_unchanged():
    """Finite input takes scipy's path unchanged (the batch identification is not moved)."""
    from scipy.signal import savgol_filter
    t, x, _ = _window_with_nan(0)
    got = signals.savgol_derivatives(t, x, 0.05)
    for k, y in enumerate(got):
        assert np.array_equal(y, savgol_filter(x, 51, 3, deriv=k, delta=0.001, axis=0,
                                               mode='interp'))


def test_lag_filter_holds_over_nan():
    """A NaN input is NaN in the output and the later outputs are those of a held input."""
    u = np.linspace(0.0, 1.0, 30)
    u_bad = u.copy()
    u_bad[10] = np.nan
    held = u.copy()
    held[10] = u[9]
    z = signals.lag_filter(u_bad, 0.7)
    ref = signals.lag_filter(held, 0.7)
    assert np.isnan(z[10])
    assert np.delete(z, 10) == pytest.approx(np.delete(ref, 10))


def test_butter_zero_phase_nan_costs_the_sample():
    """A NaN in a long signal is NaN in the output; the rest stays finite and close."""
    t = np.arange(0, 2, 0.001)
    x = np.sin(2 * np.pi * t)
    x_bad = x.copy()
    x_bad[700] = np.nan
    y = signals.butter_zero_phase(x_bad, 5.0, 1000.0)
    assert np.isnan(y[700]) and np.isfinite(np.delete(y, 700)).all()
    assert np.max(np.abs(np.delete(y - signals.butter_zero_phase(x, 5.0, 1000.0), 700))) < 1e-6


def test_causal_butterworth_state_survives_nan():
    """A NaN chunk does not poison the causal filter: later output stays finite."""
    f = signals.CausalButterworth(10.0, 200.0)
    x = np.ones((40, 1))
    x[5] = np.nan
    y1 = f(x)
    y2 = f(np.full((10, 1), np.nan))
    y3 = f(np.ones((20, 1)))
    assert np.isnan(y1[5]).all() and np.isnan(y2).all()
    assert y3 == pytest.approx(np.ones((20, 1)))


def test_zmp_on_a_raised_ground_has_no_horizontal_moment():
    """On the plane z = z_ground the wrench's moment about the ZMP is vertical (x, y zero)."""
    rng = np.random.default_rng(3)
    w = np.column_stack([rng.normal(0, 40, (20, 2)), rng.uniform(200, 400, 20),
                         rng.normal(0, 20, (20, 3))])
    z_ground = 0.07
    zmp, fz = signals.zmp_from_wrench(w, z_ground=z_ground)
    p = np.column_stack([zmp, np.full(20, z_ground)])
    moment = w[:, 3:] - np.cross(p, w[:, :3])  # about the ZMP
    assert np.abs(moment[:, :2]).max() < 1e-9
    assert fz == pytest.approx(w[:, 2])


def test_savgol_at_some_samples_equals_the_full_filter_there():
    """Derivatives evaluated only at chosen samples (edges, inside, a NaN's reach) equal the
    full-length filter's outputs at those samples."""
    rng = np.random.default_rng(4)
    t = np.arange(3000) * 1e-3
    x = np.cumsum(rng.normal(size=(3000, 2, 3)), axis=0)
    x[500, 1, 2] = np.nan
    at = np.r_[0:90, 95:2950:7, 2900:3000]
    full = signals.savgol_derivatives(t, x, 0.15)
    part = signals.savgol_derivatives(t, x, 0.15, at=at)
    for f, p in zip(full, part):
        assert np.array_equal(np.isnan(f[at]), np.isnan(p))
        assert np.nanmax(np.abs(f[at] - p)) <= 1e-12 * np.nanmax(np.abs(f))


def test_smooth_quaternions_ignores_sign_flips_and_keeps_nan_rows():
    """Smoothed orientations do not depend on each sample's sign (q and -q are one
    rotation), follow a slow turn through 90 deg, and a NaN row stays NaN without costing
    its neighbours."""
    from scipy.spatial.transform import Rotation
    t = np.arange(400) / 200.0  # [s]
    quat = Rotation.from_rotvec(np.outer(np.pi / 2 * t / t[-1], [0, 0, 1])).as_quat()
    flips = np.where(np.arange(t.size) % 3 == 0, -1.0, 1.0)[:, None]

    def low_pass(x):
        return signals.butter_zero_phase(x, 6.0, 200.0)
    plain = signals.smooth_quaternions(quat, low_pass)
    flipped = signals.smooth_quaternions(quat * flips, low_pass)
    angle = (Rotation.from_quat(plain).inv() * Rotation.from_quat(flipped)).magnitude()
    assert angle.max() < 1e-9
    turn = (Rotation.from_quat(quat).inv() * Rotation.from_quat(plain)).magnitude()
    assert turn[100:-100].max() < 1e-4  # a smooth turn passes (0.5 s from the edges)
    holed = quat.copy()
    holed[200] = np.nan
    out = signals.smooth_quaternions(holed, low_pass)
    assert np.isnan(out[200]).all()
    assert np.isfinite(np.delete(out, 200, axis=0)).all()
    np.testing.assert_allclose(np.linalg.norm(np.delete(out, 200, axis=0), axis=1), 1.0)
