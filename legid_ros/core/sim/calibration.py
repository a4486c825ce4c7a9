"""Sensor calibration errors of a real robot, applied to a recording.

The physics gives exact actuator forces and contact forces; a real robot reports them through
calibrated sensors, each with a fixed gain error:

- joint efforts = motor current x nominal torque constant x gear ratio (Wu & Gao 2021's
  argument against torque-based identification): a per-joint torque-constant error;
- sole pressure sensors (FSR): a per-sensor gain error;
- 6-axis F/T sensors: a per-axis gain error.

The gains depend only on ``CalibrationErrors.seed`` (the robot), so every run of the same robot
carries the same errors, as on hardware.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from legid_ros.core.errors import BadInputError
from legid_ros.core.recording import Recording


@dataclass
class CalibrationErrors:
    """Relative standard deviations of the sensor gain errors.

    Attributes:
        torque_constant_std: Joint effort gain error (torque constant) [-].
        fsr_gain_std: Sole sensor gain error [-].
        ft_gain_std: F/T sensor gain error per axis [-].
        seed: Identifies the robot (same gains for every run).
    """

    torque_constant_std: float = 0.08
    fsr_gain_std: float = 0.03
    ft_gain_std: float = 0.02
    seed: int = 0

    def as_dict(self) -> dict:
        """Plain dict (for ``Recording.meta``)."""
        return {k: float(v) for k, v in dataclasses.asdict(self).items()}


def gains(n: int, std: float, seed: int, stream: int) -> np.ndarray:
    """``n`` factors ``1 + std N(0, 1)`` (normal clipped at 3 sigma), fixed by (seed, stream)."""
    if not 0.0 <= std < 0.3:
        raise BadInputError(f'gain error std must be in [0, 0.3), got {std}')
    rng = np.random.default_rng([seed, 4242, stream])
    return 1.0 + std * np.clip(rng.standard_normal(n), -3.0, 3.0)


def torque_constant_gains(n_joints: int, std: float, seed: int = 0) -> np.ndarray:
    """Per-joint factor true torque -> reported effort."""
    return gains(n_joints, std, seed, 0)


def miscalibrated(rec: Recording, errors: CalibrationErrors) -> Recording:
    """A copy of ``rec`` seen through miscalibrated sensors.

    Efforts are scaled per joint, each foot's sole sensors per sensor, each foot's F/T
    wrench per axis (the raw ankle reading by the same gains: one sensor).
    ``meta['calibration']`` records the settings.
    """
    k_tau = torque_constant_gains(len(rec.joint_names), errors.torque_constant_std, errors.seed)
    fsr, wrench, ankle = {}, {}, {}
    for i, (foot, f) in enumerate(sorted(rec.fsr.items())):
        fsr[foot] = f * gains(f.shape[1], errors.fsr_gain_std, errors.seed, 10 + i)[None, :]
    ft_gains = {foot: gains(6, errors.ft_gain_std, errors.seed, 20 + i)
                for i, foot in enumerate(sorted(rec.foot_wrench))}
    for foot, w in rec.foot_wrench.items():
        wrench[foot] = w * ft_gains[foot][None, :]
    for i, (foot, w) in enumerate(sorted(rec.ankle_ft.items())):
        k = ft_gains[foot] if foot in ft_gains else gains(6, errors.ft_gain_std, errors.seed,
                                                           30 + i)
        ankle[foot] = w * k[None, :]
    meta = dict(rec.meta)
    meta['calibration'] = errors.as_dict()
    return dataclasses.replace(rec, tau=rec.tau * k_tau[None, :], fsr=fsr, foot_wrench=wrench,
                               ankle_ft=ankle, meta=meta)
