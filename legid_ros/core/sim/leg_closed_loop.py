"""Closed-loop joint tracking of a fixed-base leg in MuJoCo, in torque mode at 1 kHz.

The plant is real MuJoCo physics built by :func:`legid_ros.core.sim.mjcf.build_spec` (true
inertials, joint armature = reflected rotor inertia). Its joint friction follows a law no
Coulomb-viscous model captures exactly (:class:`PlantFriction`, the synthetic generator's
Stribeck + viscous + ``|v|^1.5`` + ripple law): the viscous part is joint ``damping``, the rest
a velocity- and position-dependent generalised force applied each physics step; optionally the
Coulomb part is MuJoCo's ``frictionloss`` instead (constraint-based stiction).

The controller (:class:`legid_ros.core.feedforward.PdFeedforwardController`) runs at the
control rate; between cycles its command is held (zero-order hold) over the physics sub-steps.
The reference trajectories live in :mod:`legid_ros.core.sim.trajectories` (re-exported here).

``damping='implicit'`` (default) applies the ``-Kd qd`` term of the PD through the actuator's
velocity bias, which MuJoCo's ``implicitfast`` integrator treats implicitly, as a drive's fast
inner loop does; the controller sends ``tau_ff + Kp (q_d - q) + Kd qd_d`` at 1 kHz. With
the published ``Kd`` of the geared leg (500-800 N.m.s/rad, Xiao, Qian & Luo 2025) on this
leg's ~0.03-0.1 kg.m^2 joint inertia, a purely sampled 1 kHz derivative term has
``Kd T / J`` of 5-25, far beyond the stability bound of about 2, so ``damping='explicit'``
is only usable with much smaller gains.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

import mujoco
import numpy as np

from legid_ros.core.errors import BadInputError
from legid_ros.core.feedforward import PdFeedforwardController, reflected_rotor_inertia
from legid_ros.core.robot import Robot
from legid_ros.core.sim.mjcf import SimOptions, build_spec
from legid_ros.core.sim.trajectories import FourierTrajectory, SampledTrajectory

try:
    from tqdm import tqdm
except ImportError:  # pragma: no cover
    tqdm = None

__all__ = ['PlantFriction', 'LegSimConfig', 'LegPlant', 'TrackingResult', 'run_tracking',
           'FourierTrajectory', 'SampledTrajectory']


@dataclass
class PlantFriction:
    """True joint friction of the simulated plant, per joint (arrays of length n).

    ``tau_f = [f_c + (f_s - f_c) exp(-(|v|/v_s)^a)] tanh(v/v_eps) + f_v v + f_q sign(v) |v|^b
    + ripple sin(ripple_periods q)``: the law of C's synthetic leg generator
    (:class:`legid_ros.core.synthetic.leg.TrueFriction`, ``b`` = 1.5), outside every fitted
    family. ``f_v`` is joint ``damping``; the rest is an applied generalised force each
    physics step, except, with ``coulomb='frictionloss'``, ``f_c`` (MuJoCo dry friction).

    Attributes:
        f_c: Coulomb level [N.m]. f_s: static (breakaway) level [N.m].
        v_s: Stribeck velocity [rad/s]. stribeck_exp: Stribeck exponent ``a`` [-].
        f_v: Viscous coefficient [N.m.s/rad]. f_q: Coefficient of ``|v|^b`` [N.m (s/rad)^b].
        ripple: Position ripple amplitude [N.m]. ripple_periods: Its periods per radian [-].
        q_exp: Exponent ``b`` [-]. v_eps: Smoothing velocity ``tanh(v / v_eps)`` [rad/s].
        coulomb: 'applied' (the generator's law exactly: ``f_c tanh(v / v_eps)`` applied as a
            force) or 'frictionloss' (MuJoCo's constraint-based dry friction: true stiction).
    """

    f_c: np.ndarray
    f_s: np.ndarray
    v_s: np.ndarray
    f_v: np.ndarray
    f_q: np.ndarray
    stribeck_exp: np.ndarray = 2.0
    ripple: np.ndarray = 0.0
    ripple_periods: np.ndarray = 0.0
    q_exp: float = 1.5
    v_eps: float = 0.004
    coulomb: str = 'applied'

    def __post_init__(self):
        n = np.asarray(self.f_c, float).size
        for name in ('f_c', 'f_s', 'v_s', 'f_v', 'f_q', 'stribeck_exp', 'ripple',
                     'ripple_periods'):
            setattr(self, name, np.broadcast_to(np.asarray(getattr(self, name), float),
                                                (n,)).copy())

    @classmethod
    def from_description(cls, robot: Robot) -> 'PlantFriction':
        """The description YAML's ``true_friction`` table (the synthetic generator's truth)."""
        table = robot.description.get('true_friction') or {}
        names = robot.actuated_joint_names
        missing = [j for j in names if j not in table]
        if missing:
            raise BadInputError(f'description has no true_friction for joints {missing}')
        keys = ('f_c', 'f_s', 'v_s', 'f_v', 'f_q', 'stribeck_exp', 'ripple', 'ripple_periods')
        kw = {k: [float(table[j].get(k, 0.0)) for j in names] for k in keys}
        eps = [float(table[j].get('v_eps', 0.004)) for j in names]
        return cls(**kw, v_eps=float(np.mean(eps)))

    def scaled(self, k: float) -> 'PlantFriction':
        """The same law with every torque level (f_c, f_s, f_v, f_q, ripple) times ``k``."""
        return PlantFriction(k * self.f_c, k * self.f_s, self.v_s, k * self.f_v, k * self.f_q,
                             self.stribeck_exp, k * self.ripple, self.ripple_periods, self.q_exp,
                             self.v_eps, self.coulomb)

    @classmethod
    def none(cls, n: int) -> 'PlantFriction':
        """No friction at all."""
        z = np.zeros(n)
        return cls(z, z, np.ones(n), z, z)

    @property
    def frictionloss(self) -> np.ndarray:
        """MuJoCo ``frictionloss`` per joint [N.m] (zero when the Coulomb part is applied)."""
        return self.f_c if self.coulomb == 'frictionloss' else np.zeros_like(self.f_c)

    def applied(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Generalised force applied each step [N.m]: minus (bump + |v|^b term + ripple, and
        the Coulomb term ``f_c tanh(v / v_eps)`` unless it is MuJoCo's frictionloss)."""
        v = np.asarray(qd, float)
        av = np.abs(v)
        level = (self.f_s - self.f_c) * np.exp(-(av / self.v_s) ** self.stribeck_exp)
        if self.coulomb != 'frictionloss':
            level = level + self.f_c
        return -(level * np.tanh(v / self.v_eps) + self.f_q * np.sign(v) * av ** self.q_exp
                 + self.ripple * np.sin(self.ripple_periods * np.asarray(q, float)))

    def __call__(self, qd: np.ndarray, q=None) -> np.ndarray:
        """The whole law: the torque the motor supplies to overcome it [N.m] (while sliding,
        for the frictionloss variant)."""
        v = np.asarray(qd, float)
        q = np.zeros_like(v) if q is None else q
        return self.frictionloss * np.sign(v) + self.f_v * v - self.applied(q, v)


