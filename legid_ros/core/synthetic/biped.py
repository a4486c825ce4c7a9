"""Exact synthetic recording of the biped doing the ZMP-identification excitation.

The protocol of Wu & Gao 2021: single support on the right foot, the left foot moved.
"""

from __future__ import annotations

import sys
from typing import Optional

import numpy as np
import pinocchio as pin

from legid_ros.core.errors import BadInputError, SolverError
from legid_ros.core.identification.rows.foot_ft import feet_regressors, foot_parameters
from legid_ros.core.inertial import get_parameters, parameter_names, set_parameters
from legid_ros.core.recording import Recording
from legid_ros.core.robot import Robot, load_robot
from legid_ros.core.synthetic.config import NoiseModel, SyntheticConfig
from legid_ros.core.synthetic.dynamics import contact_dynamics, corner_forces
from legid_ros.core.synthetic.motion import guard_zmp, plan_knots
from legid_ros.core.synthetic.truth import perturbed_truth, truth_as_dict


def _check_config(cfg: SyntheticConfig) -> None:
    if not (np.isfinite(cfg.duration_s) and cfg.duration_s > 0):
        raise BadInputError(f'duration must be > 0 s, got {cfg.duration_s}')
    if not (np.isfinite(cfg.rate_hz) and cfg.rate_hz > 0):
        raise BadInputError(f'rate must be > 0 Hz, got {cfg.rate_hz}')
    if not cfg.speed_scale > 0:
        raise BadInputError(f'speed scale must be > 0, got {cfg.speed_scale}')
    if not 0 <= cfg.zmp_margin < 0.04:
        raise BadInputError(f'zmp margin must be in [0, 0.04) m, got {cfg.zmp_margin}')


def _rotate_quat(quat: np.ndarray, rotvec: np.ndarray) -> np.ndarray:
    """Quaternions [x, y, z, w] composed with small body-frame rotations."""
    out = np.empty_like(quat)
    for k in range(len(quat)):
        rot = pin.Quaternion(quat[k, 3], *quat[k, :3]).matrix() @ pin.exp3(rotvec[k])
        out[k] = pin.Quaternion(rot).coeffs()
    return out


def _add_noise(rec: Recording, noise: NoiseModel, rng: np.random.Generator,
               seed: int = 0) -> None:
    """Apply the noise model to the measured signals, in place (``seed``: torque constants)."""
    def white(shape, std):
        return rng.normal(0.0, std, shape) if std > 0 else np.zeros(shape)

    if noise.encoder_resolution > 0:
        rec.q = np.round(rec.q / noise.encoder_resolution) * noise.encoder_resolution
    rec.qd = rec.qd + white(rec.qd.shape, noise.velocity_std)
    if noise.torque_constant_error > 0:
        # measured effort = current x assumed constant = true torque x (assumed / true)
        gains = np.random.default_rng([seed, 3]).uniform(
            1 - noise.torque_constant_error, 1 + noise.torque_constant_error, rec.tau.shape[1])
        rec.tau = rec.tau * gains
        rec.meta['torque_constant_gains'] = gains.tolist()
    rec.tau = rec.tau + white(rec.tau.shape, noise.effort_std)
    for wrenches in (rec.foot_wrench, rec.ankle_ft):  # both read by the 6-axis F/T sensors
        for foot, w in wrenches.items():
            w = w.copy()
            w[:, :3] += white(w[:, :3].shape, noise.ft_force_std)
            w[:, 3:] += white(w[:, 3:].shape, noise.ft_moment_std)
            wrenches[foot] = w
    for foot, f in rec.fsr.items():
        rec.fsr[foot] = f + white(f.shape, noise.fsr_std)
    rec.imu_gyro = rec.imu_gyro + white(rec.imu_gyro.shape, noise.gyro_std)
    rec.imu_acc = rec.imu_acc + white(rec.imu_acc.shape, noise.acc_std)
    if noise.orientation_std > 0:
        rec.imu_quat = _rotate_quat(rec.imu_quat, white(rec.imu_gyro.shape,
                                                        noise.orientation_std))


