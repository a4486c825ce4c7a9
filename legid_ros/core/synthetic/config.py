"""Settings of the synthetic biped run: noise model, friction, truth table, motion."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Dict, Tuple, Union

import numpy as np

# Seed 000's Table 2, 'ZMP-based' column against 'CAD nominal': mass factor and axial COM
# shift [m] per link group (the same for both legs, so the reduced set holds the truth exactly).
SEED000_TRUTH: Dict[str, Tuple[float, float]] = {
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
        effort_std: White noise on joint efforts [N.m].
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
    """Joint friction the motors must overcome, added to the measured efforts.

    ``tau_f = coulomb * tanh(qd / v_eps) + viscous * qd`` per joint.

    Attributes:
        coulomb: Coulomb friction per joint [N.m] (scalar: same for all joints).
        viscous: Viscous coefficient per joint [N.m.s/rad].
        v_eps: Velocity scale of the smoothed sign [rad/s].
    """

    coulomb: Union[float, np.ndarray] = 1.2  # [N.m]
    viscous: Union[float, np.ndarray] = 0.8  # [N.m.s/rad]
    v_eps: float = 0.01  # [rad/s]

    @classmethod
    def none(cls) -> 'FrictionModel':
        """No friction."""
        return cls(0.0, 0.0)

    def torque(self, qd: np.ndarray) -> np.ndarray:
        """Friction torque [N.m] for joint velocities ``qd`` (N, nj)."""
        return (np.asarray(self.coulomb) * np.tanh(qd / self.v_eps)
                + np.asarray(self.viscous) * qd)

    def as_dict(self) -> dict:
        """Plain dict of the settings (for ``Recording.meta``)."""
        return {'coulomb_Nm': np.asarray(self.coulomb, float).tolist(),
                'viscous_Nms_per_rad': np.asarray(self.viscous, float).tolist(),
                'v_eps_rad_s': float(self.v_eps)}


@dataclass
class SyntheticConfig:
    """Everything that defines one synthetic run of seed 000's excitation.

    Attributes:
        duration_s: Length of the run [s].
        rate_hz: Sample rate of every signal [Hz].
        seed: Seed of the random targets and the noise.
        noise: Sensor noise model.
        truth: Per link group or link name: (mass factor, COM shift [m]). A scalar shift is
            along the group's axis (keeps seed 000's reduced set exact); a 3-vector is in the
            link frame.
        friction: Joint friction added to the efforts.
        zmp_margin: Smallest distance kept between the ZMP and the sole edge [m].
        speed_scale: Multiplies the motion speed (2: segments twice as fast).
        segment_s: Range of the nominal duration of one left-foot move [s].
        knots_per_segment: IK solutions per move (joint spline knots).
        robot: Built-in robot name.
    """

    duration_s: float = 95.0  # [s]
    rate_hz: float = 1000.0  # [Hz]
    seed: int = 0
    noise: NoiseModel = field(default_factory=NoiseModel)
    truth: Dict[str, Tuple[float, Shift]] = field(default_factory=lambda: dict(SEED000_TRUTH))
    friction: FrictionModel = field(default_factory=FrictionModel)
    zmp_margin: float = 0.015  # [m]
    speed_scale: float = 1.0
    segment_s: Tuple[float, float] = (2.0, 4.0)  # [s]
    knots_per_segment: int = 4
    robot: str = 'biped'
