"""Improved cycloid foot trajectory (legid_ros.core.gait.cycloid)."""

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.gait.cycloid import Cycloid


@pytest.fixture(scope='module')
def traj():
    c = Cycloid()
    t = np.linspace(0.0, 2 * c.period, 200001)
    return c, t, c.evaluate(t)


def test_velocity_and_acceleration_are_derivatives(traj):
    """Analytic velocity and acceleration match finite differences (phase switches included)."""
    _, t, (p, v, a) = traj
    dt = t[1] - t[0]
    assert np.max(np.abs(np.gradient(p, dt, axis=0) - v)[1:-1]) < 1e-5
    # jerk may jump (at ramp ends), so the central difference of v is off by <= jump * dt / 2
    assert np.max(np.abs(np.gradient(v, dt, axis=0) - a)[1:-1]) < 2e-2


def test_no_jumps(traj):
    """Position, velocity, acceleration change per sample by at most slope * dt (no jumps)."""
    c, t, (p, v, a) = traj
    dt = t[1] - t[0]
    # a step bigger than (max derivative) * dt would be a jump
    assert np.max(np.abs(np.diff(p, axis=0))) <= np.max(np.abs(v)) * dt * 1.001
    assert np.max(np.abs(np.diff(v, axis=0))) <= np.max(np.abs(a)) * dt * 1.001
    assert np.max(np.abs(np.diff(a, axis=0))) < 2e4 * dt  # bounded jerk [m/s^3]


def test_phase_boundaries_are_smooth():
    """At lift-off and touchdown velocity and acceleration are zero on both sides."""
    c = Cycloid()
    eps = 1e-9
    for tb in (0.0, c.t_stance, c.period):
        _, v, a = c.evaluate(np.array([tb - eps, tb + eps]))
        assert np.max(np.abs(v)) < 1e-6 and np.max(np.abs(a)) < 1e-3


def test_stance_flat_swing_reaches_lift_and_peak_speed(traj):
    """Stance has no vertical motion; the swing peaks at H; the descent peaks at V_z."""
    c, t, (p, v, _) = traj
    tc = np.mod(t, c.period)
    stance = tc < c.t_stance
    assert np.max(np.abs(p[stance, 1] - c.z_ground)) == 0.0
    assert np.max(p[:, 1]) - c.z_ground == pytest.approx(c.lift, abs=1e-9)
    assert -np.min(v[:, 1]) == pytest.approx(c.vz, abs=1e-9)
    assert np.max(p[:, 0]) - np.min(p[:, 0]) == pytest.approx(c.stride, abs=1e-9)


def test_touchdown_direction_limit():
    """The closed-form touchdown direction equals the velocity direction just before touchdown."""
    c = Cycloid()
    _, v, _ = c.evaluate(np.array([c.period - 1e-6]))
    assert np.arctan2(v[0, 0], -v[0, 1]) == pytest.approx(c.touchdown_direction(), abs=1e-5)


def test_inconsistent_timing_rejected():
    """A descent that cannot fit (T_z1 >= T_z2, or too slow V_z) raises BadInputError."""
    with pytest.raises(BadInputError):
        Cycloid(tz1=0.08, tz2=0.07)
    with pytest.raises(BadInputError):
        Cycloid(vz=0.3)
    with pytest.raises(BadInputError):
        Cycloid(stride=float('nan'))