@dataclass
class LegSimConfig:
    """Settings of the simulated leg.

    Attributes:
        physics_dt_s: MuJoCo time step [s].
        control_rate_hz: Controller rate [Hz] (the command is held between cycles).
        damping: 'implicit' (Kd qd in the actuator, integrated implicitly) or 'explicit'.
        friction: True plant friction (default: the description's ``true_friction``, else
            none).
        armature: Joint-side rotor inertia [kg.m^2] (default from the description YAML).
        pi_true: True standard inertial parameters (default the URDF's).
        encoder_resolution: Quantisation of the measured positions [rad].
        torque_noise_nm: Std of the white noise on the logged (measured) torques [N.m];
            the plant itself gets the exact command.
        seed: Seed of the measurement noise.
        half_step_preview: Compensate the zero-order hold: sample the reference at the middle of
            the hold interval and extrapolate the measured position by half a period.
    """

    physics_dt_s: float = 2.5e-4
    control_rate_hz: float = 1000.0
    damping: str = 'implicit'
    friction: Optional[PlantFriction] = None
    armature: Optional[np.ndarray] = None
    pi_true: Optional[np.ndarray] = None
    encoder_resolution: float = 2 * np.pi / 2 ** 17
    half_step_preview: bool = True
    torque_noise_nm: float = 0.0
    seed: int = 0


