"""The synthetic experiment on ``leg3``: friction sweeps, excitation design, excitation runs.

The protocol of the two-step identification of a geared leg (Xiao, Qian & Luo 2025: one
constant-speed sweep per joint, then an optimised Fourier excitation), with the repeated,
averaged runs of Zhu & Zhang. Glue between the generic pieces (:mod:`legid_ros.core.friction`,
:mod:`legid_ros.core.identification.excitation_trajectory`) and the leg: limits and settings
come from the ``identification`` block of ``config/leg3.yaml``.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from legid_ros.core.friction.fitting import FrictionFit, fit_model
from legid_ros.core.friction.models import CoulombViscous, JointFriction
from legid_ros.core.friction.sweep import (DEFAULT_SPEEDS, SweepFriction, SweepPlan,
                                           extract_friction, sweep_trajectory)
from legid_ros.core.identification.excitation_trajectory import (ExcitationLimits,
                                                                 ExcitationResult,
                                                                 FourierExcitation,
                                                                 optimise_excitation,
                                                                 random_excitation)
from legid_ros.core.identification.fixed_base import LegContext
from legid_ros.core.identification.rows.drive import friction_columns, joint_limits
from legid_ros.core.identification.solvers.least_squares import cond_ne
from legid_ros.core.robot import Robot
from legid_ros.core.synthetic.leg import LegData, LegTruth, simulate
from legid_ros.core.signals import butter_zero_phase, finite_differences


def ident_settings(robot: Robot) -> dict:
    """The description's ``identification`` block (empty dict if absent)."""
    return dict(robot.description.get('identification') or {})


def leg_limits(robot: Robot, margin: float = 0.1) -> ExcitationLimits:
    """Excitation limits: joint limits shrunk by ``margin`` [rad], speed/accel from config."""
    cfg = ident_settings(robot)
    lo, hi = joint_limits(robot.model, margin)
    nv = robot.model.nv
    return ExcitationLimits(lo, hi, np.asarray(cfg.get('qd_max_rad_s', [5.0] * nv), float),
                            np.asarray(cfg.get('qdd_max_rad_s2', [40.0] * nv), float))


def parameter_scale(ctx: LegContext, friction: bool = True) -> np.ndarray:
    """Nominal magnitude of each base (and CV friction) parameter, floor 1e-3."""
    s = np.maximum(np.abs(ctx.base.B @ ctx.theta_cad), 1e-3)
    if friction:
        s = np.r_[s, np.tile([0.5, 0.1], len(ctx.drive.joint_names))]
    return s


def scaled_leg_regressor(ctx: LegContext, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                         friction: bool = True) -> np.ndarray:
    """Base regressor along samples, each column times its nominal magnitude.

    Columns are the base parameters (plus Coulomb-viscous friction columns when
    ``friction``), each multiplied by :func:`parameter_scale`: the raw condition number
    depends on units and let the optimiser keep the knee still.

    Args:
        ctx: The leg.
        q, qd, qdd: Positions [rad], speeds [rad/s], accelerations [rad/s^2], (N, nv).
        friction: Append the friction columns.

    Returns:
        (N nv, r) scaled regressor [N.m].
    """
    a = ctx.base_regressor(q, qd, qdd)
    if friction:
        a = np.hstack([a, friction_columns([CoulombViscous() for _ in ctx.drive.joint_names],
                                           qd)])
    return a * parameter_scale(ctx, friction)


def leg_cond_function(ctx: LegContext, period: float, n_grid: int = 100,
                      friction: bool = True) -> Callable[[FourierExcitation], float]:
    """Condition number of the scaled base regressor (:func:`scaled_leg_regressor`) along an
    excitation, sampled at ``n_grid`` times over one ``period`` [s]."""
    t = np.linspace(0.0, period, n_grid)

    def cond_of(ex: FourierExcitation) -> float:
        return cond_ne(scaled_leg_regressor(ctx, *ex.evaluate(t), friction=friction))
    return cond_of


def design_excitation(ctx: LegContext, seed: int = 0, starts: int = 2, n_grid: int = 100,
                      maxiter: int = 300, period: Optional[float] = None) -> ExcitationResult:
    """Optimised excitation of the leg under the configured limits."""
    robot = ctx.robot
    period = float(period or ident_settings(robot).get('excitation_period_s', 5.0))
    return optimise_excitation(leg_cond_function(ctx, period, n_grid), robot.model.nv, period,
                               leg_limits(robot), seed=seed, starts=starts, maxiter=maxiter,
                               n_grid=2 * n_grid)


def random_leg_excitation(ctx: LegContext, seed: int, period: Optional[float] = None
                          ) -> FourierExcitation:
    """Random coefficients scaled into the same limits."""
    robot = ctx.robot
    period = float(period or ident_settings(robot).get('excitation_period_s', 5.0))
    return random_excitation(robot.model.nv, period, leg_limits(robot), seed=seed)


def excitation_run(robot: Robot, truth: LegTruth, ex: FourierExcitation, cycles: int = 2,
                   reps: int = 5, seed: int = 0, rate: Optional[float] = None,
                   **noise) -> LegData:
    """Simulate ``reps`` repetitions of an excitation and average them (Zhu & Zhang)."""
    rate = float(rate or ident_settings(robot).get('rate_hz', 500.0))
    t, q, qd, qdd = ex.sample(rate, cycles)
    runs = [simulate(robot, truth, t, q, qd, qdd, seed=seed + k, **noise) for k in range(reps)]
    out = runs[0]
    out.q = np.mean([r.q for r in runs], axis=0)
    out.tau = np.mean([r.tau for r in runs], axis=0)
    out.meta['repetitions'] = reps
    return out


def sweep_joint(robot: Robot, truth: LegTruth, joint: int,
                speeds: Sequence[float] = DEFAULT_SPEEDS,
                reps: int = 5, seed: int = 0, rate: Optional[float] = None,
                cutoff_hz: Optional[float] = None) -> SweepFriction:
    """Sweep one joint of the synthetic leg (Xiao, Qian & Luo 2025), extract its friction."""
    cfg = ident_settings(robot)
    rate = float(rate or cfg.get('rate_hz', 500.0))
    cutoff = float(cutoff_hz or cfg.get('filter_cutoff_hz', 7.5))
    posture = cfg.get('sweep_posture', list(robot.neutral()))
    traj = sweep_trajectory(SweepPlan(joint, posture, speeds=speeds, reps=reps, rate=rate))
    data = simulate(robot, truth, traj.t, traj.q, traj.qd, traj.qdd, seed=seed)
    qf = butter_zero_phase(data.q[:, joint], cutoff, rate)
    qdf, _ = finite_differences(data.t, qf)
    return extract_friction(qf, qdf, data.tau[:, joint], traj.plateau, traj.direction,
                            robot.actuated_joint_names[joint])


def fit_sweeps(sweeps: Sequence[SweepFriction], joint_names: List[str], kind: str, seed: int = 0
               ) -> Tuple[JointFriction, List[FrictionFit]]:
    """Fit one friction model kind to each joint's sweep (weights 1/std^2, odd mirror)."""
    fits = []
    for sw in sweeps:
        w = 1.0 / (sw.tau_f_std ** 2 + 1e-4 ** 2)
        extra: Dict = {'seed': seed} if kind == 'piecewise' else {}
        fits.append(fit_model(kind, sw.speed, sw.tau_f, w, mirror=True, **extra))
    return JointFriction(list(joint_names), [f.model for f in fits]), fits
