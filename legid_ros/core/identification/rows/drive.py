"""Identification regressor of a geared fixed-base leg: rigid body + rotor + friction columns.

Parameter vector ``theta = [pi (10 per link, pinocchio order), J (one per joint)]`` where ``J``
is the rotor inertia on the motor side [kg.m^2]; its column is ``ratio^2 qdd`` on its joint's
row. Rows are stacked sample-major: row ``3 k + j`` is joint ``j`` at sample ``k``.
Base parameters come from a QR decomposition with column pivoting of the regressor on random
states (seed 001).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Sequence

import numpy as np
import pinocchio as pin
import scipy.linalg

from legid_ros.core.errors import BadInputError, RobotDescriptionError
from legid_ros.core.friction.models import FrictionModel
from legid_ros.core.inertial import parameter_names
from legid_ros.core.robot import Robot


@dataclass
class Drive:
    """Gear and motor data of each joint, from the description YAML ``joints`` block.

    Attributes:
        joint_names: Joints in column order.
        gear_ratio: Gear ratio per joint [-].
        rotor_inertia: Motor-side rotor inertia [kg.m^2].
        torque_constant: Motor torque constant [N.m/A].
    """

    joint_names: List[str]
    gear_ratio: np.ndarray
    rotor_inertia: np.ndarray
    torque_constant: np.ndarray

    @property
    def reflected_inertia(self) -> np.ndarray:
        """Joint-side rotor inertia ``ratio^2 J`` [kg.m^2]."""
        return self.gear_ratio ** 2 * self.rotor_inertia


def drive_of(robot: Robot) -> Drive:
    """Read gear ratio, rotor inertia and torque constant per joint from the description."""
    joints = robot.description.get('joints') or {}
    names = robot.actuated_joint_names
    missing = [n for n in names if n not in joints]
    if missing:
        raise RobotDescriptionError(f'description has no gear data for joints {missing}')
    return Drive(names,
                 np.array([float(joints[n]['gear_ratio']) for n in names]),
                 np.array([float(joints[n]['rotor_inertia_kg_m2']) for n in names]),
                 np.array([float(joints[n].get('torque_constant_nm_per_a', 1.0))
                           for n in names]))


def check_states(q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, nv: int) -> None:
    """Raise BadInputError unless q, qd, qdd are finite arrays of shape (N, nv)."""
    for name, arr in (('q', q), ('qd', qd), ('qdd', qdd)):
        if arr.ndim != 2 or arr.shape[1] != nv or arr.shape != q.shape:
            raise BadInputError(f'{name} has shape {arr.shape}, expected (N, {nv})')
        if not np.all(np.isfinite(arr)):
            raise BadInputError(f'{name} holds NaN or inf')


def rigid_rotor_regressor(model: pin.Model, drive: Drive, q: np.ndarray, qd: np.ndarray,
                          qdd: np.ndarray) -> np.ndarray:
    """Stacked regressor ``(N nj, 10 nb + nj)`` of link parameters and rotor inertias."""
    q, qd, qdd = (np.atleast_2d(np.asarray(a, float)) for a in (q, qd, qdd))
    check_states(q, qd, qdd, model.nv)
    data = model.createData()
    n, nj = q.shape
    nb = 10 * (model.njoints - 1)
    out = np.zeros((n, nj, nb + nj))
    for k in range(n):
        out[k, :, :nb] = pin.computeJointTorqueRegressor(model, data, q[k], qd[k], qdd[k])
    idx = np.arange(nj)
    out[:, idx, nb + idx] = drive.gear_ratio ** 2 * qdd
    return out.reshape(n * nj, nb + nj)


def friction_columns(models: Sequence[FrictionModel], qd: np.ndarray) -> np.ndarray:
    """Block-diagonal stacked friction columns ``(N nj, sum k_j)`` of linear models."""
    qd = np.atleast_2d(np.asarray(qd, float))
    n, nj = qd.shape
    blocks = [m.regressor(qd[:, j]) for j, m in enumerate(models)]
    width = sum(b.shape[1] for b in blocks)
    out = np.zeros((n, nj, width))
    col = 0
    for j, b in enumerate(blocks):
        out[:, j, col:col + b.shape[1]] = b
        col += b.shape[1]
    return out.reshape(n * nj, width)


def theta_names(model: pin.Model, joint_names: Sequence[str]) -> List[str]:
    """Names of ``theta``: link parameters then ``<joint>.rotor_J``."""
    return parameter_names(model) + [f'{j}.rotor_J' for j in joint_names]


@dataclass
class BaseParameters:
    """Base (identifiable) combinations ``beta = B theta`` of the standard parameters.

    Attributes:
        independent: Indices of theta kept as base columns (ascending).
        B: Map (r, p) from theta to beta; ``B[:, independent] = I``.
        names: One readable name per base parameter.
    """

    independent: np.ndarray
    B: np.ndarray
    names: List[str]

    @property
    def rank(self) -> int:
        """Number of base parameters."""
        return len(self.independent)

    def reduce(self, w: np.ndarray) -> np.ndarray:
        """Base regressor (columns ``independent``) of a full regressor."""
        return w[:, self.independent]


def base_parameters(model: pin.Model, drive: Drive, q_low: np.ndarray, q_high: np.ndarray,
                    n_samples: int = 300, seed: int = 0, rtol: float = 1e-8
                    ) -> BaseParameters:
    """Base parameters by QR with column pivoting on random states within joint limits."""
    rng = np.random.default_rng(seed)
    nv = model.nv
    q = rng.uniform(q_low, q_high, (n_samples, nv))
    qd = rng.uniform(-3, 3, (n_samples, nv))
    qdd = rng.uniform(-20, 20, (n_samples, nv))
    w = rigid_rotor_regressor(model, drive, q, qd, qdd)
    scale = np.linalg.norm(w, axis=0)
    scale[scale == 0] = 1.0
    _, r, perm = scipy.linalg.qr(w / scale, mode='economic', pivoting=True)
    diag = np.abs(np.diag(r))
    rank = int(np.sum(diag > rtol * diag[0]))
    ib, id_ = perm[:rank], perm[rank:]
    k = np.linalg.solve(r[:rank, :rank], r[:rank, rank:])
    # back to unscaled parameters: beta_i = theta_b + (s_d / s_b) k theta_d
    k = k * scale[id_][None, :] / scale[ib][:, None]
    order = np.argsort(ib)
    ib, k = ib[order], k[order]
    p = w.shape[1]
    bmat = np.zeros((rank, p))
    bmat[np.arange(rank), ib] = 1.0
    bmat[:, id_] = k
    bmat[np.abs(bmat) < 1e-10] = 0.0
    names_all = theta_names(model, drive.joint_names)
    names = []
    for i in range(rank):
        extra = [f'{bmat[i, c]:+.3g} {names_all[c]}' for c in id_ if bmat[i, c] != 0]
        names.append(' '.join([names_all[ib[i]]] + extra))
    return BaseParameters(ib, bmat, names)


def joint_limits(model: pin.Model, margin: float = 0.0):
    """Lower and upper position limits [rad], shrunk by ``margin``."""
    return (np.asarray(model.lowerPositionLimit) + margin,
            np.asarray(model.upperPositionLimit) - margin)


def solve_ls(a: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least squares ``min |a x - y|`` via the normal equations (Cholesky).

    Much cheaper than a QR/SVD of the tall matrix when BLAS threads compete for cores; falls
    back to ``lstsq`` on the small normal matrix when it is not positive definite.
    """
    ata = a.T @ a
    aty = a.T @ y
    try:
        c = scipy.linalg.cho_factor(ata)
        return scipy.linalg.cho_solve(c, aty)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(ata, aty, rcond=None)[0]


def cond_ne(a: np.ndarray) -> float:
    """2-norm condition number of a tall matrix from the eigenvalues of ``a^T a``."""
    ev = np.linalg.eigvalsh(a.T @ a)
    if ev[0] <= 0:
        return float('inf')
    return float(np.sqrt(ev[-1] / ev[0]))
