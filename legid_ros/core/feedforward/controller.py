"""PD + feedforward joint controller: ``tau = sat(tau_ff + Kp (q_d - q) + Kd (qd_d - qd))``.

The control law of the geared-leg paper (Xiao, Qian & Luo 2025, docs/references.md).

Saturation at the URDF effort limits is logged once and counted in the diagnostics.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from legid_ros.core.errors import BadInputError
from legid_ros.core.feedforward.model import FeedforwardModel
from legid_ros.core.robot import Robot

LOG = logging.getLogger(__name__)

# The gains published for the geared 3-joint leg (Xiao, Qian & Luo 2025).
GEARED_LEG_KP = (1500.0, 1000.0, 1000.0)  # [N.m/rad] hip ab/ad, hip flexion, knee
GEARED_LEG_KD = (800.0, 500.0, 500.0)  # [N.m.s/rad]


@dataclass
class PdGains:
    """Joint-space PD gains.

    Attributes:
        kp: Proportional gains [N.m/rad], (n,).
        kd: Derivative gains [N.m.s/rad], (n,).
    """

    kp: np.ndarray
    kd: np.ndarray

    def __post_init__(self):
        self.kp = np.asarray(self.kp, float).ravel()
        self.kd = np.asarray(self.kd, float).ravel()
        if self.kp.shape != self.kd.shape or np.any(self.kp < 0) or np.any(self.kd < 0):
            raise BadInputError('kp and kd must have the same length and be >= 0')

    @classmethod
    def geared_leg(cls) -> 'PdGains':
        """Published gains of the geared 3-joint leg (Xiao, Qian & Luo 2025).

        Kp = [1500, 1000, 1000] [N.m/rad], Kd = [800, 500, 500] [N.m.s/rad].
        """
        return cls(np.array(GEARED_LEG_KP), np.array(GEARED_LEG_KD))


def default_gains(robot: Robot) -> PdGains:
    """The geared leg's published gains for a 3-joint leg; else its knee gains per joint."""
    n = len(robot.actuated_joint_names)
    if n == 3:
        return PdGains.geared_leg()
    return PdGains(np.full(n, GEARED_LEG_KP[2]), np.full(n, GEARED_LEG_KD[2]))


@dataclass
class ControlOutput:
    """One controller cycle.

    Attributes:
        tau: Commanded torque after saturation [N.m], (n,).
        tau_ff: Feedforward part [N.m] (zeros without a model).
        tau_pd: PD part [N.m].
        saturated: Per joint, whether the command was clamped.
    """

    tau: np.ndarray
    tau_ff: np.ndarray
    tau_pd: np.ndarray
    saturated: np.ndarray


@dataclass
class ControllerDiagnostics:
    """Counters of a controller since construction or :meth:`PdFeedforwardController.reset`.

    Attributes:
        cycles: Cycles computed.
        saturated_cycles: Cycles with at least one joint clamped.
        saturated_per_joint: Clamps per joint.
        max_abs_error: Largest |q_d - q| seen per joint [rad].
    """

    cycles: int = 0
    saturated_cycles: int = 0
    saturated_per_joint: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    max_abs_error: np.ndarray = field(default_factory=lambda: np.zeros(0))


class PdFeedforwardController:
    """``tau = sat(tau_ff + Kp (q_d - q) + Kd (qd_d - qd))`` with saturation bookkeeping.

    Args:
        n: Number of joints.
        gains: PD gains.
        feedforward: Model for ``tau_ff``; ``None`` for PD only.
        effort_limit: Per-joint torque limit [N.m]; default none (inf).
        ff_at_measured_q: Evaluate M, C, G at the measured ``q`` (as Xiao et al. 2025 do) or
            else at ``q_d``.
    """

    def __init__(self, n: int, gains: PdGains, feedforward: Optional[FeedforwardModel] = None,
                 effort_limit: Optional[np.ndarray] = None, ff_at_measured_q: bool = True):
        if gains.kp.shape != (n,):
            raise BadInputError(f'gains have {gains.kp.size} joints, expected {n}')
        if feedforward is not None and feedforward.n != n:
            raise BadInputError(f'feedforward model has {feedforward.n} joints, expected {n}')
        self.n = n
        self.gains = gains
        self.feedforward = feedforward
        lim = np.full(n, np.inf) if effort_limit is None else np.asarray(effort_limit, float)
        if lim.shape != (n,) or np.any(lim <= 0):
            raise BadInputError(f'effort limits must be {n} positive values')
        self.effort_limit = lim
        self.ff_at_measured_q = ff_at_measured_q
        self.diagnostics = ControllerDiagnostics()
        self.last_ff_s = 0.0  # [s] compute time of the last tau_ff
        self.reset()

    @classmethod
    def for_robot(cls, robot: Robot, feedforward: Optional[FeedforwardModel] = None,
                  gains: Optional[PdGains] = None, **kwargs) -> 'PdFeedforwardController':
        """Controller with the robot's default gains and the URDF effort limits."""
        n = len(robot.actuated_joint_names)
        lim = np.asarray(robot.model.effortLimit[-n:], float)
        lim = np.where(lim > 0, lim, np.inf)
        return cls(n, gains or default_gains(robot), feedforward, lim, **kwargs)

    def reset(self) -> None:
        """Zero the diagnostics counters."""
        self.diagnostics = ControllerDiagnostics(
            saturated_per_joint=np.zeros(self.n, int), max_abs_error=np.zeros(self.n))

    def step(self, q, qd, q_d, qd_d, qdd_d) -> ControlOutput:
        """One control cycle.

        Args:
            q: Measured positions [rad]. qd: measured velocities [rad/s].
            q_d: Desired positions [rad]. qd_d: desired velocities [rad/s].
            qdd_d: Desired accelerations [rad/s^2].

        Raises:
            BadInputError: wrong sizes or non-finite values (no command is produced).
        """
        try:
            x = np.array([q, qd, q_d, qd_d, qdd_d], dtype=float)
        except ValueError as exc:
            raise BadInputError(f'controller inputs have inconsistent sizes: {exc}') from exc
        if x.shape != (5, self.n) or not np.isfinite(x).all():
            names = ('q', 'qd', 'q_d', 'qd_d', 'qdd_d')
            bad = [n for n, a in zip(names, x) if np.shape(a) != (self.n,)
                   or not np.all(np.isfinite(a))] if x.ndim == 2 else list(names)
            raise BadInputError(f'{bad} must be {self.n} finite values each')
        q, qd, q_d, qd_d, qdd_d = x
        if self.feedforward is None:
            tau_ff = np.zeros(self.n)
            self.last_ff_s = 0.0
        else:
            t0 = time.perf_counter()
            tau_ff = self.feedforward.torque_unchecked(q if self.ff_at_measured_q else q_d,
                                                       qd_d, qdd_d)
            self.last_ff_s = time.perf_counter() - t0
        err = q_d - q
        tau_pd = self.gains.kp * err + self.gains.kd * (qd_d - qd)
        raw = tau_ff + tau_pd
        tau = np.clip(raw, -self.effort_limit, self.effort_limit)
        sat = tau != raw
        d = self.diagnostics
        d.cycles += 1
        np.maximum(d.max_abs_error, np.abs(err), out=d.max_abs_error)
        if sat.any():
            if d.saturated_cycles == 0:
                LOG.warning('effort saturated on %s (further clamps only counted)',
                            [int(i) for i in np.flatnonzero(sat)])
            d.saturated_cycles += 1
            d.saturated_per_joint += sat
        return ControlOutput(tau=tau, tau_ff=tau_ff, tau_pd=tau_pd, saturated=sat)
