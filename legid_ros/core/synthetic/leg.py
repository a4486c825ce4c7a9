"""Synthetic data of the geared 3-joint leg ``leg3`` with a friction law outside every model.

Torques come from pinocchio's inverse dynamics with the *true* link parameters (CAD
perturbed), plus the reflected rotor inertias, plus :class:`TrueFriction`; the joint
torque is measured through the motor current (``tau = ratio k_t i``) with Gaussian current
noise, positions through an encoder with Gaussian noise. Velocities and accelerations are
re-derived from the filtered positions (as Zhu & Zhang do) by :func:`preprocess`. The leg is
the geared leg of the two-step identification of Xiao, Qian & Luo 2025.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

import numpy as np
import pinocchio as pin

from legid_ros.core.errors import BadInputError
from legid_ros.core.friction.models import smooth_sign
from legid_ros.core.inertial import get_parameters, link_view, pack, set_parameters, unpack
from legid_ros.core.identification.rows.drive import Drive, check_states, drive_of
from legid_ros.core.robot import Robot
from legid_ros.core.signals import butter_zero_phase, finite_differences


@dataclass
class TrueFriction:
    """Ground-truth friction of one joint (not in any fitted family).

    ``tau_f = [f_c + (f_s - f_c) exp(-(|v|/v_s)^a)] tanh(v/v_eps) + f_v v
    + f_q sgn(v)|v|^1.5 + ripple sin(n q)`` [N.m].
    """

    f_c: float
    f_s: float
    v_s: float
    stribeck_exp: float
    f_v: float
    f_q: float
    v_eps: float
    ripple: float
    ripple_periods: float

    def __call__(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        v = np.asarray(qd, float)
        av = np.abs(v)
        s = smooth_sign(v, v_scale=self.v_eps)
        mag = self.f_c + (self.f_s - self.f_c) * np.exp(-(av / self.v_s) ** self.stribeck_exp)
        return (mag * s + self.f_v * v + self.f_q * np.sign(v) * av ** 1.5
                + self.ripple * np.sin(self.ripple_periods * np.asarray(q, float)))

    def velocity_part(self, qd: np.ndarray) -> np.ndarray:
        """The velocity-dependent part only (what a sweep should measure) [N.m]."""
        return self(np.zeros_like(qd), qd)


@dataclass
class LegTruth:
    """Ground truth of the synthetic leg.

    Attributes:
        pi: True standard link parameters.
        pi_cad: CAD (URDF) standard link parameters.
        drive: Gear ratios, true rotor inertias, torque constants.
        friction: True friction law per joint.
    """

    pi: np.ndarray
    pi_cad: np.ndarray
    drive: Drive
    friction: List[TrueFriction]

    @property
    def theta(self) -> np.ndarray:
        """True ``[pi, J_rotor]``."""
        return np.concatenate([self.pi, self.drive.rotor_inertia])

    def friction_torque(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """True friction torques (N, nj) [N.m]."""
        return np.stack([f(q[:, j], qd[:, j]) for j, f in enumerate(self.friction)], axis=1)


def make_truth(robot: Robot, seed: int = 7, mass_err: float = 0.08) -> LegTruth:
    """True parameters: CAD masses scaled by up to ``1 +- mass_err``, COMs and inertias moved."""
    rng = np.random.default_rng(seed)
    pi_cad = get_parameters(robot.model)
    pi = pi_cad.copy()
    for i in range(robot.model.njoints - 1):
        m, h, i_o = unpack(link_view(pi_cad, i))
        c = h / m
        i_c = i_o - m * (c @ c * np.eye(3) - np.outer(c, c))
        m2 = m * (1 + rng.uniform(-mass_err, mass_err))
        c2 = c + rng.uniform(-0.01, 0.01, 3)
        rot = pin.exp3(rng.uniform(-0.15, 0.15, 3))
        i_c2 = rot @ (i_c * (1 + rng.uniform(-0.1, 0.1))) @ rot.T
        link_view(pi, i)[:] = pack(m2, c2, i_c2)
    drive = drive_of(robot)
    tf = robot.description.get('true_friction') or {}
    missing = [j for j in drive.joint_names if j not in tf]
    if missing:
        raise BadInputError(f'description has no true_friction for joints {missing}')
    fr = [TrueFriction(**{k: float(v) for k, v in tf[j].items()}) for j in drive.joint_names]
    return LegTruth(pi, pi_cad, drive, fr)


@dataclass
class LegData:
    """One synthetic (or measured) run of the leg.

    Attributes:
        t: Sample times [s], (N,).
        q: Measured positions [rad], (N, nj).
        tau: Measured joint torques ``ratio k_t i`` [N.m], (N, nj).
        q_true, qd_true, qdd_true: Exact states, if known.
        tau_true: Noise-free torques [N.m], if known.
        labels: Extra per-sample labels (sweep plateau index, direction, ...).
        meta: Facts (rate [Hz], noise, seed, ...).
    """

    t: np.ndarray
    q: np.ndarray
    tau: np.ndarray
    q_true: Optional[np.ndarray] = None
    qd_true: Optional[np.ndarray] = None
    qdd_true: Optional[np.ndarray] = None
    tau_true: Optional[np.ndarray] = None
    labels: dict = field(default_factory=dict)
    meta: dict = field(default_factory=dict)

    @property
    def rate(self) -> float:
        """Sample rate [Hz]."""
        return float((len(self.t) - 1) / (self.t[-1] - self.t[0]))


def true_torque(robot: Robot, truth: LegTruth, q: np.ndarray, qd: np.ndarray,
                qdd: np.ndarray) -> np.ndarray:
    """Noise-free joint torques (N, nj) [N.m]: rigid body + rotor + true friction."""
    check_states(q, qd, qdd, robot.model.nv)
    model = pin.Model(robot.model)
    set_parameters(model, truth.pi)
    model.armature = truth.drive.reflected_inertia.copy()
    data = model.createData()
    rb = np.array([pin.rnea(model, data, a, b, c) for a, b, c in zip(q, qd, qdd)])
    return rb + truth.friction_torque(q, qd)


def simulate(robot: Robot, truth: LegTruth, t: np.ndarray, q: np.ndarray, qd: np.ndarray,
             qdd: np.ndarray, seed: int = 0, current_noise: Optional[float] = None,
             position_noise: Optional[float] = None, outlier_fraction: float = 0.0,
             outlier_torque: float = 3.0, outlier_sign: str = 'positive',
             labels: Optional[dict] = None) -> LegData:
    """Measure a prescribed motion: torques through noisy currents, noisy encoder.

    Args:
        robot: The leg.
        truth: Ground truth.
        t, q, qd, qdd: Prescribed motion [s, rad, rad/s, rad/s^2].
        seed: Noise seed.
        current_noise: Current noise std [A] (default from the description).
        position_noise: Encoder noise std [rad] (default from the description).
        outlier_fraction: Fraction of samples whose torque gets a spike (all joints).
        outlier_torque: Spike magnitude scale [N.m]: uniform in [1, 2] times this.
        outlier_sign: 'positive' (a current channel glitching high, the default) or 'random'.
        labels: Per-sample labels to carry along.
    """
    ident = robot.description.get('identification') or {}
    cn = float(ident.get('current_noise_a', 0.02) if current_noise is None else current_noise)
    pn = float(ident.get('position_noise_rad', 5e-5) if position_noise is None
               else position_noise)
    rng = np.random.default_rng(seed)
    tau0 = true_torque(robot, truth, q, qd, qdd)
    gain = truth.drive.gear_ratio * truth.drive.torque_constant  # [N.m/A]
    current = tau0 / gain + rng.normal(0.0, cn, tau0.shape)
    tau = current * gain
    n = len(t)
    if outlier_fraction > 0:
        k = int(round(outlier_fraction * n))
        idx = rng.choice(n, k, replace=False)
        if outlier_sign not in ('positive', 'random'):
            raise BadInputError(f"outlier_sign must be 'positive' or 'random', "
                                f'not {outlier_sign!r}')
        spikes = rng.uniform(1, 2, (k, tau.shape[1]))
        if outlier_sign == 'random':
            spikes *= rng.choice([-1, 1], (k, tau.shape[1]))
        tau[idx] += outlier_torque * spikes
    q_meas = q + rng.normal(0.0, pn, q.shape)
    return LegData(t=np.asarray(t, float), q=q_meas, tau=tau, q_true=q, qd_true=qd,
                   qdd_true=qdd, tau_true=tau0, labels=dict(labels or {}),
                   meta={'current_noise_a': cn, 'position_noise_rad': pn, 'seed': seed,
                         'outlier_fraction': outlier_fraction, 'outlier_sign': outlier_sign})


def preprocess(data: LegData, cutoff_hz: float = 7.5, filter_torque: bool = False,
               decimate: int = 1):
    """Zero-phase 4th-order Butterworth on positions, then derivatives (Zhu & Zhang).

    Args:
        data: The run.
        cutoff_hz: Cut-off [Hz] (Zhu & Zhang: 7.5).
        filter_torque: Also filter the torques with the same filter (not for robust LS).
        decimate: Keep every ``decimate``-th sample after filtering.

    Returns:
        ``(q, qd, qdd, tau)`` arrays (N', nj).
    """
    if len(data.t) < 30:
        raise BadInputError(f'{len(data.t)} samples are too few to filter and differentiate')
    rate = data.rate
    q = butter_zero_phase(data.q, cutoff_hz, rate)
    qd, qdd = finite_differences(data.t, q)
    tau = butter_zero_phase(data.tau, cutoff_hz, rate) if filter_torque else data.tau
    edge = int(min(len(q) // 10, 0.2 * rate))  # filter edge transients
    sl = slice(edge, len(q) - edge, max(1, int(decimate)))
    return q[sl], qd[sl], qdd[sl], np.asarray(tau)[sl]
