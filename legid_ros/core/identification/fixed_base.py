"""Identification of a geared fixed-base leg: two-step (friction first) and unified.

The two-step identification of Xiao, Qian & Luo 2025, built from the same pieces as the
floating-base methods: the rigid-body + rotor + friction rows of
:mod:`legid_ros.core.identification.rows.drive`, the base parameters of
:mod:`legid_ros.core.identification.parameters.base`, the leg SDP of
:mod:`legid_ros.core.identification.solvers.sdp`, and the
:class:`legid_ros.core.identification.result.LegIdentResult` it returns.

Two-step: friction per joint from the constant-speed sweep (any model of
:mod:`legid_ros.core.friction`), subtracted from the excitation torques, then link
parameters + rotor inertias on the base parameters by the consistent SDP. Unified: the
friction columns of a linear model (Coulomb-viscous, Stribeck) sit in the same LS.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import List, Optional, Sequence

import numpy as np
import pinocchio as pin

from legid_ros.core.errors import BadInputError
from legid_ros.core.friction.models import (CoulombViscous, FrictionModel, JointFriction,
                                            Stribeck)
from legid_ros.core.identification.parameters.base import BaseParameters, base_parameters
from legid_ros.core.identification.result import LegIdentResult
from legid_ros.core.identification.rows.drive import (Drive, drive_of, friction_columns,
                                                      joint_limits, rigid_rotor_regressor,
                                                      theta_names)
from legid_ros.core.identification.solvers.sdp import build_consistent_ls, solve_consistent_ls
from legid_ros.core.inertial import get_parameters
from legid_ros.core.robot import Robot, body_names


@dataclass
class LegContext:
    """Everything identification needs about the leg.

    Attributes:
        robot: The leg (fixed base).
        drive: Gear data.
        base: Base parameter map.
        theta_cad: CAD ``[pi, J]``.
        link_names: Links, 10 parameters each.
        mass_tol: ``d`` of the mass bounds.
        rotor_min: Lower bound of rotor inertias [kg.m^2].
    """

    robot: Robot
    drive: Drive
    base: BaseParameters
    theta_cad: np.ndarray
    link_names: List[str]
    mass_tol: float
    rotor_min: float
    sdp_cache: dict = field(default_factory=dict, repr=False)

    @property
    def n_links(self) -> int:
        """Moving links."""
        return len(self.link_names)

    def base_regressor(self, q, qd, qdd) -> np.ndarray:
        """Stacked base regressor (N nj, r)."""
        return self.base.regressor(
            rigid_rotor_regressor(self.robot.model, self.drive, q, qd, qdd))


def leg_base_parameters(model: pin.Model, drive: Drive, q_low: np.ndarray, q_high: np.ndarray,
                        n_samples: int = 300, seed: int = 0, rtol: float = 1e-8
                        ) -> BaseParameters:
    """Base parameters of ``theta = [pi, J]`` from random states within the joint limits.

    The rigid-body + rotor regressor of ``n_samples`` uniform random positions (velocities
    within 3 rad/s, accelerations within 20 rad/s^2) goes through the shared QR with column
    pivoting, columns scaled to unit norm, independent parameters in ascending order and
    entries of ``B`` below 1e-10 zeroed.
    """
    rng = np.random.default_rng(seed)
    nv = model.nv
    q = rng.uniform(q_low, q_high, (n_samples, nv))
    qd = rng.uniform(-3, 3, (n_samples, nv))
    qdd = rng.uniform(-20, 20, (n_samples, nv))
    w = rigid_rotor_regressor(model, drive, q, qd, qdd)
    return base_parameters(w, theta_names(model, drive.joint_names), 'norm', rtol,
                           ascending=True, zero_below=1e-10, full_names=True)


def leg_context(robot: Robot) -> LegContext:
    """Build the identification context of a fixed-base geared leg."""
    if robot.floating:
        raise BadInputError('leg identification needs a fixed-base model (floating_base=False)')
    drive = drive_of(robot)
    lo, hi = joint_limits(robot.model)
    base = leg_base_parameters(robot.model, drive, lo, hi)
    ident = robot.description.get('identification') or {}
    theta_cad = np.concatenate([get_parameters(robot.model), drive.rotor_inertia])
    return LegContext(robot, drive, base, theta_cad, body_names(robot.model),
                      float(ident.get('mass_tolerance', 0.2)),
                      float(ident.get('rotor_inertia_min_kg_m2', 1e-7)))


def _stack(tau: np.ndarray) -> np.ndarray:
    return np.asarray(tau, float).reshape(-1)


def consistent_fit(ctx: LegContext, a_base: np.ndarray, b: np.ndarray,
                   a_extra: Optional[np.ndarray] = None):
    """SDP fit; returns ``(theta, extra, status)``."""
    n_extra = 0 if a_extra is None else a_extra.shape[1]
    key = (a_base.shape[1], n_extra)
    if key not in ctx.sdp_cache:
        ctx.sdp_cache[key] = build_consistent_ls(a_base.shape[1], ctx.base, ctx.theta_cad,
                                                 ctx.n_links, ctx.mass_tol, ctx.rotor_min,
                                                 n_extra)
    prob = ctx.sdp_cache[key]
    prob.set_data(a_base, b, a_extra)
    return solve_consistent_ls(prob)


def _result(ctx: LegContext, method: str, theta: np.ndarray, friction: JointFriction,
            meta: dict) -> LegIdentResult:
    nb = 10 * ctx.n_links
    return LegIdentResult(method=method, robot=ctx.robot.name,
                          joint_names=list(ctx.drive.joint_names), link_names=ctx.link_names,
                          pi=theta[:nb].copy(), rotor_inertia=theta[nb:].copy(),
                          gear_ratio=ctx.drive.gear_ratio.copy(), friction=friction,
                          beta=ctx.base.B @ theta, base_names=list(ctx.base.names), meta=meta)


def identify_two_step(ctx: LegContext, q, qd, qdd, tau, friction: JointFriction
                      ) -> LegIdentResult:
    """Step 2 of Xiao, Qian & Luo 2025: subtract the sweep friction, then the consistent SDP.

    Args:
        ctx: Leg context.
        q, qd, qdd: Filtered states of the excitation run, (N, nj) [rad, rad/s, rad/s^2].
        tau: Measured joint torques, (N, nj) [N.m].
        friction: Friction identified from the sweeps.
    """
    tau = np.asarray(tau, float)
    a = ctx.base_regressor(q, qd, qdd)
    b = _stack(tau - friction(qd))
    theta, _, status = consistent_fit(ctx, a, b)
    rms = float(np.sqrt(np.mean((a @ (ctx.base.B @ theta) - b) ** 2)))
    return _result(ctx, 'two_step', theta, copy.deepcopy(friction),
                   {'solver': status, 'residual_rms_nm': rms, 'samples': int(len(q))})


def identify_unified(ctx: LegContext, q, qd, qdd, tau,
                     models: Sequence[FrictionModel], method: str = 'unified'
                     ) -> LegIdentResult:
    """Unified identification: linear friction columns in the same consistent LS.

    Args:
        models: One linear friction model per joint (shape constants such as the Stribeck
            velocity are kept; their linear parameters are identified).
    """
    models = [copy.deepcopy(m) for m in models]
    if len(models) != len(ctx.drive.joint_names) or not all(m.linear for m in models):
        raise BadInputError('unified identification needs one linear friction model per joint')
    a = ctx.base_regressor(q, qd, qdd)
    phi = friction_columns(models, qd)
    b = _stack(tau)
    theta, extra, status = consistent_fit(ctx, a, b, phi)
    col = 0
    for m in models:
        k = len(m.names)
        m.set_params(extra[col:col + k])
        col += k
    rms = float(np.sqrt(np.mean((a @ (ctx.base.B @ theta) + phi @ extra - b) ** 2)))
    return _result(ctx, method, theta, JointFriction(list(ctx.drive.joint_names), models),
                   {'solver': status, 'residual_rms_nm': rms, 'samples': int(len(q))})


def unified_cv(ctx: LegContext, q, qd, qdd, tau, k_v: float = 200.0) -> LegIdentResult:
    """Unified Coulomb-viscous identification (the first baseline of Xiao, Qian & Luo 2025)."""
    models = [CoulombViscous(k_v=k_v) for _ in ctx.drive.joint_names]
    return identify_unified(ctx, q, qd, qdd, tau, models, 'unified_cv')


def unified_stribeck(ctx: LegContext, q, qd, qdd, tau, v_s: float = 0.1,
                     k_v: float = 200.0) -> LegIdentResult:
    """Unified linear-Stribeck identification (fixed Stribeck velocity ``v_s`` [rad/s])."""
    models = [Stribeck(v_s=v_s, k_v=k_v) for _ in ctx.drive.joint_names]
    return identify_unified(ctx, q, qd, qdd, tau, models, 'unified_stribeck')


def relative_rms(tau: np.ndarray, tau_hat: np.ndarray) -> np.ndarray:
    """Per-joint relative RMS error ``sqrt(sum (tau - tau_hat)^2 / sum tau^2)`` [-]."""
    tau, tau_hat = np.asarray(tau, float), np.asarray(tau_hat, float)
    return np.sqrt(np.sum((tau - tau_hat) ** 2, axis=0) / np.sum(tau ** 2, axis=0))


def rigid_error(ctx: LegContext, beta: np.ndarray, beta_true: np.ndarray, q, qd, qdd) -> float:
    """Torque-weighted base-parameter error ``|A (beta - beta*)| / |A beta*|`` [-].

    ``A`` is the base regressor along a reference motion, so every parameter counts by the
    torque it explains (raw parameter norms mix kg, kg.m and kg.m^2).
    """
    a = ctx.base_regressor(q, qd, qdd)
    return float(np.linalg.norm(a @ (beta - beta_true)) / np.linalg.norm(a @ beta_true))
