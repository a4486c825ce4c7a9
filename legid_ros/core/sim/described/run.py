"""MuJoCo run of a described robot doing its standing excitation, as a Recording.

The model comes from :func:`legid_ros.core.sim.mjcf.build_spec` with the *true* inertials;
1 kHz position servos track the plan of :mod:`.excitation` (planned on the CAD model, as a
robot's own controller would); soft contacts at the sole corners or the point feet carry the
robot. Recorded like the biped's physics run: joint positions, velocities and efforts (servo
forces), IMU, per foot the ground-on-foot wrench in the foot's F/T frame (its ``ft_frame``, else
its link; a point foot's force only, acting at its sole frame) and its force sensors, ``*_true``
fields from MuJoCo. Sensor noise from :class:`legid_ros.core.synthetic.config.NoiseModel`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Dict, Optional

import mujoco
import numpy as np
import pinocchio as pin

from legid_ros.core.errors import BadInputError
from legid_ros.core.inertial import get_parameters, parameter_names
from legid_ros.core.recording import Recording
from legid_ros.core.robot import Robot
from legid_ros.core.sim import readout
from legid_ros.core.sim.described.excitation import StandingPlan, plan_standing
from legid_ros.core.sim.mjcf import SimOptions, build_spec
from legid_ros.core.synthetic.config import NoiseModel


@dataclass
class DescribedRun:
    """Settings of a run, scaled to the robot's mass ``m`` [kg] where they say so.

    Attributes:
        kp_per_kg: Servo stiffness per kg of robot [N.m/rad/kg].
        kv_per_kg: Servo damping per kg [N.m.s/rad/kg].
        friction_per_kg: Joint Coulomb friction per kg [N.m/kg].
        damping_per_kg: Joint viscous damping per kg [N.m.s/rad/kg].
        armature_per_kg: Reflected rotor inertia per kg [kg.m^2/kg].
        settle_s: Standing still in the first pose before recording [s].
        fall_height_m_fraction: Trunk drop that counts as a fall, fraction of its height [-].
        contact_timeconst_s: MuJoCo contact time constant (stiffness of the soles) [s].
        kv_dt_inertia_max: When set, each joint's servo damping is at most this many times
            its joint-space inertia (armature included, at the plan's first posture) over the
            physics step [-]: ``kv_j <= ratio * I_j / dt``. A digital drive running at
            ``1 / dt`` cannot realise more (explicit damping is stable only for
            ``kv dt < 2 I``), and MuJoCo, which solves the contact forces with the inertia
            alone and then steps with ``I + kv dt`` (implicit damping), makes stance feet creep
            when ``kv dt`` dominates ``I`` (a small robot's distal joints: Solo12's knees are at
            4.2 ``I`` with the default ``kv_per_kg``). None: ``kv_per_kg`` alone.
    """

    kp_per_kg: float = 300.0
    kv_per_kg: float = 3.0
    friction_per_kg: float = 0.008
    damping_per_kg: float = 0.01
    armature_per_kg: float = 5e-4
    settle_s: float = 1.0
    fall_height_m_fraction: float = 0.3
    contact_timeconst_s: float = 0.004
    kv_dt_inertia_max: Optional[float] = None

    def options(self, mass_kg: float, joint_inertia: Optional[Dict[str, float]] = None
                ) -> SimOptions:
        """MuJoCo settings for a robot of ``mass_kg``; ``joint_inertia``: per joint, its
        joint-space inertia without armature [kg.m^2] (used with ``kv_dt_inertia_max``)."""
        kv = self.kv_per_kg * mass_kg
        if self.kv_dt_inertia_max is not None and joint_inertia:
            dt = SimOptions().timestep_s
            arm = self.armature_per_kg * mass_kg
            kv = {j: min(kv, self.kv_dt_inertia_max * (i + arm) / dt)
                  for j, i in joint_inertia.items()}
        return SimOptions(kp=self.kp_per_kg * mass_kg, kv=kv,
                          friction=self.friction_per_kg * mass_kg,
                          damping=self.damping_per_kg * mass_kg,
                          armature=self.armature_per_kg * mass_kg,
                          solref=(self.contact_timeconst_s, 1.0))


#: Mass of the built-in biped [kg], for which :class:`NoiseModel`'s force noise is set
NOISE_REFERENCE_KG = 33.0


def noise_for(robot: Robot) -> NoiseModel:
    """The default noise with its force, moment and effort terms scaled to the robot's mass
    (a 2.5 kg quadruped's sensors are not 1 N noisy; a 90 kg humanoid's are noisier)."""
    k = robot.total_mass / NOISE_REFERENCE_KG
    base = NoiseModel()
    return NoiseModel(encoder_resolution=base.encoder_resolution,
                      velocity_std=base.velocity_std, effort_std=base.effort_std * k,
                      torque_constant_error=base.torque_constant_error,
                      fsr_std=base.fsr_std * k, ft_force_std=base.ft_force_std * k,
                      ft_moment_std=base.ft_moment_std * k, gyro_std=base.gyro_std,
                      acc_std=base.acc_std, orientation_std=base.orientation_std)


def foot_bodies(robot: Robot) -> Dict[str, str]:
    """The body (MuJoCo's, named as the link) that carries each foot's sole frame."""
    names = robot.body_names
    return {f: names[robot.model.frames[robot.frame_id(ft.sole_frame)].parentJoint - 1]
            for f, ft in robot.feet.items()}


def simulate_described(robot: Robot, pi_true: np.ndarray, duration_s: float = 60.0,
                       rate_hz: float = 200.0, seed: int = 0,
                       plan: Optional[StandingPlan] = None,
                       noise: Optional[NoiseModel] = None,
                       settings: Optional[DescribedRun] = None,
                       progress: Optional[bool] = None) -> Recording:
    """Simulate ``robot`` with inertials ``pi_true`` doing its standing excitation.

    Args:
        robot: Floating-base robot from a description (scalar joints).
        pi_true: True standard parameters (10 per moving body).
        duration_s: Length [s] (when ``plan`` is None).
        rate_hz: Recording rate [Hz]; must divide the 1 kHz physics rate.
        seed: Seed of the plan and of the noise.
        plan: The excitation (default :func:`plan_standing` on the CAD model).
        noise: Sensor noise (default: :func:`noise_for` the robot).
        settings: Servo and joint settings.
        progress: tqdm bar (default: when stderr is a TTY).

    Returns:
        The :class:`Recording`; ``meta`` has ``engine='mujoco'``, the phases and
        ``fell``, ``stance_force_min_n``, ``stance_slip_max_m``, ``wall`` facts.
    """
    if not robot.has_only_scalar_joints:
        raise BadInputError('the MuJoCo run needs one position per joint (no continuous or '
                            'multi-DOF joints)')
    settings = settings or DescribedRun()
    noise = noise_for(robot) if noise is None else noise
    plan = plan or plan_standing(robot, duration_s, seed)
    opt = settings.options(robot.total_mass, joint_inertia(robot, plan.q[0])
                           if settings.kv_dt_inertia_max is not None else None)
    dt = opt.timestep_s
    sub = int(round(1.0 / (rate_hz * dt)))
    if sub < 1 or abs(sub * rate_hz * dt - 1.0) > 1e-9:
        raise BadInputError(f'rate {rate_hz} Hz must divide the physics rate {1 / dt:.0f} Hz')
    spec, info = build_spec(robot, pi_true, opt)
    model = spec.compile()
    data = mujoco.MjData(model)
    lay = readout.make_layout(model, info, foot_bodies(robot), {})
    n_steps = int(round(plan.duration_s / dt))
    q_ref = plan.joint_reference(np.arange(n_steps + 1) * dt)
    data.qpos[:] = readout.qpos_from_pinocchio(plan.q[0], lay, model.nq)
    data.ctrl[:] = q_ref[0]
    mujoco.mj_forward(model, data)
    for _ in range(int(round(settings.settle_s / dt))):
        mujoco.mj_step(model, data)
    show = sys.stderr.isatty() if progress is None else progress
    raw, wr_world = readout.track(model, data, lay, q_ref, sub, progress=show,
                                  desc=f'mujoco {robot.name}')
    return _assemble(robot, plan, lay, raw, wr_world, sub * dt, pi_true, noise, seed,
                     settings, rate_hz)


def joint_inertia(robot: Robot, q: np.ndarray) -> Dict[str, float]:
    """Per actuated joint, the diagonal of the CAD joint-space inertia matrix at ``q``
    [kg.m^2] (the links beyond the joint about its axis)."""
    model = robot.model
    mass = pin.crba(model, model.createData(), q)
    off = model.nv - len(robot.actuated_joint_names)  # the free flyer's 6, else 0
    return {name: float(mass[off + k, off + k]) for k, name in
            enumerate(robot.actuated_joint_names)}


def _foot_frames(robot: Robot, q: np.ndarray) -> Dict[str, list]:
    """Per foot and sample, the placement of its wrench frame (ft_frame, else link)."""
    model = robot.model
    data = model.createData()
    ids = {f: robot.frame_id(ft.wrench_frame) for f, ft in robot.feet.items()}
    out = {f: [] for f in ids}
    for qk in q:
        pin.framesForwardKinematics(model, data, qk)
        for f, i in ids.items():
            out[f].append(data.oMf[i].copy())
    return out


def _assemble(robot, plan, lay, raw, wr_world, period, pi_true, noise, seed, settings,
              rate_hz) -> Recording:
    n = raw['qpos'].shape[0]
    t = np.arange(n) * period
    rng = np.random.default_rng([seed, 7919])
    rd = readout.noisy_joints_and_imu(raw, lay, noise, rng)
    q, qd, tau = rd['q'], rd['qd'], rd['tau']
    imu_quat, gyro, acc = rd['imu_quat'], rd['imu_gyro'], rd['imu_acc']
    base = [readout.base_state(raw['qpos'][i], raw['qvel'][i], raw['qacc'][i], lay)
            for i in range(n)]
    pose = np.array([b[0] for b in base])
    q_full = np.hstack([pose, raw['qpos'][:, lay.qpos_adr]])
    frames = _foot_frames(robot, q_full)
    foot_wrench, fsr = {}, {}
    for f in lay.feet:
        w = np.array([readout.wrench_in_frame_of(m, wr) for m, wr in zip(frames[f],
                                                                         wr_world[f])])
        if robot.feet[f].contact == 'point' or robot.feet[f].sole_size is None:
            w[:, 3:] = 0.0
        w[:, :3] += noise.ft_force_std * rng.standard_normal((n, 3))
        if not (robot.feet[f].contact == 'point' or robot.feet[f].sole_size is None):
            w[:, 3:] += noise.ft_moment_std * rng.standard_normal((n, 3))
        foot_wrench[f] = w
        if robot.feet[f].sensor_frames:
            clean = raw['sens'][:, lay.touch_adr[f]]
            fsr[f] = clean + noise.fsr_std * rng.standard_normal(clean.shape)
    total = sum(wr_world.values())
    stance = plan.stance_at(t)
    meta = {'engine': 'mujoco', 'rate_hz': float(rate_hz), 'seed': int(seed),
            'duration_s': float(plan.duration_s), 'robot': robot.name,
            'excitation': 'standing (core.sim.described.excitation)',
            'phases': [(name, float(t0), float(t1)) for name, t0, t1, _ in plan.phases],
            # random targets beyond the robot's reach, taken part of the way
            'tempered_targets': len(plan.tempered),
            'noise': noise.as_dict()}
    meta.update(_stability(raw, lay, robot, q_full, stance, wr_world, settings))
    return Recording(robot=robot.name, t=t, joint_names=list(robot.actuated_joint_names), q=q,
                     qd=qd, tau=tau, imu_quat=imu_quat, imu_gyro=gyro, imu_acc=acc,
                     foot_wrench=foot_wrench, fsr=fsr, ankle_ft={},
                     qdd_true=raw['qacc'][:, lay.dof_adr], base_pose_true=pose,
                     base_vel_true=np.array([b[1] for b in base]),
                     base_acc_true=np.array([b[2] for b in base]),
                     zmp_true=np.array([readout.zmp_of(w) for w in total]),
                     pi_true=np.asarray(pi_true, float), pi_cad=get_parameters(robot.model),
                     param_names=parameter_names(robot.model), meta=meta)


def _stability(raw, lay, robot, q_full, stance, wr_world, settings) -> dict:
    """Fall, smallest stance-foot normal force, largest stance-foot slip."""
    a = lay.free_qpos
    z = raw['qpos'][:, a + 2]
    model = robot.model
    data = model.createData()
    ids = {f: robot.frame_id(ft.sole_frame) for f, ft in robot.feet.items()}
    pos = {f: np.zeros((len(q_full), 3)) for f in ids}
    for k, qk in enumerate(q_full):
        pin.framesForwardKinematics(model, data, qk)
        for f, i in ids.items():
            pos[f][k] = data.oMf[i].translation
    slip, fmin, swing = 0.0, np.inf, 0.0
    for f in ids:
        mask = stance[f]
        edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(int), [0]])))
        for b0, b1 in zip(edges[::2], edges[1::2]):
            b0 = min(b0 + 20, b1 - 1)  # settle after touch-down
            slip = max(slip, float(np.linalg.norm(pos[f][b0:b1, :2] - pos[f][b0, :2],
                                                  axis=1).max()))
        if mask.any():
            fmin = min(fmin, float(wr_world[f][mask, 2].min()))
        if (~mask).any():
            swing = max(swing, float(wr_world[f][~mask, 2].max()))
    drop = float(z[0] - z.min())
    return {'fell': bool(drop > settings.fall_height_m_fraction * z[0]),
            'trunk_height_drop_m': drop, 'stance_force_min_n': fmin,
            'swing_force_max_n': swing, 'stance_slip_max_m': slip}
