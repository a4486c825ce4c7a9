"""Closed-loop joint tracking of a fixed-base leg in MuJoCo, in torque mode at 1 kHz.

The plant is real MuJoCo physics built by :func:`legid_ros.core.sim.mjcf.build_spec` (true
inertials, joint armature = reflected rotor inertia). Its joint friction follows a law no
Coulomb-viscous model captures exactly (:class:`PlantFriction`): the Coulomb part is MuJoCo's
``frictionloss`` (real stiction through the constraint solver), the viscous part is joint
``damping``, and a Stribeck bump plus a quadratic drag are applied each physics step as a
velocity-dependent generalised force.

The controller (:class:`legid_ros.core.feedforward.PdFeedforwardController`) runs at the
control rate; between cycles its command is held (zero-order hold) over the physics sub-steps.

``damping='implicit'`` (default) applies the ``-Kd qd`` term of the PD through the actuator's
velocity bias, which MuJoCo's ``implicitfast`` integrator treats implicitly, as a drive's fast
inner loop does; the controller sends ``tau_ff + Kp (q_d - q) + Kd qd_d`` at 1 kHz. With
seed 001's ``Kd`` (500-800 N.m.s/rad) on this leg's ~0.03-0.1 kg.m^2 joint inertia, a purely
sampled 1 kHz derivative term has ``Kd T / J`` of 5-25, far beyond the stability bound of
about 2, so ``damping='explicit'`` is only usable with much smaller gains.
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

try:
    from tqdm import tqdm
except ImportError:  # pragma: no cover
    tqdm = None


@dataclass
class PlantFriction:
    """True joint friction of the simulated plant, per joint (arrays of length n).

    ``tau_f = [f_c + (f_s - f_c) exp(-(|v|/v_s)^2)] sign(v) + f_v v + f_q v |v|``

    Attributes:
        f_c: Coulomb level (MuJoCo frictionloss) [N.m].
        f_s: Static (breakaway) level [N.m].
        v_s: Stribeck velocity [rad/s].
        f_v: Viscous coefficient (MuJoCo damping) [N.m.s/rad].
        f_q: Quadratic drag coefficient [N.m.s^2/rad^2].
        v_eps: Smoothing velocity of the applied Stribeck term's sign [rad/s].
    """

    f_c: np.ndarray
    f_s: np.ndarray
    v_s: np.ndarray
    f_v: np.ndarray
    f_q: np.ndarray
    v_eps: float = 0.004

    def __post_init__(self):
        for name in ('f_c', 'f_s', 'v_s', 'f_v', 'f_q'):
            setattr(self, name, np.asarray(getattr(self, name), float).ravel())

    @classmethod
    def leg3(cls) -> 'PlantFriction':
        """Geared-module-like friction of seed 001's leg (hip ab/ad, hip flexion, knee)."""
        return cls(f_c=[1.2, 1.0, 0.8], f_s=[2.0, 1.7, 1.4], v_s=[0.10, 0.12, 0.10],
                   f_v=[0.6, 0.5, 0.4], f_q=[0.35, 0.3, 0.25])

    @classmethod
    def none(cls, n: int) -> 'PlantFriction':
        """No friction at all."""
        z = np.zeros(n)
        return cls(z, z, np.ones(n), z, z)

    def applied(self, qd: np.ndarray) -> np.ndarray:
        """The part applied as a generalised force: Stribeck bump and quadratic drag [N.m]."""
        v = np.asarray(qd, float)
        bump = (self.f_s - self.f_c) * np.exp(-(np.abs(v) / self.v_s) ** 2)
        return -(bump * np.tanh(v / self.v_eps) + self.f_q * v * np.abs(v))

    def __call__(self, qd: np.ndarray) -> np.ndarray:
        """The whole law while sliding (resisting sign convention: returned as the torque the
        motor must supply to overcome it) [N.m]."""
        v = np.asarray(qd, float)
        return (self.f_c * np.sign(v) + self.f_v * v) - self.applied(v)


@dataclass
class FourierTrajectory:
    """Joint trajectory ``q_i(t) = q0_i + sum_k a_ik/(k w) sin(k w t) - b_ik/(k w) cos(k w t)``.

    Attributes:
        omega: Fundamental angular frequency [rad/s].
        q0: Offsets [rad], (n,).
        a: Sine coefficients [rad/s], (n, K).
        b: Cosine coefficients [rad/s], (n, K).
    """

    omega: float
    q0: np.ndarray
    a: np.ndarray
    b: np.ndarray

    @classmethod
    def seed001_validation(cls) -> 'FourierTrajectory':
        """A 3-harmonic validation trajectory for leg3 at seed 001's omega = 2.4 rad/s.

        Seed 001's coefficients were lost in extraction; these give amplitudes of 0.2-0.5 rad,
        peak speeds of 1-2.5 rad/s and slow reversals, inside the joint limits.
        """
        a = np.array([[0.50, 0.20, -0.15], [0.80, -0.30, 0.20], [0.90, 0.35, -0.25]])
        b = np.array([[0.20, -0.15, 0.10], [-0.30, 0.25, 0.15], [0.35, -0.20, 0.10]])
        return cls(2.4, np.array([0.0, 0.3, 1.3]), a, b)

    def sample(self, t) -> tuple:
        """``(q, qd, qdd)`` at times ``t`` [s]: shapes (n,) for a scalar, else (N, n)."""
        t_arr = np.atleast_1d(np.asarray(t, float))
        k = np.arange(1, self.a.shape[1] + 1)
        wk = self.omega * k
        s, c = np.sin(np.outer(t_arr, wk)), np.cos(np.outer(t_arr, wk))
        q = self.q0 + s @ (self.a / wk).T - c @ (self.b / wk).T
        qd = c @ self.a.T + s @ self.b.T
        qdd = -s @ (self.a * wk).T + c @ (self.b * wk).T
        if np.ndim(t) == 0:
            return q[0], qd[0], qdd[0]
        return q, qd, qdd


