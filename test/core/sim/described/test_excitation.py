"""Tests of legid_ros.core.sim.described.excitation (the standing excitation of any robot)."""

import numpy as np
import pinocchio as pin
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.sim.described import plan_standing


@pytest.mark.parametrize('name, duration', [('solo12', 45.0), ('talos', 25.0)])
def test_stance_feet_stay_and_com_stays_over_the_support(request, name, duration):
    """At every IK knot the stance feet are where they stand (1 mm), half-way between knots
    (the joint spline, the base interpolated) within 5 mm; every foot is lifted once; the CAD
    COM stays over the stance feet."""
    robot = request.getfixturevalue(name)
    plan = plan_standing(robot, duration, seed=2)
    model, data = robot.model, robot.model.createData()
    t_mid = 0.5 * (plan.t[1:] + plan.t[:-1])
    q_mid = plan.joint_reference(t_mid)
    lifted = {f: 0.0 for f in robot.feet}
    for k in range(len(plan.t)):
        on = {f for _, t0, t1, st in plan.phases if t0 <= plan.t[k] <= t1 for f in st}
        pin.framesForwardKinematics(model, data, plan.q[k])
        for f, foot in robot.feet.items():
            p = data.oMf[robot.frame_id(foot.sole_frame)].translation
            if f in on:
                assert np.linalg.norm(p - plan.feet_world[f].translation) < 1e-3
            else:
                lifted[f] = max(lifted[f], p[2])
        com = pin.centerOfMass(model, data, plan.q[k])
        pts = np.array([plan.feet_world[f].translation[:2] for f in on])
        assert np.all(com[:2] > pts.min(axis=0) - 0.12) and np.all(com[:2] < pts.max(axis=0)
                                                                   + 0.12)
        if k + 1 < len(plan.t):
            stay = on & {f for _, t0, t1, st in plan.phases
                         if t0 <= plan.t[k + 1] <= t1 for f in st}
            q = pin.interpolate(model, plan.q[k], plan.q[k + 1], 0.5)
            q[7:] = q_mid[k]
            pin.framesForwardKinematics(model, data, q)
            for f in stay:
                p = data.oMf[robot.frame_id(robot.feet[f].sole_frame)].translation
                assert np.linalg.norm(p - plan.feet_world[f].translation) < 5e-3
    assert all(h > 0.01 for h in lifted.values())


def test_too_short_a_plan_is_refused(solo12):
    """A duration that cannot lift every foot is refused, naming the minimum."""
    with pytest.raises(BadInputError, match='at least'):
        plan_standing(solo12, 10.0)


def test_targets_a_robot_cannot_reach_are_tempered(g1, talos, monkeypatch):
    """G1's ankle roll (+-0.26 rad) cannot lean the trunk over its stance sole as far as some
    random swing targets ask: those targets are replaced by the reachable point part of the way
    (listed in ``tempered``), the stance feet stay within 2 mm at every knot; a robot that
    reaches every target (Talos) has none tempered; without the retreat, the error names the
    joints at their limits."""
    from legid_ros.core.errors import SolverError
    from legid_ros.core.sim.described import excitation
    plan = plan_standing(g1, 40.0, seed=0)
    assert plan.tempered and all(0.0 <= f < 1.0 for _, f in plan.tempered)
    assert all(name.startswith(('stand', 'swing')) for name, _ in plan.tempered)
    model, data = g1.model, g1.model.createData()
    for k in range(len(plan.t)):
        on = {f for _, t0, t1, st in plan.phases if t0 <= plan.t[k] <= t1 for f in st}
        pin.framesForwardKinematics(model, data, plan.q[k])
        for f in on:
            p = data.oMf[g1.frame_id(g1.feet[f].sole_frame)].translation
            assert np.linalg.norm(p - plan.feet_world[f].translation) < 2e-3
    assert plan_standing(talos, 25.0, seed=0).tempered == []
    monkeypatch.setattr(excitation, 'RETREAT', ())
    with pytest.raises(SolverError, match='ankle_roll_joint'):
        plan_standing(g1, 40.0, seed=0)
