"""Tests of legid_ros.core.identification.result: the fixed-base leg's LegIdentResult."""

import numpy as np
import pinocchio as pin

from legid_ros.core.friction.models import JointFriction, Piecewise
from legid_ros.core.identification.result import LegIdentResult


def test_result_round_trip_and_model(leg_run, tmp_path):
    """A saved result loads back with identical torques; its model carries the armature."""
    robot, truth, ctx, (q, qd, qdd, tau), _ = leg_run
    res = LegIdentResult('truth', 'leg3', list(ctx.drive.joint_names), ctx.link_names,
                         truth.pi, truth.drive.rotor_inertia, truth.drive.gear_ratio,
                         JointFriction(list(ctx.drive.joint_names),
                                       # continuous at v_th (loaded models are checked)
                                       [Piecewise(f_sh=-0.03, f_vh=0.1) for _ in range(3)]))
    res.save(tmp_path / 'r.yaml')
    back = LegIdentResult.load(tmp_path / 'r.yaml')
    assert np.allclose(back.torque(robot, q[:10], qd[:10], qdd[:10]),
                       res.torque(robot, q[:10], qd[:10], qdd[:10]))
    model = res.model(robot)
    assert np.allclose(model.armature, truth.drive.reflected_inertia)
    m = pin.crba(model, model.createData(), q[0])
    assert np.all(np.diag(m) > truth.drive.reflected_inertia)
