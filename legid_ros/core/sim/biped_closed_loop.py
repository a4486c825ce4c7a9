"""Closed-loop biped in MuJoCo, in torque mode at 1 kHz: PD with or without feedforward.

The plant is MuJoCo physics built by :func:`legid_ros.core.sim.mjcf.build_spec` with the
**true** inertials (e.g. CAD perturbed by the out-of-model truth table), a free-flyer trunk that
nothing holds but the feet, soft contacts at the sole corners, joint dry friction
(``frictionloss``), viscous damping and armature. The actuators are torque motors; the ``-Kd
qd`` part of the PD goes through the actuator's velocity bias, which MuJoCo's ``implicitfast``
integrator treats implicitly (a drive's fast inner loop), as in
:mod:`legid_ros.core.sim.leg_closed_loop`.

Each control cycle reads the joint encoders (and, if asked, the IMU orientation and the ankle
F/T wrenches), sets the feedforward's contact state from the motion's stance schedule, runs
:class:`legid_ros.core.feedforward.PdFeedforwardController` and holds its command over the
physics sub-steps. A fall is a trunk drop or tilt beyond the thresholds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

import mujoco
import numpy as np

from legid_ros.core.errors import BadInputError, LegidError
from legid_ros.core.feedforward import FloatingFeedforward, PdFeedforwardController
from legid_ros.core.robot import Robot
from legid_ros.core.sim import readout
from legid_ros.core.sim.biped_motion import BipedMotion
from legid_ros.core.sim.mjcf import SimOptions, build_spec
from legid_ros.core.sim.mujoco_biped import _start_state

try:
    from tqdm import tqdm
except ImportError:  # pragma: no cover
    tqdm = None


@dataclass
class BipedSimConfig:
    """Settings of the simulated biped.

    Attributes:
        physics_dt_s: MuJoCo time step [s].
        control_rate_hz: Controller rate [Hz] (command held between cycles).
        pi_true: True standard inertial parameters (default the URDF's).
        coulomb_nm: Joint dry friction (MuJoCo frictionloss) [N.m].
        viscous_nm_s: Joint viscous damping [N.m.s/rad].
        armature: Joint-side rotor inertia [kg.m^2].
        encoder_resolution: Quantisation of the measured positions [rad].
        fall_height_m: Trunk drop below its start height that counts as a fall [m].
        fall_tilt_rad: Trunk tilt that counts as a fall [rad].
        use_imu: Give the feedforward the IMU orientation (else: stance sole flat).
        measured_wrenches: Give the feedforward the ankle F/T wrenches of the feet loaded
            with more than ``contact_n`` (else: the contact QP over the motion's stance feet).
        contact_n: Normal force that makes a foot a stance foot with measured wrenches [N].
    """

    physics_dt_s: float = 5e-4
    control_rate_hz: float = 1000.0
    pi_true: Optional[np.ndarray] = None
    coulomb_nm: float = 0.3
    viscous_nm_s: float = 0.5
    armature: float = 0.02
    encoder_resolution: float = 2 * np.pi / 2 ** 17
    fall_height_m: float = 0.10
    fall_tilt_rad: float = 0.35
    use_imu: bool = False
    measured_wrenches: bool = False
    contact_n: float = 20.0


class BipedPlant:
    """The free-floating biped in MuJoCo driven by joint torques.

    Args:
        robot: Floating-base biped.
        config: Simulation settings.
        kd_implicit: Per-joint damping inside the actuator [N.m.s/rad].
    """

    def __init__(self, robot: Robot, config: BipedSimConfig, kd_implicit: np.ndarray):
        if not robot.floating:
            raise BadInputError('BipedPlant needs a floating-base robot')
        self.robot, self.config = robot, config
        names = self.joint_names = robot.actuated_joint_names
        opts = SimOptions(timestep_s=config.physics_dt_s, kp=0.0, kv=0.0,
                          friction=config.coulomb_nm, damping=config.viscous_nm_s,
                          armature=config.armature)
        spec, self.info = build_spec(robot, config.pi_true, opts)
        for i, act in enumerate(spec.actuators):
            act.gaintype = mujoco.mjtGain.mjGAIN_FIXED
            act.gainprm[0] = 1.0
            act.biastype = mujoco.mjtBias.mjBIAS_AFFINE
            act.biasprm[0] = 0.0
            act.biasprm[1] = 0.0
            act.biasprm[2] = -float(kd_implicit[i])
        self.model = spec.compile()
        self.data = mujoco.MjData(self.model)
        self.lay = readout.make_layout(self.model, self.info,
                                       {f: ft.link for f, ft in robot.feet.items()},
                                       {f: ft.ft_frame for f, ft in robot.feet.items()})
        if list(self.info.joint_names) != list(names):
            raise BadInputError('MuJoCo joint order differs from the model joint order')
        self.substeps = max(1, int(round(1.0 / (config.control_rate_hz * config.physics_dt_s))))
        self.control_dt = self.substeps * config.physics_dt_s

    def reset(self, q_joints: np.ndarray) -> None:
        """Put the robot at joint positions ``q_joints`` [rad], right sole at the origin."""
        mujoco.mj_resetData(self.model, self.data)
        q = _start_state(self.robot, np.asarray(q_joints, float),
                         self.robot.feet['right'].sole_frame)
        self.data.qpos[:] = readout.qpos_from_pinocchio(q, self.lay, self.model.nq)
        mujoco.mj_forward(self.model, self.data)

    def measure(self) -> tuple:
        """Encoder-quantised joint positions [rad] and exact velocities [rad/s]."""
        d, lay = self.data, self.lay
        q = d.qpos[lay.qpos_adr].copy()
        res = self.config.encoder_resolution
        if res > 0:
            q = np.round(q / res) * res
        return q, d.qvel[lay.dof_adr].copy()

    def imu_quat(self) -> np.ndarray:
        """IMU orientation ``[x, y, z, w]`` (MuJoCo framequat)."""
        a = self.lay.imu_adr[0]
        w, x, y, z = self.data.sensordata[a:a + 4]
        return np.array([x, y, z, w])

    def foot_wrenches(self) -> Dict[str, np.ndarray]:
        """Ground-on-foot wrench per foot at its F/T frame ``[f, n]`` [N, N.m]."""
        d, lay = self.data, self.lay
        return {f: readout.wrench_in_frame(d, lay.ft_site[f],
                                           readout.ground_wrench_world(d, lay, f))
                for f in lay.feet}

    def trunk(self) -> tuple:
        """Trunk height [m] and tilt from the vertical [rad]."""
        a = self.lay.free_qpos
        w, x, y, _z = self.data.qpos[a + 3:a + 7]
        up_z = 1.0 - 2.0 * (x * x + y * y)
        return float(self.data.qpos[a + 2]), float(np.arccos(np.clip(up_z, -1.0, 1.0)))

    def step(self, ctrl: np.ndarray) -> None:
        """Hold ``ctrl`` [N.m] (minus the actuator's implicit ``Kd qd``) for one period."""
        self.data.ctrl[:] = ctrl
        for _ in range(self.substeps):
            mujoco.mj_step(self.model, self.data)


@dataclass
class BipedTrackingResult:
    """One closed-loop run of the biped.

    Attributes:
        label: Case name ('pd', 'urdf', 'identified').
        joint_names: Joint names.
        t: Control-cycle times [s], (N,).
        q_d: Desired positions [rad], (N, n). q_true: true positions [rad], (N, n).
        tau: Commanded torque before the actuator's implicit damping [N.m], (N, n).
        tau_ff: Feedforward torque [N.m], (N, n).
        ff_us: Feedforward compute time per cycle incl. the contact QP [us], (N,).
        single: Whether each cycle is in single support.
        trunk_height_m, trunk_tilt_rad: Trunk height [m] and tilt [rad], (N,).
        fell: Whether the trunk dropped or tilted beyond the thresholds.
        ff_failures: Cycles whose feedforward raised (the previous one was held).
        saturated_cycles: Cycles with a clamped command.
    """

    label: str
    joint_names: List[str]
    t: np.ndarray
    q_d: np.ndarray
    q_true: np.ndarray
    tau: np.ndarray
    tau_ff: np.ndarray
    ff_us: np.ndarray
    single: np.ndarray
    trunk_height_m: np.ndarray
    trunk_tilt_rad: np.ndarray
    fell: bool
    ff_failures: int = 0
    saturated_cycles: int = 0
    meta: Dict[str, object] = field(default_factory=dict)

    def single_support_max_error(self, joints: Optional[List[str]] = None) -> Dict[str, float]:
        """max |q_d - q_true| per joint during single support [rad] (NaN if the run never
        reached single support, e.g. it fell before)."""
        joints = joints or self.joint_names
        e = np.abs(self.q_d - self.q_true)[self.single]
        if not len(e):
            return {j: float('nan') for j in joints}
        return {j: float(e[:, self.joint_names.index(j)].max()) for j in joints}


def run_biped(robot: Robot, controller: PdFeedforwardController, motion: BipedMotion,
              config: Optional[BipedSimConfig] = None, label: str = '',
              progress: bool = False) -> BipedTrackingResult:
    """Track ``motion`` with ``controller`` on the MuJoCo biped (see the module docstring).

    The robot starts at the motion's first posture; each cycle measures, sets the contact
    state of a :class:`FloatingFeedforward` (if the controller has one), computes the command
    and holds it for one control period. A feedforward that raises (e.g. an infeasible contact
    QP) is counted and its previous value held.
    """
    cfg = config or BipedSimConfig()
    kd = controller.gains.kd
    plant = BipedPlant(robot, cfg, kd)
    dt = plant.control_dt
    steps = int(round(motion.t[-1] / dt)) + 1
    plant.reset(motion.q[0])
    half = 0.5 * dt
    ff = controller.feedforward
    floating = isinstance(ff, FloatingFeedforward)
    n = len(plant.joint_names)
    logs = {k: np.zeros((steps, n)) for k in ('q_d', 'q_true', 'tau', 'tau_ff')}
    ff_us, single = np.zeros(steps), np.zeros(steps, bool)
    height, tilt = np.zeros(steps), np.zeros(steps)
    failures, held = 0, np.zeros(n)
    controller.reset()
    it = range(steps)
    if progress and tqdm is not None:
        it = tqdm(it, desc=label or 'biped', unit='cycle', mininterval=1.0, leave=False)
    h0 = plant.trunk()[0]
    for k in it:
        t = k * dt
        q, qd = plant.measure()
        r_q, r_qd, r_qdd = motion.sample(t + half)
        stance = motion.stance(t)
        single[k] = len(stance) == 1
        if floating:
            wrenches = plant.foot_wrenches() if cfg.measured_wrenches else None
            if wrenches is not None:  # a foot still (or already) loaded is a stance foot
                loaded = tuple(f for f in ('left', 'right') if wrenches[f][2] > cfg.contact_n)
                stance = loaded or stance
            ff.set_contacts(stance, wrenches,
                            base_quat=plant.imu_quat() if cfg.use_imu else None)
        try:
            out = controller.step(q + half * qd, qd, r_q, r_qd, r_qdd)
            held = out.tau_ff
        except LegidError:
            failures += 1
            controller.feedforward = None
            out = controller.step(q + half * qd, qd, r_q, r_qd, r_qdd)
            controller.feedforward = ff
            out.tau_ff[:] = held
        ff_us[k] = controller.last_ff_s * 1e6
        ctrl = out.tau_ff + out.tau_pd + kd * qd
        logs['q_d'][k], logs['tau'][k], logs['tau_ff'][k] = motion.sample(t)[0], ctrl, out.tau_ff
        logs['q_true'][k] = plant.data.qpos[plant.lay.qpos_adr]
        height[k], tilt[k] = plant.trunk()
        plant.step(ctrl)
        if h0 - height[k] > cfg.fall_height_m or tilt[k] > cfg.fall_tilt_rad:
            steps = k + 1
            break
    cut = slice(0, steps)
    fell = bool(h0 - height[:steps].min() > cfg.fall_height_m
                or tilt[:steps].max() > cfg.fall_tilt_rad)
    return BipedTrackingResult(
        label=label, joint_names=list(plant.joint_names), t=np.arange(steps) * dt,
        q_d=logs['q_d'][cut], q_true=logs['q_true'][cut], tau=logs['tau'][cut],
        tau_ff=logs['tau_ff'][cut], ff_us=ff_us[cut], single=single[cut],
        trunk_height_m=height[cut], trunk_tilt_rad=tilt[cut], fell=fell, ff_failures=failures,
        saturated_cycles=controller.diagnostics.saturated_cycles,
        meta={'control_dt_s': dt, 'physics_dt_s': cfg.physics_dt_s,
              'use_imu': cfg.use_imu, 'measured_wrenches': cfg.measured_wrenches})
