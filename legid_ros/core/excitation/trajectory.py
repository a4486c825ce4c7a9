"""A planned motion on a dense time grid: full states, CAD contact wrenches and torques.

The joints follow the plan's clamped cubic spline (what the servos track); the floating base
follows a cubic spline through the IK knots' base placements (position, and rotation vector
about the first knot's orientation). Velocities and accelerations are central differences on
the grid (``pin.difference``). At the CAD parameters, the whole-body wrench regressor gives the
ground-on-robot wrench and the ZMP; the feedforward torques are the floating-base inverse
dynamics with the contact wrench spread over the stance feet by least squares (each stance
foot's frame Jacobian: 6-D for a flat sole, 3-D for a point foot).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List

import numpy as np
import pinocchio as pin
from scipy.interpolate import CubicSpline

from legid_ros.core.conventions.convert import matrix_quat
from legid_ros.core.errors import BadInputError
from legid_ros.core.identification.rows.regressors import bases_to_world
from legid_ros.core.identification.rows.zmp import model_zmp
from legid_ros.core.robot import Robot
from legid_ros.core.sim.described.excitation import StandingPlan


@dataclass
class DenseTrajectory:
    """A plan sampled every ``dt`` [s].

    Attributes:
        t: Times [s] (N,).
        q, v, a: Full configuration, velocity, acceleration (N, nq), (N, nv), (N, nv).
        stance: Per foot, standing on it (N,) bool.
        wrench: World wrench regressors about the origin (N, 6, P).
        zmp_cad: ZMP / CoP at the CAD parameters (N, 2) [m].
        fz_cad: Vertical contact force at CAD (N,) [N].
        tau_cad: CAD feedforward joint torques (N, nj) [N.m].
        friction_ratio: Largest tangential / normal force over the stance feet of the
            least-squares contact distribution (N,) [-] (inf where a stance foot pulls).
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    stance: Dict[str, np.ndarray]
    wrench: np.ndarray
    zmp_cad: np.ndarray
    fz_cad: np.ndarray
    tau_cad: np.ndarray
    friction_ratio: np.ndarray

    @property
    def dt(self) -> float:
        """Grid step [s]."""
        return float(self.t[1] - self.t[0])


def _base_path(plan: StandingPlan, t: np.ndarray) -> np.ndarray:
    """Base placements (N, 7) along ``t`` from the knots (cubic in position and rotation
    vector about the first knot's orientation)."""
    quat0 = pin.Quaternion(plan.q[0, 6], plan.q[0, 3], plan.q[0, 4], plan.q[0, 5])
    r0 = quat0.toRotationMatrix()
    rv = np.array([pin.log3(r0.T @ pin.Quaternion(k[6], k[3], k[4], k[5]).toRotationMatrix())
                   for k in plan.q])
    pos = CubicSpline(plan.t, plan.q[:, :3], bc_type='clamped')(t)
    rot = CubicSpline(plan.t, rv, bc_type='clamped')(t)
    out = np.zeros((len(t), 7))
    out[:, :3] = pos
    for k, w in enumerate(rot):
        out[k, 3:] = matrix_quat(r0 @ pin.exp3(w))
    return out


def sample_plan(robot: Robot, plan: StandingPlan, pi_cad: np.ndarray, dt: float = 0.02
                ) -> DenseTrajectory:
    """The plan on a grid of ``dt`` [s] with its CAD dynamics.

    Raises:
        BadInputError: ``dt`` not positive or longer than a tenth of the plan.
    """
    if not 0 < dt <= plan.duration_s / 10:
        raise BadInputError(f'grid step {dt} s for a {plan.duration_s:g} s plan')
    model = robot.model
    data = model.createData()
    t = np.arange(int(np.floor(plan.duration_s / dt)) + 1) * dt
    q = np.hstack([_base_path(plan, t), plan.joint_reference(t)])
    n = len(t)
    v = np.zeros((n, model.nv))
    for k in range(1, n - 1):
        v[k] = pin.difference(model, q[k - 1], q[k + 1]) / (2 * dt)
    a = np.zeros_like(v)
    a[1:-1] = (v[2:] - v[:-2]) / (2 * dt)
    pi_cad = np.asarray(pi_cad, float)
    wrench = np.zeros((n, 6, 10 * (model.njoints - 1)))
    gen = np.zeros((n, model.nv))  # CAD generalized forces [N, N.m]
    for k in range(n):
        reg = pin.computeJointTorqueRegressor(model, data, q[k], v[k], a[k])
        wrench[k] = reg[:6]
        gen[k] = reg @ pi_cad
    for s in range(0, n, 1024):
        wrench[s:s + 1024] = bases_to_world(q[s:s + 1024]) @ wrench[s:s + 1024]
    zmp, fz = model_zmp(wrench, pi_cad)
    stance = plan.stance_at(t)
    tau, ratio = _feedforward(robot, q, gen, stance)
    return DenseTrajectory(t, q, v, a, stance, wrench, zmp, fz, tau, ratio)


def _feedforward(robot: Robot, q: np.ndarray, gen: np.ndarray,
                 stance: Dict[str, np.ndarray]):
    """Joint torques [N.m]: ``gen[6:] - J_c^T lambda`` with ``J_c,base^T lambda = gen[:6]``
    (least squares, minimum norm) over the stance feet's contact Jacobians; and per sample
    the largest tangential / normal ratio of the stance feet's forces (world axes)."""
    model = robot.model
    data = model.createData()
    fids = {f: robot.frame_id(ft.sole_frame) for f, ft in robot.feet.items()}
    point = {f: ft.contact == 'point' or ft.sole_size is None for f, ft in robot.feet.items()}
    tau = np.zeros((len(q), model.nv - 6))
    ratio = np.zeros(len(q))
    for k in range(len(q)):
        pin.computeJointJacobians(model, data, q[k])
        pin.updateFramePlacements(model, data)
        rows: List[np.ndarray] = []
        rots: List[np.ndarray] = []  # force block of each contact -> world axes
        for f, fid in fids.items():
            if not stance[f][k]:
                continue
            if point[f]:
                rows.append(pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED)[:3])
                rots.append(np.eye(3))
            else:
                rows.append(pin.getFrameJacobian(model, data, fid, pin.LOCAL))
                rots.append(data.oMf[fid].rotation)
        if not rows:
            tau[k] = gen[k, 6:]
            continue
        jc = np.vstack(rows)
        lam = np.linalg.lstsq(jc[:, :6].T, gen[k, :6], rcond=None)[0]
        tau[k] = gen[k, 6:] - jc[:, 6:].T @ lam
        at = 0
        for blk, rot in zip(rows, rots):
            f = rot @ lam[at:at + 3]
            at += blk.shape[0]
            ratio[k] = max(ratio[k], np.hypot(f[0], f[1]) / f[2] if f[2] > 0 else np.inf)
    return tau, ratio
