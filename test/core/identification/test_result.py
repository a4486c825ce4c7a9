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


def test_summary_says_when_the_solver_did_not_converge():
    """A result whose solver stopped short says so in its summary; a converged one does not."""
    import numpy as np

    from legid_ros.core.identification.result import IdentResult
    from legid_ros.core.inertial import check_consistency, pack

    pi = pack(1.0, np.zeros(3), np.eye(3) * 0.01)
    kw = dict(method='zmp_newton', pi=pi, x=pi, names=[], param_names=[], total_mass=1.0,
              condition_number=1.0, residual_rms=0.0, solve_time_s=0.0, iterations=3,
              consistency=check_consistency(pi, ['a']))
    stalled = IdentResult(**kw, info={'converged': False, 'status': 'stalled',
                                      'kkt_residual': 1e-3})
    assert 'NOT converged' in stalled.summary() and "'stalled'" in stalled.summary()
    assert 'NOT converged' not in IdentResult(**kw, info={'converged': True}).summary()
