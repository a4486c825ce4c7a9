"""Exact synthetic recording of the biped doing the ZMP-identification excitation.

The protocol of Wu & Gao 2021: single support on the right foot, the left foot moved; or the
support swap (:mod:`legid_ros.core.synthetic.swap`): the right, a double-support transfer,
then the left. Optional run-time events (:mod:`legid_ros.core.synthetic.scenario`): a
payload added to the trunk mid-run, an IMU heading error.
"""

from __future__ import annotations

import sys
from typing import Optional

import numpy as np
import pinocchio as pin

from legid_ros.core.conventions.convert import matrix_quat
from legid_ros.core.errors import BadInputError, SolverError
from legid_ros.core.identification.rows.foot_ft import feet_regressors, foot_parameters
from legid_ros.core.inertial import get_parameters, parameter_names, set_parameters
from legid_ros.core.recording import Recording
from legid_ros.core.robot import Robot, load_robot
from legid_ros.core.synthetic.config import NoiseModel, SyntheticConfig
from legid_ros.core.synthetic.dynamics import contact_dynamics, corner_forces
from legid_ros.core.synthetic.motion import guard_zmp, plan_knots
from legid_ros.core.synthetic.swap import evaluate, plan_swap, swap_dynamics
from legid_ros.core.synthetic.scenario import (check_events, imu_heading_error,
                                               with_trunk_payload)
from legid_ros.core.synthetic.truth import perturbed_truth, truth_as_dict

#: Excitation protocols: single support on the right foot (Wu & Gao 2021), or the support
#: swap (right, double-support transfer, left).
PROTOCOLS = ('right', 'swap')


def _check_config(cfg: SyntheticConfig) -> None:
    if not (np.isfinite(cfg.duration_s) and cfg.duration_s > 0):
        raise BadInputError(f'duration must be > 0 s, got {cfg.duration_s}')
    if not (np.isfinite(cfg.rate_hz) and cfg.rate_hz > 0):
        raise BadInputError(f'rate must be > 0 Hz, got {cfg.rate_hz}')
    if not cfg.speed_scale > 0:
        raise BadInputError(f'speed scale must be > 0, got {cfg.speed_scale}')
    if not 0 <= cfg.zmp_margin < 0.04:
        raise BadInputError(f'zmp margin must be in [0, 0.04) m, got {cfg.zmp_margin}')
    if cfg.protocol not in PROTOCOLS:
        raise BadInputError(f'protocol must be one of {", ".join(PROTOCOLS)}, not '
                            f'{cfg.protocol!r}')
    check_events(cfg.payload_kg, cfg.payload_at_s, cfg.imu_yaw_offset_deg,
                 cfg.imu_yaw_drift_deg_s)


def _rotate_quat(quat: np.ndarray, rotvec: np.ndarray) -> np.ndarray:
    """Quaternions [x, y, z, w] composed with small body-frame rotations."""
    out = np.empty_like(quat)
    for k in range(len(quat)):
        rot = pin.Quaternion(quat[k, 3], *quat[k, :3]).matrix() @ pin.exp3(rotvec[k])
        out[k] = matrix_quat(rot)
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
    n = int(round(cfg.duration_s * cfg.rate_hz))
    t = np.arange(n) / cfg.rate_hz
    after = payload_model(robot, cfg, pi_true)
    if cfg.protocol == 'swap':
        rec = _simulate_swap(robot, cfg, model, after, rng, t, pi_true, pi_cad)
    else:
        rec = _simulate_right(robot, cfg, model, after, rng, t, pi_true, pi_cad, progress)
    _record_payload(rec, cfg, after)
    _add_noise(rec, cfg.noise, np.random.default_rng([cfg.seed, 1]), cfg.seed)
    rec.imu_quat = imu_heading_error(rec.imu_quat, rec.t, cfg.imu_yaw_offset_deg,
                                     cfg.imu_yaw_drift_deg_s)
    if cfg.imu_yaw_offset_deg or cfg.imu_yaw_drift_deg_s:
        rec.meta['imu_yaw_offset_deg'] = float(cfg.imu_yaw_offset_deg)
        rec.meta['imu_yaw_drift_deg_s'] = float(cfg.imu_yaw_drift_deg_s)
    return rec


def payload_model(robot: Robot, cfg: SyntheticConfig, pi_true: np.ndarray):
    """``(model, parameters)`` after the payload is added, or None without one."""
    if cfg.payload_kg <= 0:
        return None
    pi_after = with_trunk_payload(robot, pi_true, cfg.payload_kg)
    model = robot.model.copy()
    set_parameters(model, pi_after)
    return model, pi_after


def _record_payload(rec: Recording, cfg: SyntheticConfig, after) -> None:
    """Facts of the payload event in ``rec.meta`` (the truth after it included)."""
    if after is None:
        return
    rec.meta['payload'] = {'mass_kg': float(cfg.payload_kg), 'at_s': float(cfg.payload_at_s),
                           'link': 'trunk'}
    rec.meta['pi_true_after_payload'] = [float(v) for v in after[1]]


