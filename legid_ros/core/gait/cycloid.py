"""Improved cycloid foot trajectory (Chen et al. 2021), in the hip frame of one leg.

One cycle starts at touchdown. Stance (``t_stance``): the foot moves from ``+S/2`` to ``-S/2``
(relative to the stride centre) along a cycloid in x with no vertical motion. Swing
(``t_swing``): x returns along a cycloid; z rises along a cycloid to the lift height ``H`` and
descends with a smoothed trapezoidal speed: a cosine ramp up to the peak speed ``V_z`` in
``T_z1``, cruise until ``T_z2`` (both from the start of the descent), a cosine ramp down whose
length ``T_z3 = 2 (H / V_z - T_z2 + T_z1 / 2)`` makes the descent exactly ``H``. Position,
velocity and acceleration are continuous everywhere (velocity and acceleration are zero at
touchdown and lift-off).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from legid_ros.core.errors import BadInputError

TWO_PI = 2.0 * np.pi


@dataclass(frozen=True)
class Cycloid:
    """Improved-cycloid parameters.

    Attributes:
        stride: Stride length S [m].
        lift: Lift height H [m].
        t_stance: Stance duration [s].
        t_swing: Swing duration [s].
        vz: Peak descent speed V_z [m/s].
        tz1: End of the descent's acceleration, from the start of the descent [s].
        tz2: End of the descent's cruise, from the start of the descent [s].
        x_center: Stride centre in the hip frame [m].
        z_ground: Foot height in stance in the hip frame [m] (negative).
    """

    stride: float = 0.2
    lift: float = 0.08
    t_stance: float = 0.2
    t_swing: float = 0.2
    vz: float = 1.1
    tz1: float = 0.025
    tz2: float = 0.07
    x_center: float = 0.0
    z_ground: float = -0.75

    def __post_init__(self):
        vals = [self.stride, self.lift, self.t_stance, self.t_swing, self.vz, self.tz1, self.tz2,
                self.x_center, self.z_ground]
        if not all(np.isfinite(vals)):
            raise BadInputError(f'cycloid parameters must be finite: {self}')
        if min(self.t_stance, self.t_swing, self.vz, self.tz1) <= 0 or self.lift < 0:
            raise BadInputError('cycloid: stance, swing, V_z and T_z1 must be > 0, H >= 0')
        if not self.tz1 < self.tz2:
            raise BadInputError(f'cycloid: need T_z1 < T_z2, got {self.tz1} s, {self.tz2} s')
        if self.lift > 0 and self.tz3 <= 0:
            raise BadInputError(f'cycloid: V_z = {self.vz} m/s is too fast to descend H = '
                                f'{self.lift} m with T_z1 = {self.tz1} s, T_z2 = {self.tz2} s')
        if self.lift > 0 and self.t_rise <= 0:
            raise BadInputError(f'cycloid: the descent ({self.t_descent:.4f} s) does not fit '
                                f'in the swing ({self.t_swing} s); raise V_z or shorten T_z2')

    @property
    def period(self) -> float:
        """Cycle period [s]."""
        return self.t_stance + self.t_swing

    @property
    def tz3(self) -> float:
        """Length of the descent's deceleration ramp [s]."""
        return 2.0 * (self.lift / self.vz - self.tz2 + 0.5 * self.tz1)

    @property
    def t_descent(self) -> float:
        """Descent duration T_z2 + T_z3 [s]."""
        return self.tz2 + self.tz3

    @property
    def t_rise(self) -> float:
        """Rise duration (swing minus descent) [s]."""
        return self.t_swing - self.t_descent

    def evaluate(self, t: np.ndarray):
        """Foot position, velocity and acceleration at times t (wrapped to one cycle).

        Args:
            t: Times from a touchdown [s], any shape.

        Returns:
            (pos, vel, acc), each of shape t.shape + (2,) with (x, z) in the hip frame
            [m, m/s, m/s^2].
        """
        t = np.mod(np.asarray(t, float), self.period)
        s, h = self.stride, self.lift
        stance = t < self.t_stance
        # x: cycloid on each phase
        ts, tw = self.t_stance, self.t_swing
        u = np.where(stance, t / ts, (t - ts) / tw)
        dur = np.where(stance, ts, tw)
        sign = np.where(stance, -1.0, 1.0)
        x = sign * s * (u - np.sin(TWO_PI * u) / TWO_PI) - sign * 0.5 * s + self.x_center
        vx = sign * s / dur * (1.0 - np.cos(TWO_PI * u))
        ax = sign * s / dur ** 2 * TWO_PI * np.sin(TWO_PI * u)
        z, vz, az = self._swing_z(np.where(stance, 0.0, t - ts)) if h > 0 else (
            np.zeros_like(t),) * 3
        z = np.where(stance, 0.0, z) + self.z_ground
        vz = np.where(stance, 0.0, vz)
        az = np.where(stance, 0.0, az)
        return (np.stack([x, z], -1), np.stack([vx, vz], -1), np.stack([ax, az], -1))

    def _swing_z(self, tau: np.ndarray):
        """Height above ground, its rate and acceleration during the swing (tau from lift-off)."""
        h, v = self.lift, self.vz
        tr, t1, t2, t3 = self.t_rise, self.tz1, self.tz2, self.tz3
        rise = tau < tr
        ur = np.clip(tau / tr, 0.0, 1.0)
        z_r = h * (ur - np.sin(TWO_PI * ur) / TWO_PI)
        v_r = h / tr * (1.0 - np.cos(TWO_PI * ur))
        a_r = h / tr ** 2 * TWO_PI * np.sin(TWO_PI * ur)
        d = np.clip(tau - tr, 0.0, t2 + t3)  # time into the descent
        ph1, ph2 = d < t1, d < t2
        d1 = np.clip(d, 0.0, t1)
        z1 = -v * (0.5 * d1 - t1 / TWO_PI * np.sin(np.pi * d1 / t1))
        v1 = -v * 0.5 * (1.0 - np.cos(np.pi * d1 / t1))
        a1 = -v * np.pi / (2.0 * t1) * np.sin(np.pi * d1 / t1)
        z2 = -v * 0.5 * t1 - v * (np.clip(d, t1, t2) - t1)
        w = np.clip(d - t2, 0.0, t3)
        z3 = -v * (0.5 * t1 + t2 - t1) - v * (0.5 * w + t3 / TWO_PI * np.sin(np.pi * w / t3))
        v3 = -v * 0.5 * (1.0 + np.cos(np.pi * w / t3))
        a3 = v * np.pi / (2.0 * t3) * np.sin(np.pi * w / t3)
        z_d = h + np.where(ph1, z1, np.where(ph2, z2, z3))
        v_d = np.where(ph1, v1, np.where(ph2, -v, v3))
        a_d = np.where(ph1, a1, np.where(ph2, 0.0, a3))
        return (np.where(rise, z_r, z_d), np.where(rise, v_r, v_d), np.where(rise, a_r, a_d))

    def touchdown_direction(self) -> float:
        """Angle of the foot velocity just before touchdown from the downward vertical [rad].

        Both velocity components vanish quadratically at touchdown; the limit ratio is
        ``vx / |vz| = 8 S T_z3^2 / (T_sw^3 V_z)`` (positive: the foot moves forward).
        """
        if self.lift <= 0:
            return float(np.pi / 2)
        return float(np.arctan(8.0 * self.stride * self.tz3 ** 2 / (self.t_swing ** 3 * self.vz)))