def simulate_biped(config: Optional[SyntheticConfig] = None,
                   robot: Optional[Robot] = None, progress: Optional[bool] = None) -> Recording:
    """Exact synthetic data of the biped standing on its right foot (Wu & Gao's excitation).

    The right sole is the world frame at all times; the left foot moves between random lifted
    targets; the COM (hence the ZMP) wanders inside the sole, never closer than
    ``config.zmp_margin`` to its edge. Joint efforts are what the motors deliver (inverse
    dynamics with the true parameters, contact wrench removed) plus friction (by default a
    Stribeck + asymmetric + rippled law with per-joint values), seen through per-joint torque
    constant errors and current noise (:class:`NoiseModel`).

    Args:
        config: Run settings (default: :class:`SyntheticConfig`()).
        robot: The biped (default: ``load_robot('biped')``); its model holds the CAD
            parameters and is not modified.
        progress: Show a tqdm bar (default: for runs over 20000 samples on a TTY).

    Returns:
        The :class:`Recording`, with ground truth (``pi_true``, base motion, ``zmp_true``,
        ``qdd_true``) and ``meta``.

    Raises:
        BadInputError: Invalid settings.
        SolverError: IK or the ZMP guard failed.
    """
    cfg = config or SyntheticConfig()
    _check_config(cfg)
    robot = robot or load_robot(cfg.robot)
    if 'right' not in robot.feet or 'left' not in robot.feet:
        raise BadInputError(f'robot {robot.name!r} has no left/right feet')
    pi_cad = get_parameters(robot.model)
    pi_true = perturbed_truth(robot, cfg.truth, pi_cad)
    model = robot.model.copy()
    set_parameters(model, pi_true)
    rng = np.random.default_rng(cfg.seed)
    right = robot.feet['right']
    sole_id = robot.frame_id(right.sole_frame)
    limit = np.asarray(right.sole_size) / 2 - cfg.zmp_margin

    traj = plan_knots(robot, model, cfg.duration_s, rng, cfg.zmp_margin, cfg.speed_scale,
                      cfg.segment_s, cfg.knots_per_segment)
    rounds = guard_zmp(traj, model, sole_id, cfg.duration_s, limit - 0.001)
    n = int(round(cfg.duration_s * cfg.rate_hz))
    t = np.arange(n) / cfg.rate_hz
    show = (n > 20000 and sys.stderr.isatty()) if progress is None else progress
    for _ in range(10):
        qj, qdj, qddj = traj.evaluate(t)
        dyn = contact_dynamics(model, model.createData(), qj, qdj, qddj, sole_id,
                               robot.frame_id(robot.imu_frame), progress=show)
        outside = np.any(np.abs(dyn.zmp) > limit, axis=1)
        if not outside.any():
            break
        traj.seg_durations[np.unique(traj.segment_of(t[outside]))] *= 1.25
        rounds += 1 + guard_zmp(traj, model, sole_id, cfg.duration_s, limit - 0.001)
    else:
        raise SolverError('ZMP left the sole margin at the full rate after slowing down',
                          'zmp outside', rounds)
    rec = _assemble(robot, cfg, t, qj, qdj, qddj, dyn, pi_true, pi_cad)
    rec.meta['zmp_guard_rounds'] = rounds
    rec.meta['segments'] = int(np.searchsorted(np.cumsum(traj.seg_durations), t[-1]) + 1)
    _add_noise(rec, cfg.noise, np.random.default_rng([cfg.seed, 1]), cfg.seed)
    return rec


def _assemble(robot, cfg, t, qj, qdj, qddj, dyn, pi_true, pi_cad) -> Recording:
    """Exact Recording from the dynamics (no noise yet)."""
    model = robot.model
    right, left = robot.feet['right'], robot.feet['left']
    friction = cfg.friction.realize(qj.shape[1], np.random.default_rng([cfg.seed, 2]))
    tau = dyn.tau_motor + friction.torque(qdj, qj)
    s_m_ft = (model.frames[robot.frame_id(right.ft_frame)].placement.inverse()
              * model.frames[robot.frame_id(right.sole_frame)].placement)
    ft_wrench = dyn.wrench @ s_m_ft.toDualActionMatrix().T
    sole_place = model.frames[robot.frame_id(right.sole_frame)].placement
    corners = np.array([(sole_place.actInv(model.frames[robot.frame_id(f)].placement))
                        .translation[:2] for f in right.sensor_frames])
    fsr_r = corner_forces(dyn.wrench, corners)
    n = len(t)
    ground = {'right': ft_wrench, 'left': np.zeros((n, 6))}
    feet = [f for f in ground if robot.feet[f].ft_frame]
    regs = feet_regressors(robot, dyn.q, dyn.v, dyn.a, feet)
    # raw ankle F/T: leg-on-foot wrench = the foot's own Newton-Euler wrench - ground-on-foot
    ankle_ft = {f: regs[f] @ foot_parameters(pi_true, robot, f) - ground[f] for f in feet}
    meta = {'rate_hz': float(cfg.rate_hz), 'seed': int(cfg.seed), 'engine': 'synthetic',
            'duration_s': float(cfg.duration_s), 'noise': cfg.noise.as_dict(),
            'friction': friction.as_dict(), 'zmp_margin_m': float(cfg.zmp_margin),
            'speed_scale': float(cfg.speed_scale), 'support_foot': 'right',
            'truth_table': truth_as_dict(cfg.truth),
            'total_mass_true_kg': float(sum(pi_true[0::10]))}
    return Recording(
        robot=robot.name, t=t, joint_names=robot.actuated_joint_names, q=qj.copy(),
        qd=qdj.copy(), tau=tau, imu_quat=dyn.imu_quat, imu_gyro=dyn.imu_gyro,
        imu_acc=dyn.imu_acc,
        foot_wrench=ground, ankle_ft=ankle_ft,
        fsr={'right': fsr_r, 'left': np.zeros((n, len(left.sensor_frames)))},
        qdd_true=qddj, base_pose_true=dyn.q[:, :7].copy(), base_vel_true=dyn.v[:, :6].copy(),
        base_acc_true=dyn.a[:, :6].copy(), zmp_true=dyn.zmp, pi_true=pi_true, pi_cad=pi_cad,
        param_names=parameter_names(model), meta=meta)
