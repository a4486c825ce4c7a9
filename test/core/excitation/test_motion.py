"""Tests of legid_ros.core.excitation.motion and .trajectory."""

from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.excitation.motion import SAFE, leg_joints, min_duration_s, plan_motion
from legid_ros.core.excitation.trajectory import sample_plan
from legid_ros.core.inertial import get_parameters
from legid_ros.core.robot import load_robot


@pytest.fixture(scope='module')
def biped():
    return load_robot('biped')


@pytest.fixture(scope='module')
def plan(biped):
    return plan_motion(biped, 40.0, SAFE.scaled(3.0, swing_rpy=0.3))


def _stance_drift_m(robot, plan) -> float:
    """Largest distance of a stance sole from its start placement over the knots [m]."""
    data = robot.model.createData()
    worst = 0.0
    for t, q in zip(plan.t, plan.q):
        pin.framesForwardKinematics(robot.model, data, q)
        stance = plan.stance_at(np.array([t]))
        for f, ft in robot.feet.items():
            if stance[f][0]:
                p = data.oMf[robot.frame_id(ft.sole_frame)].translation
                worst = max(worst, float(np.linalg.norm(p - plan.feet_world[f].translation)))
    return worst


def test_stance_feet_stay_where_they_stand(biped, plan):
    """At every knot, each stance sole is within 2 mm of its start placement."""
    assert _stance_drift_m(biped, plan) < 2e-3


def test_every_foot_is_lifted(biped, plan):
    """Each foot has a swing phase in which the others carry the robot."""
    lifted = {f for name, _, _, stance in plan.phases if name.startswith('swing')
              for f in biped.feet if f not in stance}
    assert lifted == set(biped.feet)


def test_amplitude_widens_the_joint_motion(biped, plan):
    """Three times the safe amplitudes use a wider joint range than the safe motion."""
    safe = plan_motion(biped, 40.0, SAFE)
    span = lambda p: float(np.ptp(p.q[:, 7:], axis=0).sum())
    assert span(plan) > 1.2 * span(safe)


def test_too_short_is_refused(biped):
    """A duration below the minimum raises BadInputError naming the minimum."""
    with pytest.raises(BadInputError, match='at least'):
        plan_motion(biped, 0.5 * min_duration_s(biped))


def test_cad_zmp_follows_the_com_when_slow(biped, plan):
    """On the dense grid the CAD ZMP stays within 3 cm of the COM's ground projection."""
    traj = sample_plan(biped, plan, get_parameters(biped.model), dt=0.02)
    data = biped.model.createData()
    com = np.array([pin.centerOfMass(biped.model, data, q)[:2] for q in traj.q[::10]])
    assert np.abs(com - traj.zmp_cad[::10]).max() < 0.03
    assert traj.tau_cad.shape == (len(traj.t), len(biped.actuated_joint_names))


@pytest.fixture(scope='module')
def sweep(biped):
    return plan_motion(biped, 40.0, replace(SAFE, swing_joint=0.8, swing_z=0.16))


def test_joint_sweep_keeps_stance_feet_fixed(biped, sweep):
    """With swing targets drawn in joint space, each stance sole stays within 2 mm of its start
    placement at every knot."""
    assert _stance_drift_m(biped, sweep) < 2e-3


def test_joint_sweep_turns_the_swing_leg_wider(biped, sweep, plan):
    """A 0.8 rad joint sweep moves the swinging legs' joints through a wider range than swing
    targets at three times the safe reach around the feet's homes."""
    def swing_span(p):
        span = 0.0
        for f in biped.feet:
            idx = leg_joints(biped, f)
            sel = np.zeros(len(p.t), bool)
            for name, t0, t1, _ in p.phases:
                if name == f'swing_{f}':
                    sel |= (p.t >= t0) & (p.t <= t1)
            span += float(np.ptp(p.q[sel][:, idx], axis=0).sum())
        return span
    assert swing_span(sweep) > 1.3 * swing_span(plan)


def test_joint_sweep_ends_where_the_lift_ended(biped, sweep):
    """The last swing phase of each foot brings its leg back to the lifted posture (the foot
    goes down from where it was lifted to)."""
    for f in biped.feet:
        idx = leg_joints(biped, f)
        lift_end = max(t1 for name, _, t1, _ in sweep.phases if name == f'lift_{f}')
        swing_end = max(t1 for name, _, t1, _ in sweep.phases if name == f'swing_{f}')
        q_lift = sweep.q[np.argmin(np.abs(sweep.t - lift_end))]
        q_back = sweep.q[np.argmin(np.abs(sweep.t - swing_end))]
        assert np.abs(q_back[idx] - q_lift[idx]).max() < 0.05


def test_placement_swings_end_over_the_home(biped, plan):
    """With swing targets around the home, the last swing phase of each foot ends with the
    sole over its home (the foot goes down vertically)."""
    data = biped.model.createData()
    for f, ft in biped.feet.items():
        swing_end = max(t1 for name, _, t1, _ in plan.phases if name == f'swing_{f}')
        q = plan.q[np.argmin(np.abs(plan.t - swing_end))]
        pin.framesForwardKinematics(biped.model, data, q)
        p = data.oMf[biped.frame_id(ft.sole_frame)].translation
        assert np.linalg.norm(p[:2] - plan.feet_world[f].translation[:2]) < 2e-3
        assert p[2] > 0.01
