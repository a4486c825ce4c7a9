"""Identification rows of a geared fixed-base leg: rigid body + rotor + friction columns.

The leg model of the two-step identification of Xiao, Qian & Luo 2025. Parameter vector
``theta = [pi (10 per link, pinocchio order), J (one per joint)]`` where ``J`` is the rotor
inertia on the motor side [kg.m^2]; its column is ``ratio^2 qdd`` on its joint's row. Rows are
stacked sample-major: row ``3 k + j`` is joint ``j`` at sample ``k``. Friction columns are
those of any linear :class:`legid_ros.core.friction.models.FrictionModel`. The base parameters
of these rows come from the shared QR of :mod:`legid_ros.core.identification.parameters.base`
(:func:`legid_ros.core.identification.fixed_base.leg_base_parameters`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Sequence

import numpy as np
import pinocchio as pin

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


def joint_limits(model: pin.Model, margin: float = 0.0):
    """Lower and upper position limits [rad], shrunk by ``margin``."""
    return (np.asarray(model.lowerPositionLimit) + margin,
            np.asarray(model.upperPositionLimit) - margin)