def _spliced(dyn, t: np.ndarray, at_s: float, compute):
    """``dyn`` with every sample from ``at_s`` [s] on replaced by ``compute(selection)``."""
    sel = np.flatnonzero(t >= at_s)
    if sel.size == 0:
        return dyn
    late = compute(sel)
    for name in ('q', 'v', 'a', 'wrench', 'tau_motor', 'tau_full', 'zmp', 'imu_quat',
                 'imu_gyro', 'imu_acc'):
        getattr(dyn, name)[sel] = getattr(late, name)
    return dyn


def _simulate_right(robot, cfg, model, after, rng, t, pi_true, pi_cad, progress) -> Recording:
    """The right-support protocol of Wu & Gao 2021."""
    right = robot.feet['right']
    sole_id = robot.frame_id(right.sole_frame)
    limit = np.asarray(right.sole_size) / 2 - cfg.zmp_margin

    traj = plan_knots(robot, model, cfg.duration_s, rng, cfg.zmp_margin, cfg.speed_scale,
                      cfg.segment_s, cfg.knots_per_segment)
    rounds = guard_zmp(traj, model, sole_id, cfg.duration_s, limit - 0.001)
    n = len(t)
    show = (n > 20000 and sys.stderr.isatty()) if progress is None else progress
    imu_id = robot.frame_id(robot.imu_frame)
    for _ in range(10):
        qj, qdj, qddj = traj.evaluate(t)
        dyn = contact_dynamics(model, model.createData(), qj, qdj, qddj, sole_id,
                               imu_id, progress=show)
        if after is not None:
            dyn = _spliced(dyn, t, cfg.payload_at_s, lambda s: contact_dynamics(
                after[0], after[0].createData(), qj[s], qdj[s], qddj[s], sole_id, imu_id))
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
    return rec


def _simulate_swap(robot, cfg, model, after, rng, t, pi_true, pi_cad) -> Recording:
    """The support-swap protocol (:mod:`legid_ros.core.synthetic.swap`)."""
    phases = plan_swap(robot, model, cfg.duration_s, rng, cfg.zmp_margin, cfg.speed_scale,
                       cfg.segment_s, cfg.knots_per_segment)
    if phases[-1].t0 > cfg.duration_s - 1.0:
        raise BadInputError(f'{cfg.duration_s:g} s is too short for the support swap: the '
                            f'left single support would start at {phases[-1].t0:.1f} s; '
                            f'give at least {phases[-1].t0 + 2.0:.0f} s')
    imu_id = robot.frame_id(robot.imu_frame)
    sw = swap_dynamics(robot, model, phases, t, imu_id)
    if after is not None:
        late = t >= cfg.payload_at_s
        if late.any():
            sw2 = swap_dynamics(robot, after[0], phases, t[late], imu_id)
            _spliced(sw.dyn, t, cfg.payload_at_s, lambda s: sw2.dyn)
            for foot in sw.sole_wrench:
                sw.sole_wrench[foot][late] = sw2.sole_wrench[foot]
    qj, qdj, qddj, _ = evaluate(phases, t)
    rec = _assemble(robot, cfg, t, qj, qdj, qddj, sw.dyn, pi_true, pi_cad,
                    sole_wrench=sw.sole_wrench)
    rec.meta['support_foot'] = 'swap'
    rec.meta['phases'] = [[p.name, round(p.t0, 6), round(p.t1, 6)] for p in phases]
    return rec


def _assemble(robot, cfg, t, qj, qdj, qddj, dyn, pi_true, pi_cad,
              sole_wrench=None) -> Recording:
    """Exact Recording from the dynamics (no noise yet).

    ``sole_wrench``: per foot, the ground-on-foot wrench at its sole origin in sole axes
    (N, 6); default: the right foot carries ``dyn.wrench`` (its sole is the world), the left
    nothing.
    """
    model = robot.model
    friction = cfg.friction.realize(qj.shape[1], np.random.default_rng([cfg.seed, 2]))
    tau = dyn.tau_motor + friction.torque(qdj, qj)
    n = len(t)
    if sole_wrench is None:
        sole_wrench = {'right': dyn.wrench, 'left': None}
    ground, fsr = {}, {}
    for foot, w in sole_wrench.items():
        spec = robot.feet[foot]
        if w is None:
            ground[foot] = np.zeros((n, 6))
            fsr[foot] = np.zeros((n, len(spec.sensor_frames)))
            continue
        s_m_ft = (model.frames[robot.frame_id(spec.ft_frame)].placement.inverse()
                  * model.frames[robot.frame_id(spec.sole_frame)].placement)
        ground[foot] = w @ s_m_ft.toDualActionMatrix().T
        sole_place = model.frames[robot.frame_id(spec.sole_frame)].placement
        corners = np.array([(sole_place.actInv(model.frames[robot.frame_id(f)].placement))
                            .translation[:2] for f in spec.sensor_frames])
        loaded = w[:, 2] > 0
        fsr[foot] = np.zeros((n, len(spec.sensor_frames)))
        fsr[foot][loaded] = corner_forces(w[loaded], corners)
    ground = {f: ground[f] for f in ('right', 'left')}
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
        fsr={'right': fsr['right'], 'left': fsr['left']},
        qdd_true=qddj, base_pose_true=dyn.q[:, :7].copy(), base_vel_true=dyn.v[:, :6].copy(),
        base_acc_true=dyn.a[:, :6].copy(), zmp_true=dyn.zmp, pi_true=pi_true, pi_cad=pi_cad,
        param_names=parameter_names(model), meta=meta)
