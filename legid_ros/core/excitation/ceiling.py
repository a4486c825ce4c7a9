"""What a quasi-static motion can determine at most: the static ceiling of a parameter set.

At rest the ground's wrench on the robot is its weight acting at the whole-body COM, so the ZMP
/ CoP rows of a slow motion (Wu & Gao 2021) see the parameters only through the COM as a
function of the posture, ``c(q) = sum_i m_i p_i(q) + R_i(q) h_i`` (mass ``m_i``, first moment
``h_i``, frame origin ``p_i`` and rotation ``R_i`` of link ``i``). Some combinations never
change it, whatever the posture: a distal link's mass acts at its joint like a first moment of
its parent; the first moments of links whose joint axes are parallel (a leg's hip pitch, knee
and ankle pitch) along those axes only ever appear summed. Those combinations are determined
only through the inertial forces of a motion (the accelerations' terms), which grow with
``amplitude x frequency^2`` and carry the error of the inertias about the COMs the grouped sets
hold at CAD.

:func:`static_ceiling` counts them for a robot and a parameter set: the rank of the rows of
many random postures (joints anywhere within their limits, the base tilted so that the vertical
COM is seen too) at rest, in core-scale units on the total-mass plane (the fit holds the total
mass to the measured weight). The rank is structural: the singular values fall from about
``1e-3`` of the largest to ``1e-16`` (double precision) on the built-in biped, Solo12 and Talos,
so ``rtol`` between them does not change it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List

import numpy as np
import pinocchio as pin

from legid_ros.core.errors import BadInputError
from legid_ros.core.identification.rows.regressors import bases_to_world, zmp_rows
from legid_ros.core.identification.rows.zmp import model_zmp
from legid_ros.core.robot import Robot

TILT_STD_RAD = 0.3  # [rad] std of the base's random tilt (each axis)
DEFAULT_POSTURES = 300
RTOL = 1e-9  # [-] singular value / largest below which a direction is not seen
UNBOUNDED_JOINT_RAD = np.pi  # [rad] range drawn for a joint without finite limits
STATIC_SHARE_MAX = 0.5  # [-] a parameter is listed when less of it is seen at rest


@dataclass
class StaticCeiling:
    """Combinations a quasi-static motion can determine (see the module docstring).

    Attributes:
        rank: Combinations any motion at rest determines, given enough of it.
        combinations: Combinations of the set (core parameters less the total-mass plane's
            one).
        param_set: The core ('grouped_sides', 'grouped', 'reduced', ...).
        static_share: Per core parameter, the share of its unit vector (core-scale units)
            that rest postures see [-] (1: determined at rest given enough data; 0: only
            through accelerations).
        names: Core parameter names, in the order of ``static_share``.
        basis: (q, rank) orthonormal basis of what rest postures see (core-scale units).
    """

    rank: int
    combinations: int
    param_set: str
    static_share: np.ndarray
    names: List[str] = field(default_factory=list)
    basis: np.ndarray = None

    def seen_share(self, vec: np.ndarray) -> float:
        """Share of the direction ``vec`` (core-scale units) that rest postures see [-]."""
        v = np.asarray(vec, float)
        norm = float(v @ v)
        if norm == 0:
            raise BadInputError('the direction is zero')
        return float(((self.basis.T @ v) ** 2).sum() / norm)

    @property
    def fraction(self) -> float:
        """Largest share of the combinations a quasi-static motion determines [-]."""
        return self.rank / self.combinations if self.combinations else 0.0

    def dynamic_only(self) -> List[str]:
        """Core parameters mostly unseen at rest, least seen first."""
        order = np.argsort(self.static_share, kind='stable')
        return [self.names[i] for i in order if self.static_share[i] < STATIC_SHARE_MAX]

    def lines(self) -> List[str]:
        """Readable: the ceiling and the parameters only accelerations determine."""
        out = [f'static ceiling: at most {self.rank} of {self.combinations} combinations '
               f'({100 * self.fraction:.0f} %) are determined by a quasi-static motion; the '
               f'other {self.combinations - self.rank} only through accelerations']
        dyn = self.dynamic_only()
        if dyn:
            out.append(f'  mostly unseen at rest ({len(dyn)}, share seen < {STATIC_SHARE_MAX:g}'
                       f'): {", ".join(dyn)}')
        return out

    def as_dict(self) -> dict:
        """Plain form (YAML / JSON)."""
        return {'rank': int(self.rank), 'combinations': int(self.combinations),
                'fraction': float(self.fraction), 'param_set': self.param_set,
                'dynamic_only': self.dynamic_only(),
                'static_share': {n: float(s) for n, s in zip(self.names, self.static_share)}}


def rest_postures(robot: Robot, n: int, seed: int = 0) -> np.ndarray:
    """``n`` random configurations (nq,): joints uniform within their limits (a joint without
    finite limits within +-pi), the base tilted by ``TILT_STD_RAD`` per axis, any heading."""
    model = robot.model
    if not robot.floating:
        raise BadInputError(f'{robot.name}: the static ceiling needs a floating base')
    rng = np.random.default_rng([seed, 2611])
    lo = model.lowerPositionLimit[7:].copy()
    hi = model.upperPositionLimit[7:].copy()
    bad = ~(np.isfinite(lo) & np.isfinite(hi)) | (hi - lo > 1e3)
    lo[bad], hi[bad] = -UNBOUNDED_JOINT_RAD, UNBOUNDED_JOINT_RAD
    q = np.zeros((n, model.nq))
    for k in range(n):
        rot = pin.exp3(np.array([0.0, 0.0, rng.uniform(-np.pi, np.pi)])) @ pin.exp3(
            np.append(rng.normal(0.0, TILT_STD_RAD, 2), 0.0))
        q[k, :3] = rng.normal(0.0, 0.1, 3)
        q[k, 3:7] = pin.Quaternion(rot).coeffs()
        q[k, 7:] = rng.uniform(lo, hi)
    return q


def rest_rows(robot: Robot, pi_cad: np.ndarray, q: np.ndarray) -> np.ndarray:
    """ZMP rows (2N, P) [m per standard parameter] of the configurations ``q`` at rest, with the
    CAD ZMP as the measured one."""
    model = robot.model
    data = model.createData()
    zero = np.zeros(model.nv)
    wrench = np.stack([pin.computeJointTorqueRegressor(model, data, qk, zero, zero)[:6]
                       for qk in q])
    wrench = bases_to_world(q) @ wrench
    zmp, fz = model_zmp(wrench, np.asarray(pi_cad, float))
    return zmp_rows(wrench, zmp, fz)


def static_ceiling(robot: Robot, pi_cad: np.ndarray, param_set: str = 'grouped_sides',
                   postures: int = DEFAULT_POSTURES, seed: int = 0, rtol: float = RTOL
                   ) -> StaticCeiling:
    """The static ceiling of ``param_set`` on ``robot`` (see the module docstring).

    Args:
        robot: Floating-base robot.
        pi_cad: CAD standard parameters (10 per moving body).
        param_set: Core ('grouped_sides', 'grouped', 'reduced'; robots without link groups:
            every link's mass and first moment).
        postures: Random rest postures (enough when at least the core's size).
        seed: Seed of the postures.
        rtol: Singular values under ``rtol`` x the largest are not seen.

    Raises:
        BadInputError: Fewer postures than core parameters, or ``rtol`` outside (0, 1).
    """
    from legid_ros.core.identification.uncertainty.core import _core_basis
    if not 0 < rtol < 1:
        raise BadInputError(f'rtol must be in (0, 1), got {rtol}')
    _, scales, jac, mass_row, names = _core_basis(robot, np.asarray(pi_cad, float), param_set)
    if postures < len(names):
        raise BadInputError(f'{postures} postures for {len(names)} core parameters: '
                            f'use at least {len(names)}')
    g = rest_rows(robot, pi_cad, rest_postures(robot, postures, seed)) @ jac
    # the total-mass plane: directions that keep the total mass (core-scale units)
    plane = np.linalg.svd((mass_row * scales)[None, :])[2][1:].T
    _, sv, vt = np.linalg.svd(g @ plane, full_matrices=False)
    rank = int((sv > rtol * sv[0]).sum()) if sv.size and sv[0] > 0 else 0
    seen = plane @ vt[:rank].T  # orthonormal basis of what rest sees (core-scale units)
    share = (seen ** 2).sum(axis=1)
    return StaticCeiling(rank, plane.shape[1], param_set, share, list(names), seen)
