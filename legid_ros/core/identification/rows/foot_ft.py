"""The foot's own parameters from the ankle F/T sensor while the foot swings.

A 6-axis force/torque sensor between the ankle and the foot reads the wrench the leg exerts
on the foot, at the sensor frame S (MuJoCo's force/torque sensor convention). Newton-Euler
for the foot body gives

    w_S = Y_S(q, v, a) pi_foot - w_ground,S                                    [N, N.m]

with ``Y_S`` pinocchio's body regressor of the foot (gravity included) moved to S and
``pi_foot`` the foot's 10 standard parameters. In swing ``w_ground = 0``, so the sensor
weighs the foot: six linear rows per sample in the foot's mass and first moment. This is the
one piece the ZMP cannot give (a point mass at the ankle, on the shank or on the foot, moves
the ZMP identically: :mod:`legid_ros.core.identification.parameters.equivalence`), so
:func:`identify_foot_ft` feeds the ZMP reduced set (Wu & Gao 2021) a measured foot mass.

The inertia about the COM is held at the reference (CAD) value, as in the ZMP reduced set;
the first-moment rows are solved by weighted least squares (force and moment rows weighted by
their residual spread), the inertia about the joint updated from the new COM, three times.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np
import pinocchio as pin

from legid_ros.core.errors import BadInputError, NotIdentifiableError
from legid_ros.core.inertial import PARAMS_PER_LINK, unpack
from legid_ros.core.robot import Robot

G = 9.81  # [m/s^2]


def foot_joint(robot: Robot, foot: str) -> tuple:
    """(joint id of the foot body, sensor placement in that joint's frame) for a foot."""
    if foot not in robot.feet:
        raise BadInputError(f'robot {robot.name!r} has no foot {foot!r}')
    spec = robot.feet[foot]
    if not spec.ft_frame:
        raise BadInputError(f'foot {foot!r} has no F/T frame in the description')
    frame = robot.model.frames[robot.frame_id(spec.ft_frame)]
    return int(frame.parentJoint), frame.placement


def foot_regressor(robot: Robot, q: np.ndarray, v: np.ndarray, a: np.ndarray,
                   foot: str) -> np.ndarray:
    """Regressor of the foot body's Newton-Euler wrench at its F/T frame.

    Args:
        robot: Floating-base robot.
        q, v, a: Configurations, velocities, accelerations (N, nq|nv|nv).
        foot: Foot name.

    Returns:
        (N, 6, 10): ``Y[k] @ pi_foot`` = leg-on-foot wrench ``[f, n]`` at the F/T frame when
        the foot touches nothing [N, N.m].
    """
    return feet_regressors(robot, q, v, a, [foot])[foot]


def feet_regressors(robot: Robot, q: np.ndarray, v: np.ndarray, a: np.ndarray,
                    feet: List[str]) -> Dict[str, np.ndarray]:
    """:func:`foot_regressor` of several feet (one RNEA pass per sample)."""
    model = robot.model
    data = model.createData()
    place = {f: foot_joint(robot, f) for f in feet}
    to_sensor = {f: p.inverse().toDualActionMatrix() for f, (_, p) in place.items()}
    q, v, a = (np.atleast_2d(np.asarray(x, float)) for x in (q, v, a))
    out = {f: np.empty((q.shape[0], 6, PARAMS_PER_LINK)) for f in feet}
    for k in range(q.shape[0]):
        pin.rnea(model, data, q[k], v[k], a[k])
        for f in feet:
            out[f][k] = to_sensor[f] @ pin.jointBodyRegressor(model, data, place[f][0])
    return out


def foot_parameters(pi: np.ndarray, robot: Robot, foot: str) -> np.ndarray:
    """The foot body's 10 standard parameters out of a stacked vector."""
    jid, _ = foot_joint(robot, foot)
    return np.asarray(pi, float)[PARAMS_PER_LINK * (jid - 1):PARAMS_PER_LINK * jid]


@dataclass
class FootFt:
    """One foot weighed by its ankle F/T sensor.

    Attributes:
        foot: Foot name.
        mass_kg: Identified mass [kg].
        com_m: COM in the foot body frame [m] (3,).
        mass_std_kg: Standard deviation of the mass (from the weighted LS covariance) [kg].
        com_std_m: Standard deviation of each COM coordinate [m] (3,).
        n_samples: Swing samples used.
        force_rms_n: RMS force residual [N].
        moment_rms_nm: RMS moment residual [N.m].
    """

    foot: str
    mass_kg: float
    com_m: np.ndarray
    mass_std_kg: float
    com_std_m: np.ndarray
    n_samples: int
    force_rms_n: float
    moment_rms_nm: float


@dataclass
class FootFtResult:
    """Feet weighed by their ankle F/T sensors, and what the ZMP reduced set takes of it.

    Attributes:
        feet: Per foot, :class:`FootFt`.
        known: Reduced-set values to hold (``{'m_foot': kg}``; see
            :func:`legid_ros.core.identification.solvers.zmp_newton.known_bounds`).
        lc_m: Axial COM offset of the foot group from the F/T [m] (reported, not held: level
            swing feet barely excite it), NaN if the robot has no foot group.
    """

    feet: Dict[str, FootFt] = field(default_factory=dict)
    known: Dict[str, float] = field(default_factory=dict)
    lc_m: float = float('nan')

    def lines(self) -> List[str]:
        """Readable summary."""
        return [f'{f.foot} foot from its ankle F/T ({f.n_samples} swing samples): mass '
                f'{f.mass_kg:.3f} +- {f.mass_std_kg:.3f} kg, COM '
                f'{np.array2string(1e3 * f.com_m, precision=1)} mm (statistical +- '
                f'{np.array2string(1e3 * f.com_std_m, precision=1)} mm; not held: a level '
                'swing foot barely excites it), residual '
                f'{f.force_rms_n:.2f} N / {f.moment_rms_nm:.3f} N.m' for f in self.feet.values()]


def _solve_first_moments(y: np.ndarray, b: np.ndarray, inertia_com: np.ndarray) -> tuple:
    """Weighted LS for (m, m c) with the inertia about the COM held; returns (x, cov, res)."""
    x = None
    w = np.ones(6)
    for _ in range(3):
        if x is None:
            i_o = np.zeros(6)
        else:
            m, h = x[0], x[1:]
            c = h / m
            full = inertia_com + m * (c @ c * np.eye(3) - np.outer(c, c))
            i_o = full[[0, 0, 1, 0, 1, 2], [0, 1, 1, 2, 2, 2]]
        a = (y[:, :, :4] * w[None, :, None]).reshape(-1, 4)
        rhs = ((b - y[:, :, 4:] @ i_o) * w[None, :]).reshape(-1)
        x, *_ = np.linalg.lstsq(a, rhs, rcond=None)
        res = (b - y[:, :, 4:] @ i_o) - y[:, :, :4] @ x
        spread = np.array([np.sqrt(np.mean(res[:, :3] ** 2)), np.sqrt(np.mean(res[:, 3:] ** 2))])
        spread = np.maximum(spread, 1e-9)
        w = np.repeat(1.0 / spread, 3)
    a = (y[:, :, :4] * w[None, :, None]).reshape(-1, 4)
    cov = np.linalg.inv(a.T @ a)  # rows scaled to unit residual spread
    return x, cov, res


def swing_mask(samples, foot: str, guard_s: float = 0.1) -> np.ndarray:
    """Samples where ``foot`` swings, at least ``guard_s`` [s] away from any contact.

    Lift-off and touch-down carry ground forces below the contact threshold; the guard keeps
    them out of the weighing.
    """
    swing = (samples.support != foot) & ~samples.double_support
    t = np.asarray(samples.t, float)
    touching = t[~swing]
    if touching.size and guard_s > 0:
        k = np.clip(np.searchsorted(touching, t), 1, touching.size - 1)
        near = np.minimum(np.abs(t - touching[k - 1]), np.abs(touching[k] - t))
        if touching.size == 1:
            near = np.abs(t - touching[0])
        swing &= near > guard_s
    return swing


def weigh_foot(robot: Robot, samples, foot: str, pi_ref: np.ndarray,
               min_samples: int = 50, guard_s: float = 0.1) -> FootFt:
    """Mass and COM of one foot from its ankle F/T while it swings.

    Args:
        robot: Floating-base robot.
        samples: Prepared samples with ``ankle_ft[foot]``
            (:class:`legid_ros.core.identification.prepare.Samples`).
        foot: Foot name.
        pi_ref: Reference standard parameters (the foot's inertia about its COM is taken from
            them).
        min_samples: Fewest swing samples accepted.
        guard_s: Swing samples closer than this to a contact are not used [s].

    Raises:
        BadInputError: No ankle F/T reading for the foot.
        NotIdentifiableError: The foot never swings (or too briefly), or its acceleration
            relative to gravity does not vary enough to separate mass from COM.
    """
    if foot not in samples.ankle_ft:
        raise BadInputError(f'the recording has no ankle F/T reading for foot {foot!r}')
    swing = swing_mask(samples, foot, guard_s)
    swing &= np.isfinite(samples.ankle_ft[foot]).all(axis=1)
    idx = np.flatnonzero(swing)
    if idx.size < min_samples:
        raise NotIdentifiableError(
            f'foot {foot!r} swings in only {idx.size} samples (need {min_samples}) to be '
            'weighed by its ankle F/T', float('inf'), [f'm_{foot}'])
    y = foot_regressor(robot, samples.q[idx], samples.v[idx], samples.a[idx], foot)
    b = np.asarray(samples.ankle_ft[foot], float)[idx]
    m_ref, h_ref, i_ref = unpack(foot_parameters(pi_ref, robot, foot))
    c_ref = h_ref / m_ref
    inertia_com = i_ref - m_ref * (c_ref @ c_ref * np.eye(3) - np.outer(c_ref, c_ref))
    x, cov, res = _solve_first_moments(y, b, inertia_com)
    cond = float(np.linalg.cond(cov))
    if not np.all(np.isfinite(x)) or x[0] <= 0 or cond > 1e12:
        raise NotIdentifiableError(f'the ankle F/T of foot {foot!r} does not separate the '
                                   f'foot mass from its COM (condition {cond:.3g})', cond,
                                   [f'm_{foot}'])
    m, h = float(x[0]), x[1:]
    jac = np.hstack([-h[:, None] / m ** 2, np.eye(3) / m])  # d c / d (m, h)
    com_cov = jac @ cov @ jac.T
    return FootFt(foot, m, h / m, float(np.sqrt(cov[0, 0])), np.sqrt(np.diag(com_cov)),
                  int(idx.size), float(np.sqrt(np.mean(res[:, :3] ** 2))),
                  float(np.sqrt(np.mean(res[:, 3:] ** 2))))


def identify_foot_ft(robot: Robot, samples, pi_ref: np.ndarray,
                     feet: Optional[List[str]] = None, min_samples: int = 50) -> FootFtResult:
    """Weigh every foot that swings with its ankle F/T; the foot group's mass to hold.

    Feet that never swing are skipped; at least one must be weighed. For the ZMP reduced
    set the group mass is the sample-weighted mean over the weighed feet of the group.

    Raises:
        BadInputError: The recording has no ankle F/T readings.
        NotIdentifiableError: No foot swings long enough.
    """
    if not samples.ankle_ft:
        raise BadInputError('the recording has no ankle F/T readings (Recording.ankle_ft)')
    out = FootFtResult()
    errors = []
    for foot in feet or list(samples.ankle_ft):
        try:
            out.feet[foot] = weigh_foot(robot, samples, foot, pi_ref, min_samples)
        except NotIdentifiableError as err:
            errors.append(str(err))
    if not out.feet:
        raise NotIdentifiableError('no foot could be weighed by its ankle F/T: '
                                   + '; '.join(errors), float('inf'), ['m_foot'])
    for name, group in robot.link_groups.items():
        weighed = [f for f in out.feet.values() if robot.feet[f.foot].link in group.links]
        if not weighed:
            continue
        n = np.array([f.n_samples for f in weighed], float)
        out.known[f'm_{name}'] = float(np.sum(n * [f.mass_kg for f in weighed]) / n.sum())
        axis = np.asarray(group.axis, float)
        out.lc_m = float(np.sum(n * [f.com_m @ axis for f in weighed]) / n.sum())
    return out