@dataclass
class LegSimConfig:
    """Settings of the simulated leg.

    Attributes:
        physics_dt_s: MuJoCo time step [s].
        control_rate_hz: Controller rate [Hz] (the command is held between cycles).
        damping: 'implicit' (Kd qd in the actuator, integrated implicitly) or 'explicit'.
        friction: True plant friction (default :meth:`PlantFriction.leg3` for 3 joints).
        armature: Joint-side rotor inertia [kg.m^2] (default from the description YAML).
        pi_true: True standard inertial parameters (default the URDF's).
        encoder_resolution: Quantisation of the measured positions [rad].
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
        self.friction = cfg.friction or (PlantFriction.leg3() if n == 3
                                         else PlantFriction.none(n))
        arm = reflected_rotor_inertia(robot) if cfg.armature is None else cfg.armature
        self.armature = np.asarray(arm, float)
        names = self.joint_names
        opts = SimOptions(timestep_s=cfg.physics_dt_s, kp=0.0, kv=0.0,
                          friction=dict(zip(names, self.friction.f_c)),
                          damping=dict(zip(names, self.friction.f_v)),
                          armature=dict(zip(names, self.armature)), floor=False)
        spec, self.info = build_spec(robot, cfg.pi_true, opts)
        spec.compiler.degree = False  # joint ranges are written in radians
        self.kd_implicit = np.zeros(n) if kd_implicit is None else np.asarray(kd_implicit, float)
        if cfg.damping not in ('implicit', 'explicit'):
            raise BadInputError(f"damping must be 'implicit' or 'explicit', not {cfg.damping!r}")
        for i, act in enumerate(spec.actuators):
            act.gaintype = mujoco.mjtGain.mjGAIN_FIXED
            act.gainprm[0] = 1.0
            act.biastype = mujoco.mjtBias.mjBIAS_AFFINE
            act.biasprm[0] = 0.0
            act.biasprm[1] = 0.0
            act.biasprm[2] = -self.kd_implicit[i] if cfg.damping == 'implicit' else 0.0
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
        """Hold ``ctrl`` [N.m] for one control period; returns the mean actuator torque."""
        d = self.data
        d.ctrl[:] = ctrl
        acc = np.zeros(self.n)
        for _ in range(self.substeps):
            d.qfrc_applied[self.vadr] = self.friction.applied(d.qvel[self.vadr])
            mujoco.mj_step(self.model, d)
            acc += d.actuator_force
        return acc / self.substeps


@dataclass
class TrackingResult:
    """One closed-loop run.

    Attributes:
        label: Case name ('pd', 'cv', 'two_step', ...).
        joint_names: Joint names.
        t: Control-cycle times [s], (N,).
        q_d, q, qd: Desired and measured positions [rad], measured velocities [rad/s], (N, n).
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
    qd: np.ndarray
    tau: np.ndarray
    tau_ff: np.ndarray
    ff_us: np.ndarray
    saturated_cycles: int = 0
    meta: Dict[str, float] = field(default_factory=dict)

    def errors(self, skip_s: float = 0.0) -> tuple:
        """``(max |e|, RMS e)`` per joint [rad], ignoring the first ``skip_s`` seconds."""
        e = (self.q_d - self.q)[self.t >= skip_s]
        return np.abs(e).max(axis=0), np.sqrt((e ** 2).mean(axis=0))


def run_tracking(robot: Robot, controller: PdFeedforwardController,
                 trajectory: FourierTrajectory, duration_s: float,
                 config: Optional[LegSimConfig] = None, label: str = '',
                 progress: bool = False) -> TrackingResult:
    """Track ``trajectory`` for ``duration_s`` with ``controller`` on the MuJoCo leg.

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
    q_log, qd_log = np.zeros((steps, n)), np.zeros((steps, n))
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
        tau_log[k] = plant.step(ctrl)
    return TrackingResult(label=label, joint_names=plant.joint_names, t=t, q_d=q_d, q=q_log,
                          qd=qd_log, tau=tau_log, tau_ff=ff_log, ff_us=ff_us,
                          saturated_cycles=controller.diagnostics.saturated_cycles,
                          meta={'control_dt_s': plant.control_dt,
                                'physics_dt_s': cfg.physics_dt_s, 'damping': cfg.damping})