class LegPlant:
    """A fixed-base leg in MuJoCo driven by joint torques.

    Args:
        robot: Fixed-base robot (e.g. ``load_robot('leg3', floating_base=False)``).
        config: Simulation settings.
        kd_implicit: Per-joint damping applied inside the actuator [N.m.s/rad] (implicit mode).
    """

    def __init__(self, robot: Robot, config: Optional[LegSimConfig] = None,
                 kd_implicit: Optional[np.ndarray] = None):
        if robot.floating:
            raise BadInputError('LegPlant needs a fixed-base robot (floating_base=False)')
        self.config = cfg = config or LegSimConfig()
        self.joint_names: List[str] = robot.actuated_joint_names
        n = self.n = len(self.joint_names)
        if cfg.friction is not None:
            self.friction = cfg.friction
        elif robot.description.get('true_friction'):
            self.friction = PlantFriction.from_description(robot)
        else:
            self.friction = PlantFriction.none(n)
        arm = reflected_rotor_inertia(robot) if cfg.armature is None else cfg.armature
        self.armature = np.asarray(arm, float)
        names = self.joint_names
        opts = SimOptions(timestep_s=cfg.physics_dt_s, kp=0.0, kv=0.0,
                          friction=dict(zip(names, self.friction.frictionloss)),
                          damping=dict(zip(names, self.friction.f_v)),
                          armature=dict(zip(names, self.armature)), floor=False)
        spec, self.info = build_spec(robot, cfg.pi_true, opts)
        if cfg.damping not in ('implicit', 'explicit'):
            raise BadInputError(f"damping must be 'implicit' or 'explicit', not {cfg.damping!r}")
        self.kd_implicit = np.zeros(n) if kd_implicit is None or cfg.damping == 'explicit' \
            else np.asarray(kd_implicit, float)
        for i, act in enumerate(spec.actuators):
            act.gaintype = mujoco.mjtGain.mjGAIN_FIXED
            act.gainprm[0] = 1.0
            act.biastype = mujoco.mjtBias.mjBIAS_AFFINE
            act.biasprm[0] = 0.0
            act.biasprm[1] = 0.0
            act.biasprm[2] = -self.kd_implicit[i]
        self.model = spec.compile()
        self.data = mujoco.MjData(self.model)
        self.qadr = np.array([self.model.joint(j).qposadr[0] for j in names])
        self.vadr = np.array([self.model.joint(j).dofadr[0] for j in names])
        self.substeps = max(1, int(round(1.0 / (cfg.control_rate_hz * cfg.physics_dt_s))))
        self.control_dt = self.substeps * cfg.physics_dt_s

    def reset(self, q: np.ndarray, qd: np.ndarray) -> None:
        """Put the leg at ``q`` [rad] with velocity ``qd`` [rad/s]."""
        mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[self.qadr] = q
        self.data.qvel[self.vadr] = qd
        mujoco.mj_forward(self.model, self.data)

    def measure(self) -> tuple:
        """Measured ``(q, qd)``: encoder-quantised positions and exact velocities."""
        q = self.data.qpos[self.qadr].copy()
        res = self.config.encoder_resolution
        if res > 0:
            q = np.round(q / res) * res
        return q, self.data.qvel[self.vadr].copy()

    def step(self, ctrl: np.ndarray) -> np.ndarray:
        """Hold ``ctrl`` [N.m] for one control period; returns the mean motor torque [N.m].

        With implicit damping the torque really applied over a step is
        ``ctrl - Kd qd_new`` (the end-of-step velocity), not MuJoCo's ``actuator_force``
        (``ctrl - Kd qd_old``); the difference ``Kd dt qdd`` would bias identified inertias.
        """
        d = self.data
        d.ctrl[:] = ctrl
        acc = np.zeros(self.n)
        lim = self.model.actuator_forcerange
        for _ in range(self.substeps):
            d.qfrc_applied[self.vadr] = self.friction.applied(d.qpos[self.qadr],
                                                              d.qvel[self.vadr])
            mujoco.mj_step(self.model, d)
            acc += np.clip(d.ctrl - self.kd_implicit * d.qvel[self.vadr], lim[:, 0], lim[:, 1])
        return acc / self.substeps


