"""The fixed-base geared leg ``leg3`` case of ``legid bench peers``: recordings and our side.

Recordings come from the MuJoCo leg (:mod:`legid_ros.core.sim.leg_closed_loop`), the plant of
``legid bench feedforward``: true inertials (CAD perturbed, :func:`legid_ros.core.synthetic.
leg.make_truth`), armature = true reflected rotor inertia, the description's friction law
(Stribeck + viscous + ``|v|^1.5`` + ripple: outside both tools' friction models), torque noise
of the description's current noise, under PD + CAD feedforward at 1 kHz. Our two-step
identification (Xiao, Qian & Luo 2025) also gets one constant-speed sweep per joint; FIGAROH
has no use for sweeps and gets the excitation only, as does our unified method.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Dict, Tuple

import numpy as np

from legid_ros.core.feedforward import (FeedforwardModel, PdFeedforwardController,
                                        reflected_rotor_inertia)
from legid_ros.core.friction.fitting import fit_model
from legid_ros.core.friction.models import JointFriction
from legid_ros.core.friction.sweep import SweepPlan, extract_friction, sweep_trajectory
from legid_ros.core.identification.fixed_base import (identify_two_step, leg_context,
                                                      relative_rms, unified_cv,
                                                      unified_stribeck)
from legid_ros.core.robot import Robot
from legid_ros.core.sim.leg_closed_loop import (FourierTrajectory, LegSimConfig, PlantFriction,
                                                SampledTrajectory, run_tracking)
from legid_ros.core.synthetic.leg import LegData, LegTruth, make_truth, preprocess

SWEEP_SPEEDS = (0.02, 0.04, 0.07, 0.1, 0.2, 0.3, 0.5, 1.2, 2.0, 3.0)  # [rad/s]
# particle swarm of the piecewise friction fit (library default 40 x 150): the same held-out
# error to 0.1 % on this leg in a third of the time
PIECEWISE_PSO = {'n_particles': 20, 'iters': 60}
RATE_HZ = 1000.0  # [Hz] control and logging rate of the MuJoCo leg


@dataclass
class LegRecordings:
    """Everything recorded on the MuJoCo leg.

    Attributes:
        truth: The plant's true parameters.
        train: Excitation run (identification data) at 1 kHz.
        heldout: Held-out run (another random excitation).
        sweeps: Per joint ``(speed [rad/s], friction torque [N.m])`` from the sweeps.
        sim_s: Simulation wall time [s].
    """

    truth: LegTruth
    train: LegData
    heldout: LegData
    sweeps: list
    sim_s: float


def _random_excitation(robot: Robot, seed: int) -> FourierTrajectory:
    lo, hi = robot.model.lowerPositionLimit, robot.model.upperPositionLimit
    period = float((robot.description.get('identification') or {})
                   .get('excitation_period_s', 5.0))
    return FourierTrajectory.random(0.5 * (lo + hi),
                                    0.75 * 0.5 * (hi - lo) * np.array([0.8, 0.6, 0.6]),
                                    2 * np.pi / period, 5, qd_max=[3.0, 3.0, 3.0], seed=seed)


def record(robot: Robot, excitation_s: float, heldout_s: float, seed: int,
           sweep_speeds=SWEEP_SPEEDS) -> LegRecordings:
    """Record the sweeps, the excitation and the held-out run on the MuJoCo leg."""
    t0 = time.perf_counter()
    truth = make_truth(robot, seed=seed)
    ident = robot.description.get('identification') or {}
    gain = np.array([float(robot.description['joints'][j]['gear_ratio'])
                     * float(robot.description['joints'][j]['torque_constant_nm_per_a'])
                     for j in robot.actuated_joint_names])
    noise = float(ident.get('current_noise_a', 0.02)) * float(gain.mean())
    cfg = LegSimConfig(pi_true=truth.pi, armature=truth.drive.reflected_inertia,
                       friction=PlantFriction.from_description(robot), torque_noise_nm=noise,
                       seed=seed)
    cad_ff = FeedforwardModel(robot, rotor_inertia=reflected_rotor_inertia(robot))
    posture = np.asarray(ident.get('sweep_posture', [0.0, 0.3, 1.2]), float)
    sweeps = []
    for j, name in enumerate(robot.actuated_joint_names):
        plan = SweepPlan(joint=j, posture=posture, speeds=sweep_speeds, reps=1, accel=60.0,
                         stroke_max=0.9, rate=RATE_HZ)
        sw = sweep_trajectory(plan)
        res = run_tracking(robot, PdFeedforwardController.for_robot(robot, cad_ff),
                           SampledTrajectory(sw.t, sw.q, sw.qd, sw.qdd), len(sw.t) / RATE_HZ,
                           cfg, f'sweep {name}')
        k = min(len(res.t), len(sw.t))
        sf = extract_friction(res.q[:k, j], res.qd[:k, j], res.tau[:k, j], sw.plateau[:k],
                              sw.direction[:k], name)
        sweeps.append((sf.speed, sf.tau_f))

    def run(traj, seconds, label):
        res = run_tracking(robot, PdFeedforwardController.for_robot(robot, cad_ff), traj,
                           seconds, cfg, label)
        return LegData(t=res.t, q=res.q, tau=res.tau, meta={'rate_hz': RATE_HZ})

    train = run(_random_excitation(robot, seed), excitation_s, 'excitation')
    held = run(_random_excitation(robot, seed + 1000), heldout_s, 'held-out')
    return LegRecordings(truth, train, held, sweeps, time.perf_counter() - t0)


def heldout_slice(data: LegData, cutoff_hz: float) -> slice:
    """Samples our preprocessing keeps (filter edges dropped); both tools are scored on them."""
    rate = data.rate
    edge = int(min(len(data.t) // 10, 0.2 * rate))
    return slice(edge, len(data.t) - edge)


def run_ours(robot: Robot, rec: LegRecordings, cutoff_hz: float, decimation: int
             ) -> Dict[str, dict]:
    """Our two-step (piecewise friction from the sweeps), unified Stribeck and unified
    Coulomb-viscous (FIGAROH's friction model, for a like-for-like row) methods.

    Wall time: base parameters of the model + preprocessing of the excitation + (two-step:
    the piecewise friction fits of the sweeps, also given apart) + the consistent SDP.
    Returns per method: held-out predictions, consistency, parameter error, time.
    """
    names = robot.actuated_joint_names
    qh, qdh, qddh, _ = preprocess(rec.heldout, cutoff_hz, decimate=1)
    out = {}
    for method in ('two_step', 'unified_stribeck', 'unified_cv'):
        t0, c0 = time.perf_counter(), time.process_time()
        friction_s = 0.0
        ctx = leg_context(robot)
        q, qd, qdd, tau = preprocess(rec.train, cutoff_hz, decimate=decimation)
        if method == 'two_step':
            t1 = time.perf_counter()
            models = [fit_model('piecewise', v, f, mirror=True, **PIECEWISE_PSO).model
                      for v, f in rec.sweeps]
            friction_s = time.perf_counter() - t1
            res = identify_two_step(ctx, q, qd, qdd, tau, JointFriction(list(names), models))
        elif method == 'unified_stribeck':
            res = unified_stribeck(ctx, q, qd, qdd, tau)
        else:
            res = unified_cv(ctx, q, qd, qdd, tau)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        a = ctx.base_regressor(q, qd, qdd)
        out[method] = {'result': res, 'wall_s': wall, 'cpu_s': cpu,
                       'sweep_friction_fit_s': friction_s,
                       'tau_heldout': res.torque(robot, qh, qdh, qddh),
                       'consistent': bool(res.consistent),
                       'solver': str(res.meta.get('solver')),
                       'param_err_pct': 100 * _weighted_error(a, res.beta,
                                                              ctx.base.B @ rec.truth.theta)}
    return out


def _weighted_error(a: np.ndarray, beta: np.ndarray, beta_true: np.ndarray) -> float:
    """``|A (beta - beta*)| / |A beta*|`` [-]: each base parameter counts by its torque."""
    return float(np.linalg.norm(a @ (beta - beta_true)) / np.linalg.norm(a @ beta_true))


def figaroh_truth(robot: Robot, truth: LegTruth) -> Dict[str, float]:
    """The true standard parameters in FIGAROH's naming (``m_<joint>``, ..., ``Ia_<joint>``)."""
    keys = ('m', 'mx', 'my', 'mz', 'Ixx', 'Ixy', 'Iyy', 'Ixz', 'Iyz', 'Izz')
    out = {}
    for i, jname in enumerate(list(robot.model.names)[1:]):
        for k, v in zip(keys, truth.pi[10 * i:10 * i + 10]):
            out[f'{k}_{jname}'] = float(v)
    for jname, ia in zip(truth.drive.joint_names, truth.drive.reflected_inertia):
        out[f'Ia_{jname}'] = float(ia)
    return out


def figaroh_param_error(base_names, phi, w_base, truth: Dict[str, float]) -> Tuple[float, int]:
    """FIGAROH's rigid + actuator-inertia base parameters against the truth, torque-weighted
    on its own base regressor of the training run (the same measure as ours) [%]."""
    from legid_ros.bench.peers_figaroh import rigid_mask, true_base

    mask = rigid_mask(base_names)
    phi_true = true_base(base_names, truth)
    a = w_base[:, mask]
    return 100 * _weighted_error(a, phi[mask], phi_true[mask]), int(mask.sum())


def rel_rms_pct(tau: np.ndarray, tau_hat: np.ndarray) -> list:
    """Per-joint relative RMS error [%]."""
    return (100 * relative_rms(tau, tau_hat)).tolist()
