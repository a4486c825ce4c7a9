"""Joint efforts as a real robot measures them: motor current x torque constant x gear ratio.

Seed 000's argument against torque-based identification is that the joint torque is not
measured but computed from the motor current with a nominal torque constant, whose error
(magnet temperature, manufacturing spread, gear efficiency) scales each joint's effort. The
physics gives the exact actuator forces; :func:`current_based_efforts` applies a fixed
per-joint gain error to them (the same robot in every run: the gains depend only on
``gain_seed``).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from legid_ros.core.errors import BadInputError
from legid_ros.core.recording import Recording


def torque_constant_gains(n_joints: int, gain_std: float, gain_seed: int = 0) -> np.ndarray:
    """Per-joint factor true torque -> reported effort, ``1 + N(0, gain_std)`` clipped to
    ``[1 - 3 std, 1 + 3 std]``."""
    if not 0.0 <= gain_std < 0.3:
        raise BadInputError(f'torque constant error std must be in [0, 0.3), got {gain_std}')
    rng = np.random.default_rng([gain_seed, 4242])
    dev = np.clip(rng.standard_normal(n_joints), -3.0, 3.0)
    return 1.0 + gain_std * dev


def current_based_efforts(rec: Recording, gain_std: float, gain_seed: int = 0) -> Recording:
    """A copy of ``rec`` whose efforts carry a per-joint torque-constant error.

    Args:
        rec: Recording with exact (or noisy) joint efforts [N.m].
        gain_std: Relative standard deviation of the torque constant error.
        gain_seed: Identifies the robot (same gains for every run).

    Returns:
        The copy; ``meta['effort_gains']`` holds the factors.
    """
    gains = torque_constant_gains(len(rec.joint_names), gain_std, gain_seed)
    meta = dict(rec.meta)
    meta['effort_gains'] = gains.tolist()
    meta['effort_gain_std'] = float(gain_std)
    return dataclasses.replace(rec, tau=rec.tau * gains[None, :], meta=meta)
