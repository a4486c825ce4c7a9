"""Single-support postures of the biped by damped least-squares IK (pinocchio, CAD model).

Used to start the physics standing on one foot and for short standing tests; the excitation
motion itself comes from the synthetic planner (:mod:`legid_ros.core.synthetic`).
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import pinocchio as pin

from legid_ros.core.errors import UnreachableTargetError
from legid_ros.core.robot import Robot

LOCAL = pin.ReferenceFrame.LOCAL


def single_support_posture(robot: Robot, support: str = 'right',
                           com_xy: Sequence[float] = (0.0, 0.0),
                           swing_xyz: Optional[Sequence[float]] = None,
                           q_init: Optional[np.ndarray] = None, iters: int = 200,
                           tol: float = 1e-9) -> np.ndarray:
    """Full configuration with the support sole at the world origin (flat, yaw 0).

    Tasks (weighted least squares, damped): support sole pose = identity; swing sole at
    ``swing_xyz`` in the world, flat; whole-body COM x, y = ``com_xy``; trunk upright. The
    yaw joints stay at zero.

    Args:
        robot: Floating-base biped (``feet`` must hold ``support`` and one other foot).
        support: Name of the support foot.
        com_xy: Target COM ground projection in the support sole frame [m].
        swing_xyz: Target swing sole position [m]; default: beside the support foot, 5 cm up.
        q_init: Start configuration (default: slightly bent knees).
        iters: Maximum Gauss-Newton iterations.
        tol: Stop when the squared task error is below this [m^2].

    Returns:
        Configuration ``q`` (pinocchio, base XYZ + quaternion [x, y, z, w]).

    Raises:
        UnreachableTargetError: the tasks cannot be met (residual above 1 mm).
    """
    model = robot.model
    data = model.createData()
    swing = [f for f in robot.feet if f != support][0]
    sup_id = robot.frame_id(robot.feet[support].sole_frame)
    sw_id = robot.frame_id(robot.feet[swing].sole_frame)
    base_id = robot.frame_id(robot.base_link)
    q = pin.neutral(model) if q_init is None else np.array(q_init, float)
    if q_init is None:
        for name, val in (('hip_pitch', -0.35), ('knee', 0.7), ('ankle_pitch', -0.35)):
            for j in range(2, model.njoints):
                if model.names[j].endswith(name):
                    q[model.idx_qs[j]] = val
        pin.framesForwardKinematics(model, data, q)
        q[:7] = pin.SE3ToXYZQUAT(data.oMf[sup_id].inverse())
    pin.framesForwardKinematics(model, data, q)
    if swing_xyz is None:
        p = data.oMf[sw_id].translation
        swing_xyz = (p[0], p[1], 0.05)
    target_sw = pin.SE3(np.eye(3), np.asarray(swing_xyz, float))
    fixed = [model.idx_vs[j] for j in range(2, model.njoints) if model.names[j].endswith('yaw')]
    free = np.ones(model.nv, bool)
    free[fixed] = False
    err = np.inf
    for _ in range(iters):
        pin.framesForwardKinematics(model, data, q)
        pin.computeJointJacobians(model, data, q)
        com = pin.centerOfMass(model, data, q)
        e_sup = pin.log6(data.oMf[sup_id]).vector
        e_sw = pin.log6(target_sw.actInv(data.oMf[sw_id])).vector
        e_com = com[:2] - np.asarray(com_xy, float)
        e_up = pin.log3(data.oMf[base_id].rotation)
        j_sup = pin.Jlog6(data.oMf[sup_id]) @ pin.getFrameJacobian(model, data, sup_id, LOCAL)
        j_sw = pin.getFrameJacobian(model, data, sw_id, LOCAL)
        j_com = pin.jacobianCenterOfMass(model, data, q)[:2]
        j_up = pin.getFrameJacobian(model, data, base_id, LOCAL)[3:]
        err_vec = np.concatenate([10 * e_sup, e_sw, 10 * e_com, 0.3 * e_up])
        jac = np.vstack([10 * j_sup, j_sw, 10 * j_com, 0.3 * j_up])[:, free]
        err = float(np.sum(np.concatenate([e_sup, e_sw, e_com]) ** 2))
        if err < tol:
            break
        dv = np.zeros(model.nv)
        dv[free] = -np.linalg.solve(jac.T @ jac + 1e-6 * np.eye(free.sum()), jac.T @ err_vec)
        q = pin.integrate(model, q, dv)
        q[model.nq - model.nv + 6:] = np.clip(
            q[model.nq - model.nv + 6:], model.lowerPositionLimit[7:],
            model.upperPositionLimit[7:])
    if err > 1e-6:
        raise UnreachableTargetError(swing, 0.0, float(np.sqrt(err)))
    return q