@dataclass
class TrackingResult:
    """One closed-loop run.

    Attributes:
        label: Case name ('pd', 'cv', 'two_step', ...).
        joint_names: Joint names.
        t: Control-cycle times [s], (N,).
        q_d, q, qd: Desired and measured positions [rad], measured velocities [rad/s], (N, n).
        q_true: True (unquantised) positions [rad], (N, n).
        tau: Mean actuator torque over each cycle [N.m], (N, n).
        tau_ff: Feedforward torque [N.m], (N, n).
        ff_us: Compute time of tau_ff per cycle [us], (N,).
        saturated_cycles: Cycles where the command was clamped.
    """

    label: str
    joint_names: List[str]
    t: np.ndarray
    q_d: np.ndarray
    q: np.ndarray
    q_true: np.ndarray
    qd: np.ndarray
    tau: np.ndarray
    tau_ff: np.ndarray
    ff_us: np.ndarray
    saturated_cycles: int = 0
    meta: Dict[str, float] = field(default_factory=dict)

    def errors(self, skip_s: float = 0.0) -> tuple:
        """``(max |e|, RMS e)`` per joint [rad] of the true position, ignoring the first
        ``skip_s`` seconds."""
        e = (self.q_d - self.q_true)[self.t >= skip_s]
        return np.abs(e).max(axis=0), np.sqrt((e ** 2).mean(axis=0))


def run_tracking(robot: Robot, controller: PdFeedforwardController,
                 trajectory, duration_s: float,
                 config: Optional[LegSimConfig] = None, label: str = '',
                 progress: bool = False) -> TrackingResult:
    """Track ``trajectory`` (anything with ``sample(t) -> (q, qd, qdd)``, e.g.
    :class:`FourierTrajectory` or :class:`SampledTrajectory`) for ``duration_s`` [s] with
    ``controller`` on the MuJoCo leg.

    The leg starts on the trajectory (position and velocity); each control cycle measures the
    state, computes the command with the core controller and holds it for one period.
    """
    cfg = config or LegSimConfig()
    implicit = cfg.damping == 'implicit'
    plant = LegPlant(robot, cfg, controller.gains.kd if implicit else None)
    steps = int(round(duration_s / plant.control_dt))
    t = np.arange(steps) * plant.control_dt
    q_d, qd_d, qdd_d = trajectory.sample(t)
    plant.reset(q_d[0], qd_d[0])
    half = 0.5 * plant.control_dt if cfg.half_step_preview else 0.0
    r_q, r_qd, r_qdd = trajectory.sample(t + half) if half else (q_d, qd_d, qdd_d)
    n = plant.n
    q_log, qd_log, q_true = np.zeros((steps, n)), np.zeros((steps, n)), np.zeros((steps, n))
    tau_log, ff_log, ff_us = np.zeros((steps, n)), np.zeros((steps, n)), np.zeros(steps)
    kd = controller.gains.kd
    controller.reset()
    it = range(steps)
    if progress and tqdm is not None:
        it = tqdm(it, desc=label or 'tracking', unit='cycle', mininterval=1.0, leave=False)
    for k in it:
        q, qd = plant.measure()
        out = controller.step(q + half * qd, qd, r_q[k], r_qd[k], r_qdd[k])
        ff_us[k] = controller.last_ff_s * 1e6
        # implicit: the actuator adds -Kd qd itself and its force range does the clamping
        ctrl = out.tau_ff + out.tau_pd + kd * qd if implicit else out.tau
        q_log[k], qd_log[k], ff_log[k] = q, qd, out.tau_ff
        q_true[k] = plant.data.qpos[plant.qadr]
        tau_log[k] = plant.step(ctrl)
    if cfg.torque_noise_nm > 0:
        tau_log += np.random.default_rng(cfg.seed).normal(0.0, cfg.torque_noise_nm,
                                                          tau_log.shape)
    return TrackingResult(label=label, joint_names=plant.joint_names, t=t, q_d=q_d, q=q_log,
                          q_true=q_true, qd=qd_log, tau=tau_log, tau_ff=ff_log, ff_us=ff_us,
                          saturated_cycles=controller.diagnostics.saturated_cycles,
                          meta={'control_dt_s': plant.control_dt,
                                'physics_dt_s': cfg.physics_dt_s, 'damping': cfg.damping})
