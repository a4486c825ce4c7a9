"""Settings of the synthetic biped run: noise model, friction, truth table, motion."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Dict, Optional, Tuple, Union

import numpy as np

# Wu & Gao's Table 2 (ZMP-feedback identification, Wu & Gao 2021), 'ZMP-based' column against
# 'CAD nominal': mass factor and axial COM shift [m] per link group (the same for both legs, so
# the ZMP reduced set holds the truth exactly).
TABLE2_TRUTH: Dict[str, Tuple[float, float]] = {
    'trunk': (14.85 / 13.87, 0.0015),
    'thigh': (3.41 / 3.67, -0.0022),
    'shank': (2.91 / 3.19, 0.0011),
    'foot': (1.26 / 2.41, -0.0018),
}

Shift = Union[float, Tuple[float, float, float]]


@dataclass
class NoiseModel:
    """Sensor imperfections added to the exact signals (all zero-able).

    Attributes:
        encoder_resolution: Joint encoder quantisation step [rad] (0: none).
        velocity_std: White noise on joint velocities [rad/s].
        effort_std: White noise on joint efforts (motor current noise) [N.m].
        torque_constant_error: Efforts are motor current times an assumed torque constant
            x gear ratio; the true one differs per joint by a factor uniform in
            ``1 +- torque_constant_error``, fixed for a run (seeded) [-].
        fsr_std: White noise on each sole-sensor normal force [N].
        ft_force_std: White noise on the 6-axis F/T forces [N].
        ft_moment_std: White noise on the 6-axis F/T moments [N.m].
        gyro_std: White noise on the IMU angular velocity [rad/s].
        acc_std: White noise on the IMU specific force [m/s^2].
        orientation_std: Small random rotation of the IMU orientation, per axis [rad].
    """

    encoder_resolution: float = 2 * np.pi / 2 ** 17  # [rad]
    velocity_std: float = 0.002  # [rad/s]
    effort_std: float = 0.2  # [N.m]
    torque_constant_error: float = 0.04
    fsr_std: float = 1.0  # [N]
    ft_force_std: float = 1.0  # [N]
    ft_moment_std: float = 0.05  # [N.m]
    gyro_std: float = 0.005  # [rad/s]
    acc_std: float = 0.05  # [m/s^2]
    orientation_std: float = 0.0005  # [rad]

    @classmethod
    def none(cls) -> 'NoiseModel':
        """Exact data: every noise term zero."""
        return cls(**{k: 0.0 for k in asdict(cls())})

    @classmethod
    def default(cls) -> 'NoiseModel':
        """The default, realistic noise levels."""
        return cls()

    def as_dict(self) -> dict:
        """Plain dict of the settings (for ``Recording.meta``)."""
        return {k: float(v) for k, v in asdict(self).items()}


@dataclass
class FrictionModel:
    """True joint friction the motors must overcome, added to the measured efforts.

    Per joint ``j`` (``s = tanh(qd / v_eps)``)::

        tau_f = k_j [(coulomb + stribeck exp(-(qd / v_stribeck)^2)) s (1 + a_j sign(qd))
                     + viscous qd] + ripple sin(2 pi ripple_per_rad q + phi_j) s

    The default is a realistic law **outside** the family the torque baseline fits
    (``f_c tanh(qd / eps) + f_v qd`` per joint): a Stribeck peak at low speed, direction
    asymmetry, a position-dependent ripple and per-joint values. ``k_j`` (uniform in
    ``1 +- spread``), ``a_j`` (uniform in ``+- asymmetry``) and ``phi_j`` are drawn once per run
    by :meth:`realize`. :meth:`simple` is the plain Coulomb + viscous law, :meth:`none` zero.

    Attributes:
        coulomb: Coulomb friction per joint [N.m] (scalar: same for all joints).
        viscous: Viscous coefficient per joint [N.m.s/rad].
        v_eps: Velocity scale of the smoothed sign [rad/s].
        stribeck: Extra static friction at zero speed (Stribeck peak) [N.m].
        v_stribeck: Stribeck velocity [rad/s].
        asymmetry: Largest relative difference between the two directions, or the per-joint
            values once realised.
        ripple: Amplitude of the position-dependent friction ripple [N.m].
        ripple_per_rad: Ripple cycles per radian of joint motion [1/rad].
        spread: Relative per-joint spread of the whole law (0 once realised).
        phase: Per-joint ripple phase [rad] (set by :meth:`realize`).
    """

    coulomb: Union[float, np.ndarray] = 1.2  # [N.m]
    viscous: Union[float, np.ndarray] = 0.8  # [N.m.s/rad]
    v_eps: float = 0.01  # [rad/s]
    stribeck: Union[float, np.ndarray] = 0.8  # [N.m]
    v_stribeck: float = 0.05  # [rad/s]
    asymmetry: Union[float, np.ndarray] = 0.15
    ripple: Union[float, np.ndarray] = 0.15  # [N.m]
    ripple_per_rad: float = 6.0  # [1/rad]
    spread: float = 0.3
    phase: Union[float, np.ndarray] = 0.0  # [rad]

    @classmethod
    def none(cls) -> 'FrictionModel':
        """No friction."""
        return cls(0.0, 0.0, stribeck=0.0, asymmetry=0.0, ripple=0.0, spread=0.0)

    @classmethod
    def simple(cls, coulomb: float = 1.2, viscous: float = 0.8) -> 'FrictionModel':
        """The plain law ``coulomb tanh(qd / v_eps) + viscous qd``, same for every joint."""
        return cls(coulomb, viscous, stribeck=0.0, asymmetry=0.0, ripple=0.0, spread=0.0)

    @property
    def is_simple(self) -> bool:
        """Whether the law is inside the Coulomb + viscous family (per joint)."""
        return not (np.any(np.asarray(self.stribeck) != 0) or np.any(
            np.asarray(self.asymmetry) != 0) or np.any(np.asarray(self.ripple) != 0))

    def realize(self, n_joints: int, rng: np.random.Generator) -> 'FrictionModel':
        """Per-joint values of one run (``spread`` and asymmetry drawn from ``rng``)."""
        k = rng.uniform(1 - self.spread, 1 + self.spread, n_joints) if self.spread > 0 \
            else np.ones(n_joints)
        a = rng.uniform(-1, 1, n_joints) * np.asarray(self.asymmetry, float)
        phase = rng.uniform(0, 2 * np.pi, n_joints)

        def per_joint(v):
            return np.broadcast_to(np.asarray(v, float), (n_joints,)).copy()
        return FrictionModel(per_joint(self.coulomb) * k, per_joint(self.viscous) * k,
                             self.v_eps, per_joint(self.stribeck) * k, self.v_stribeck,
                             per_joint(a), per_joint(self.ripple), self.ripple_per_rad, 0.0,
                             phase)

    def torque(self, qd: np.ndarray, q: Optional[np.ndarray] = None) -> np.ndarray:
        """Friction torque [N.m] for joint velocities ``qd`` (N, nj) at positions ``q``."""
        s = np.tanh(qd / self.v_eps)
        static = np.asarray(self.coulomb) + np.asarray(self.stribeck) * np.exp(
            -(qd / self.v_stribeck) ** 2)
        tau = static * s * (1 + np.asarray(self.asymmetry) * np.sign(qd)) \
            + np.asarray(self.viscous) * qd
        if q is not None and np.any(np.asarray(self.ripple) != 0):
            tau = tau + np.asarray(self.ripple) * s * np.sin(
                2 * np.pi * self.ripple_per_rad * q + np.asarray(self.phase))
        return tau

    def as_dict(self) -> dict:
        """Plain dict of the settings (for ``Recording.meta``)."""
        return {'coulomb_Nm': np.asarray(self.coulomb, float).tolist(),
                'viscous_Nms_per_rad': np.asarray(self.viscous, float).tolist(),
                'v_eps_rad_s': float(self.v_eps),
                'stribeck_Nm': np.asarray(self.stribeck, float).tolist(),
                'v_stribeck_rad_s': float(self.v_stribeck),
                'asymmetry': np.asarray(self.asymmetry, float).tolist(),
                'ripple_Nm': np.asarray(self.ripple, float).tolist(),
                'ripple_per_rad': float(self.ripple_per_rad), 'spread': float(self.spread),
                'phase_rad': np.asarray(self.phase, float).tolist()}


@dataclass
class SyntheticConfig:
    """Everything that defines one synthetic run of the ZMP-identification excitation.

    Attributes:
        duration_s: Length of the run [s].
        rate_hz: Sample rate of every signal [Hz].
        seed: Seed of the random targets and the noise.
        noise: Sensor noise model.
        truth: Per link group or link name: (mass factor, COM shift [m]). A scalar shift is
            along the group's axis (keeps the ZMP reduced set of Wu & Gao 2021 exact); a
            3-vector is in the link frame.
        friction: Joint friction added to the efforts.
        zmp_margin: Smallest distance kept between the ZMP and the sole edge [m].
        speed_scale: Multiplies the motion speed (2: segments twice as fast).
        segment_s: Range of the nominal duration of one left-foot move [s].
        knots_per_segment: IK solutions per move (joint spline knots).
        robot: Built-in robot name.
        protocol: 'right' (single support on the right foot, Wu & Gao 2021) or 'swap' (the
            right, then a double-support transfer, then the left: :mod:`.swap`).
        payload_kg: Mass added to the trunk at ``payload_at_s`` (0: none) [kg].
        payload_at_s: Time of the run when the payload is added [s].
        imu_yaw_offset_deg: Heading error of the IMU's orientation [deg].
        imu_yaw_drift_deg_s: Heading drift of the IMU's orientation [deg/s].
    """

    duration_s: float = 95.0  # [s]
    rate_hz: float = 1000.0  # [Hz]
    seed: int = 0
    noise: NoiseModel = field(default_factory=NoiseModel)
    truth: Dict[str, Tuple[float, Shift]] = field(default_factory=lambda: dict(TABLE2_TRUTH))
    friction: FrictionModel = field(default_factory=FrictionModel)
    zmp_margin: float = 0.015  # [m]
    speed_scale: float = 1.0
    segment_s: Tuple[float, float] = (2.0, 4.0)  # [s]
    knots_per_segment: int = 4
    robot: str = 'biped'
    protocol: str = 'right'
    payload_kg: float = 0.0  # [kg]
    payload_at_s: float = 0.0  # [s]
    imu_yaw_offset_deg: float = 0.0  # [deg]
    imu_yaw_drift_deg_s: float = 0.0  # [deg/s]
