"""Tests of legid_ros.core.sim.described.locomotion (trot and stepping in place)."""

import numpy as np
import pinocchio as pin
import pytest
from scipy.interpolate import CubicSpline
from scipy.spatial import Delaunay

from legid_ros.core.errors import BadInputError
from legid_ros.core.sim.described.excitation import _polygon
from legid_ros.core.sim.described.locomotion import (contact_switches, plan_stepping,
                                                     plan_trot)

GRAVITY = 9.81  # [m/s^2]


def _soles(robot, plan, q):
    """World position of every sole frame [m] at configuration ``q``."""
    model, data = robot.model, robot.model.createData()
    pin.framesForwardKinematics(model, data, q)
    return {f: data.oMf[robot.frame_id(ft.sole_frame)].translation.copy()
            for f, ft in robot.feet.items()}


def _stance(plan, t):
    return {f for f, m in plan.stance_at(np.array([t])).items() if m[0]}


@pytest.fixture(scope='module')
def trot(solo12):
    return plan_trot(solo12, 8.0, seed=3)


@pytest.fixture(scope='module')
def stepping(talos):
    return plan_stepping(talos, 16.0, seed=3)


@pytest.mark.parametrize('which', ['trot', 'stepping'])
def test_stance_feet_stay_and_swing_feet_stay_above_ground(request, which):
    """At every knot the stance feet are where they started (1 mm) and the others not below
    the ground (1 mm); every foot rises at least 1 cm at some knot."""
    plan = request.getfixturevalue(which)
    robot = request.getfixturevalue('solo12' if which == 'trot' else 'talos')
    top = {f: 0.0 for f in robot.feet}
    for k, t in enumerate(plan.t):
        on = _stance(plan, t) | {f for _, t0, t1, st in plan.phases if abs(t - t1) < 1e-9
                                 for f in st}
        for f, p in _soles(robot, plan, plan.q[k]).items():
            if f in on:
                assert np.linalg.norm(p - plan.feet_world[f].translation) < 1e-3
            else:
                assert p[2] > -1e-3
                top[f] = max(top[f], p[2])
    assert all(h > 0.01 for h in top.values())


def test_trot_lifts_diagonal_pairs(trot, solo12):
    """Whenever two feet are off the ground they are a diagonal pair (one front, one hind, on
    opposite sides); never more than two."""
    pos = {f: trot.feet_world[f].translation[:2] for f in solo12.feet}
    for t in np.arange(0.0, trot.duration_s, 0.01):
        off = [f for f in solo12.feet if f not in _stance(trot, t)]
        assert len(off) in (0, 2)
        if off:
            a, b = (pos[f] for f in off)
            assert a[0] * b[0] < 0 and a[1] * b[1] < 0


@pytest.mark.parametrize('which, n_min', [('trot', 10), ('stepping', 4)])
def test_contacts_switch_periodically(request, which, n_min):
    """Every foot leaves and retouches the ground several times, all feet equally often (within
    one cycle), and the support pattern repeats with the cycle's period."""
    plan = request.getfixturevalue(which)
    sw = contact_switches(plan)
    assert min(sw.values()) >= n_min and max(sw.values()) - min(sw.values()) <= 2
    moves = [(t0, t1) for n, t0, t1, _ in plan.phases if n.startswith('lift')]
    period = moves[2][0] - moves[0][0]
    t = np.arange(moves[0][0], moves[-3][0], 0.01) + 0.003
    now, later = plan.stance_at(t), plan.stance_at(t + period)
    assert all(np.array_equal(now[f], later[f]) for f in now)


def test_stepping_zmp_stays_inside_the_support(stepping, talos):
    """The planned ZMP (CAD COM at the knots through a spline, point-mass form) stays inside
    the stance soles' hull, 5 mm margin."""
    model, data = talos.model, talos.model.createData()
    knots = np.array([pin.centerOfMass(model, data, q) for q in stepping.q])
    spline = CubicSpline(stepping.t, knots, bc_type='clamped')  # the COM through the knots
    t = np.arange(0.0, stepping.duration_s, 0.02)
    com, acc = spline(t), spline(t, 2)
    zmp = com[:, :2] - com[:, 2:3] / GRAVITY * acc[:, :2]
    for k in range(2, len(t) - 2):
        on = _stance(stepping, t[k])
        pts = _polygon(talos, stepping.feet_world, sorted(on))
        centre = pts.mean(axis=0)
        hull = Delaunay(centre + (pts - centre) * (1 - 0.005 / np.ptp(pts, axis=0).min()))
        assert hull.find_simplex(zmp[k]) >= 0, (t[k], on)


def test_plans_refuse_the_wrong_robot_or_too_short(solo12, talos):
    """A trot needs four feet and a cycle, stepping two feet and a step per foot."""
    with pytest.raises(BadInputError, match='four feet'):
        plan_trot(talos, 30.0)
    with pytest.raises(BadInputError, match='two feet'):
        plan_stepping(solo12, 30.0)
    with pytest.raises(BadInputError, match='at least'):
        plan_trot(solo12, 2.5)
    with pytest.raises(BadInputError, match='at least'):
        plan_stepping(talos, 6.0)


@pytest.mark.parametrize('name, duration', [('solo12', 5.0), ('talos', 10.0)])
def test_short_mujoco_run_does_not_fall(request, name, duration):
    """A few seconds of the plan in MuJoCo on the out-of-model truth: no fall, stance feet slip
    under 1 cm, the contact rule sees every foot leave the ground."""
    from legid_ros.core.contact.rule import contact_states, node_thresholds
    from legid_ros.core.sim.described import perturbed_truth, simulate_described
    robot = request.getfixturevalue(name)
    plan = (plan_trot if name == 'solo12' else plan_stepping)(robot, duration, seed=1)
    pi, _ = perturbed_truth(robot, seed=1)
    rec = simulate_described(robot, pi, plan=plan, seed=1, progress=False)
    assert not rec.meta['fell']
    assert rec.meta['stance_slip_max_m'] < 0.01
    fz = np.column_stack([w[:, 2] for w in rec.foot_wrench.values()])
    states = contact_states(fz, node_thresholds(robot)[0])
    assert np.abs(np.diff(states.astype(int), axis=0)).sum(axis=0).min() >= 2
