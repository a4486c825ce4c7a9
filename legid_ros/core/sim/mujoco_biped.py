"""ZMP-identification experiment in MuJoCo physics: the biped on its right foot, servos.

The protocol of Wu & Gao 2021 (docs/references.md); the servos track a planned excitation.

The excitation (left foot between random targets, COM between random targets inside the sole,
ZMP kept inside the sole with a margin) is planned by the synthetic planner
(:mod:`legid_ros.core.synthetic.motion`) on the **CAD** model, as a real robot's controller
would. MuJoCo then runs the robot with the **true** inertials (CAD perturbed by the config's
truth table), joint friction/damping/armature, soft contacts at the four sole corners and
1 kHz joint position servos tracking the planned joint trajectory. The free-flyer trunk is a
MuJoCo free joint: nothing holds the robot up but its right foot.

The result is a :class:`legid_ros.core.recording.Recording` like the synthetic generator's:
joint positions (encoder quantisation), velocities, efforts (= servo forces), sole corner
forces (touch sensors), ankle wrenches (ground on foot, at the F/T frame), IMU, and ``*_true``
fields from MuJoCo (truth parameters, base pose/twist/acceleration of the free joint, ZMP of
all contacts). ``meta`` carries ``engine='mujoco'`` and the stability figures (trunk height,
support-corner forces, foot slip, ``fell``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Optional

import mujoco
import numpy as np
import pinocchio as pin

from legid_ros.core.errors import BadInputError
from legid_ros.core.inertial import get_parameters, parameter_names
from legid_ros.core.recording import Recording
from legid_ros.core.robot import Robot, load_robot
from legid_ros.core.sim import readout
from legid_ros.core.sim.mjcf import SimOptions, build_spec
from legid_ros.core.sim.stability import physics_summary, stability, stance_masks
from legid_ros.core.synthetic.config import NoiseModel, SyntheticConfig
from legid_ros.core.synthetic.truth import perturbed_truth, truth_as_dict


@dataclass
class PhysicsConfig:
    """MuJoCo-only settings of a physics run (the rest comes from a SyntheticConfig).

    Attributes:
        sim: Model settings (servo gains, joint friction, contacts). ``None``: defaults with
            the joint friction of the SyntheticConfig's friction model.
        settle_s: Time the robot stands still in the start posture before recording [s].
        fall_height_m: Trunk drop below its start height that counts as a fall [m].
        fall_tilt_rad: Trunk tilt that counts as a fall [rad].
        plan_margin_m: Smallest ZMP margin the CAD plan keeps to the sole edge [m] (the larger
            of this and the SyntheticConfig's ``zmp_margin`` is used). The physics needs more
            than the synthetic data: the planner only knows CAD (the truth moves the real ZMP
            by up to ~12 mm), and an elastic 4-point sole unloads a corner as soon as
            ``|px|/a + |py|/b > 1`` (a diamond, not the planner's box).
        swing_tilt_rad: Amplitude of a slow random pitch and roll of the swing foot added to
            the plan [rad] (0: Wu & Gao's protocol, sole parallel to the ground). A flat swing
            foot moves with the ankle, so its mass cannot be told from the shank's; tilting
            it separates them.
    """

    sim: Optional[SimOptions] = None
    settle_s: float = 1.0  # [s]
    fall_height_m: float = 0.10  # [m]
    fall_tilt_rad: float = 0.35  # [rad]
    plan_margin_m: float = 0.03  # [m]
    swing_tilt_rad: float = 0.0  # [rad]


@dataclass
class Reference:
    """Servo reference: joint positions at the physics rate.

    Attributes:
        t: Times from the start of recording [s], (N,).
        q: Joint positions [rad], (N, nj), pinocchio joint order.
        phases: ``(name, t0 [s], t1 [s], stance feet)`` of a planned support swap
            (:mod:`legid_ros.core.synthetic.swap`); None for single support on the right.
    """

    t: np.ndarray
    q: np.ndarray
    phases: Optional[list] = None


def sim_options_for(config: SyntheticConfig, robot: Robot) -> SimOptions:
    """Default physics options with the config's joint friction (Coulomb -> frictionloss)."""
    names = robot.actuated_joint_names
    coul = np.broadcast_to(np.asarray(config.friction.coulomb, float), (len(names),))
    visc = np.broadcast_to(np.asarray(config.friction.viscous, float), (len(names),))
    return SimOptions(friction=dict(zip(names, coul.tolist())),
                      damping=dict(zip(names, visc.tolist())))


def plan_reference(robot: Robot, config: SyntheticConfig, dt: float,
                   margin_m: Optional[float] = None) -> Reference:
    """Plan the ZMP-identification excitation on the CAD model; sample it at the servo rate.

    Uses the synthetic planner (random targets, whole-body IK at knots, joint spline, ZMP
    guard) with the robot's CAD parameters and the ZMP margin ``margin_m`` [m] (default
    ``config.zmp_margin``). ``config.protocol`` 'swap' plans the support swap
    (:func:`legid_ros.core.synthetic.swap.plan_swap`: right, a double-support transfer, left),
    so both feet swing in turn and both are weighed by their ankle F/T.
    """
    from legid_ros.core.synthetic.motion import guard_zmp, plan_knots

    margin = config.zmp_margin if margin_m is None else float(margin_m)
    rng = np.random.default_rng(config.seed)
    t = np.arange(int(round(config.duration_s / dt)) + 1) * dt
    if config.protocol == 'swap':
        from legid_ros.core.synthetic.swap import evaluate, plan_swap
        phases = plan_swap(robot, robot.model, config.duration_s, rng, margin,
                           config.speed_scale, tuple(config.segment_s), config.knots_per_segment)
        return Reference(t=t, q=evaluate(phases, t)[0],
                         phases=[(p.name, p.t0, p.t1, p.stance) for p in phases])
    if config.protocol != 'right':
        raise BadInputError(f"protocol must be 'right' or 'swap', not {config.protocol!r}")
    traj = plan_knots(robot, robot.model, config.duration_s, rng, margin,
                      config.speed_scale, tuple(config.segment_s), config.knots_per_segment)
    limit = np.asarray(robot.feet['right'].sole_size) / 2 - margin
    guard_zmp(traj, robot.model, robot.frame_id(robot.feet['right'].sole_frame),
              config.duration_s, limit)
    spline = traj.spline()
    return Reference(t=t, q=spline(np.minimum(t, traj.knot_times[-1])))


def add_swing_tilt(robot: Robot, ref: Reference, amplitude_rad: float, seed: int,
                   swing: str = 'left') -> Reference:
    """Reference with a slow random pitch and roll of the swing foot (ankle joints).

    Each ankle joint gets a sum of three sines (0.05-0.3 Hz, random phases) scaled to peak
    ``amplitude_rad`` and faded in over the first 2 s.
    """
    if amplitude_rad <= 0:
        return ref
    rng = np.random.default_rng([seed, 777])
    q = np.array(ref.q, float)
    names = robot.actuated_joint_names
    prefix = robot.feet[swing].link.split('_')[0]
    fade = np.clip(ref.t / 2.0, 0.0, 1.0)
    for joint in (f'{prefix}_ankle_pitch', f'{prefix}_ankle_roll'):
        if joint not in names:
            continue
        f = rng.uniform(0.05, 0.3, 3)
        ph = rng.uniform(0, 2 * np.pi, 3)
        sig = np.sin(2 * np.pi * f[None, :] * ref.t[:, None] + ph[None, :]).sum(axis=1)
        q[:, names.index(joint)] += amplitude_rad * fade * sig / np.abs(sig).max()
    return Reference(t=ref.t, q=q)


def _start_state(robot: Robot, qj0: np.ndarray, support_sole: str) -> np.ndarray:
    """pinocchio configuration with the support sole at the world origin, flat."""
    model = robot.model
    data = model.createData()
    q = np.concatenate([[0, 0, 0, 0, 0, 0, 1.0], qj0])
    pin.framesForwardKinematics(model, data, q)
    q[:7] = pin.SE3ToXYZQUAT(data.oMf[robot.frame_id(support_sole)].inverse())
    return q


def simulate_biped_mujoco(config: Optional[SyntheticConfig] = None,
                          physics: Optional[PhysicsConfig] = None,
                          reference: Optional[Reference] = None,
                          robot: Optional[Robot] = None,
                          progress: Optional[bool] = None) -> Recording:
    """Run Wu & Gao's single-support experiment in MuJoCo and record the sensors.

    Args:
        config: Duration [s], recording rate [Hz] (must divide the 1 kHz physics rate), seed,
            noise model, truth table, joint friction, planner settings.
        physics: MuJoCo settings (servo gains, contacts, settle time).
        reference: Servo reference (default: :func:`plan_reference` on the CAD model).
        robot: The biped (default: the built-in ``biped``).
        progress: Show a tqdm bar (default: when stderr is a TTY).

    Returns:
        The :class:`Recording` (``meta['engine'] == 'mujoco'``).

    Raises:
        BadInputError: recording rate not a divisor of the physics rate, bad truth table.
    """
    config = config or SyntheticConfig()
    physics = physics or PhysicsConfig()
    robot = robot or load_robot(config.robot)
    if not (np.isfinite(config.duration_s) and config.duration_s > 0):
        raise BadInputError(f'duration must be > 0 s, got {config.duration_s}')
    if not {'left', 'right'} <= set(robot.feet) or not robot.floating:
        raise BadInputError(f'the MuJoCo biped run needs a floating robot with left/right feet; '
                            f'{robot.name!r} has feet {", ".join(robot.feet) or "none"}')
    opt = physics.sim or sim_options_for(config, robot)
    dt = opt.timestep_s
    sub = int(round(1.0 / (config.rate_hz * dt)))
    if sub < 1 or abs(sub * config.rate_hz * dt - 1.0) > 1e-9:
        raise BadInputError(f'rate {config.rate_hz} Hz must divide the physics rate '
                            f'{1.0 / dt:.0f} Hz')
    pi_cad = get_parameters(robot.model)
    pi_true = perturbed_truth(robot, config.truth)
    spec, info = build_spec(robot, pi_true, opt)
    model = spec.compile()
    data = mujoco.MjData(model)
    support = robot.feet['right']
    lay = readout.make_layout(model, info, {f: ft.link for f, ft in robot.feet.items()},
                              {f: ft.ft_frame for f, ft in robot.feet.items()})
    sole_sites = {f: mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, ft.sole_frame)
                  for f, ft in robot.feet.items()}
    if reference is None:
        reference = plan_reference(robot, config, dt,
                                   max(config.zmp_margin, physics.plan_margin_m))
        if reference.phases is not None and physics.swing_tilt_rad > 0:
            raise BadInputError('swing tilt is for the right-support protocol only')
        reference = add_swing_tilt(robot, reference, physics.swing_tilt_rad, config.seed)
    q_ref = np.asarray(reference.q, float)
    n_steps = int(round(config.duration_s / dt))
    if len(q_ref) < n_steps + 1:
        raise BadInputError(f'reference has {len(q_ref)} samples, need {n_steps + 1}')

    start = _start_state(robot, q_ref[0], support.sole_frame)
    data.qpos[:] = readout.qpos_from_pinocchio(start, lay, model.nq)
    data.ctrl[:] = q_ref[0]
    mujoco.mj_forward(model, data)
    for _ in range(int(round(physics.settle_s / dt))):
        mujoco.mj_step(model, data)

    wr_ft = {f: np.zeros((n_steps // sub + 1, 6)) for f in lay.feet}
    sole_pose = {f: np.zeros((n_steps // sub + 1, 12)) for f in sole_sites}


    def extra(k, data, wrenches):  # the F/T frame readings and the sole poses
        for f, w in wrenches.items():
            wr_ft[f][k] = readout.wrench_in_frame(data, lay.ft_site[f], w)
        for f, site in sole_sites.items():
            sole_pose[f][k, :3] = data.site_xpos[site]
            sole_pose[f][k, 3:] = data.site_xmat[site]
    show = sys.stderr.isatty() if progress is None else progress
    rec, wr_world = readout.track(model, data, lay, q_ref[:n_steps + 1], sub, extra, show)
    return _assemble(robot, config, physics, opt, info, lay, rec, wr_world, wr_ft, sole_pose,
                     sub * dt, pi_true, pi_cad, reference.phases)


def _assemble(robot, config, physics, opt, info, lay, rec, wr_world, wr_ft, sole_pose,
              period, pi_true, pi_cad, phases=None) -> Recording:
    """Turn the raw per-sample arrays into a Recording with noise and stability figures."""
    n = rec['qpos'].shape[0]
    t = np.arange(n) * period
    noise = config.noise if config.noise is not None else NoiseModel.none()
    rng = np.random.default_rng(config.seed + 7919)
    rd = readout.noisy_joints_and_imu(rec, lay, noise, rng)
    q, qd, tau = rd['q'], rd['qd'], rd['tau']
    imu_quat, gyro, acc = rd['imu_quat'], rd['imu_gyro'], rd['imu_acc']
    fsr, foot_wrench = {}, {}
    for f in lay.feet:
        clean = rec['sens'][:, lay.touch_adr[f]]
        fsr[f] = clean + noise.fsr_std * rng.standard_normal(clean.shape)
        fw = wr_ft[f].copy()
        fw[:, :3] += noise.ft_force_std * rng.standard_normal((n, 3))
        fw[:, 3:] += noise.ft_moment_std * rng.standard_normal((n, 3))
        foot_wrench[f] = fw
    ankle_ft = {}
    for f, (fa, ta) in lay.ft_adr.items():  # MuJoCo's own force/torque sensors at the ankle
        w = np.hstack([rec['sens'][:, fa:fa + 3], rec['sens'][:, ta:ta + 3]])
        w[:, :3] += noise.ft_force_std * rng.standard_normal((n, 3))
        w[:, 3:] += noise.ft_moment_std * rng.standard_normal((n, 3))
        ankle_ft[f] = w
    base = [readout.base_state(rec['qpos'][i], rec['qvel'][i], rec['qacc'][i], lay)
            for i in range(n)]
    total = sum(wr_world.values())
    zmp = np.array([readout.zmp_of(w) for w in total])
    stance = stance_masks(t, lay.feet, phases)
    stab = stability(robot, rec, lay, sole_pose, physics,
                     {f: rec['sens'][:, lay.touch_adr[f]] for f in lay.feet}, stance)
    meta = {'engine': 'mujoco', 'rate_hz': float(config.rate_hz), 'seed': int(config.seed),
            'duration_s': float(config.duration_s), 'physics_dt_s': float(opt.timestep_s),
            'settle_s': float(physics.settle_s),
            'support_foot': 'right' if phases is None else 'swap',
            'protocol': 'right' if phases is None else 'swap',
            'zmp_margin_m': float(max(config.zmp_margin, physics.plan_margin_m)),
            'swing_tilt_rad': float(physics.swing_tilt_rad),
            'noise': noise.as_dict(), 'truth': truth_as_dict(config.truth),
            'servo_kp': opt.kp if isinstance(opt.kp, float) else str(opt.kp),
            'servo_kv': opt.kv if isinstance(opt.kv, float) else str(opt.kv),
            'joint_friction': config.friction.as_dict(),
            'armature': opt.armature if isinstance(opt.armature, float) else str(opt.armature)}
    meta.update(stab)
    if phases is not None:
        meta['phases'] = [(name, float(t0), float(t1)) for name, t0, t1, _ in phases]
    return Recording(robot=robot.name, t=t, joint_names=list(info.joint_names), q=q, qd=qd,
                     tau=tau, imu_quat=imu_quat, imu_gyro=gyro, imu_acc=acc,
                     foot_wrench=foot_wrench, fsr=fsr, ankle_ft=ankle_ft,
                     qdd_true=rec['qacc'][:, lay.dof_adr],
                     base_pose_true=np.array([b[0] for b in base]),
                     base_vel_true=np.array([b[1] for b in base]),
                     base_acc_true=np.array([b[2] for b in base]), zmp_true=zmp,
                     pi_true=pi_true, pi_cad=pi_cad, param_names=parameter_names(robot.model),
                     meta=meta)


__all__ = ['PhysicsConfig', 'Reference', 'SimOptions', 'plan_reference', 'physics_summary',
           'simulate_biped_mujoco', 'sim_options_for', 'stability']
