"""Tests of legid_ros.core.identification.rows.regressors against pinocchio's RNEA and frame
kinematics."""

import numpy as np
import pinocchio as pin
import pytest

from legid_ros.core.contact.base_state import support_base_state
from legid_ros.core.inertial import get_parameters
from legid_ros.core.identification.rows.regressors import (base_to_world, compute_regressors,
                                                           coulomb_viscous_columns, zmp_rows)
from legid_ros.core.robot import load_robot


@pytest.fixture(scope='module')
def robot():
    """Floating-base biped."""
    return load_robot('biped')


def _joint_motion(n=40, seed=0):
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 2, n)
    amp, w = rng.normal(0, 0.3, 12), rng.uniform(1, 3, 12)
    q = amp * np.sin(np.outer(t, w))
    return t, q, amp * w * np.cos(np.outer(t, w)), -amp * w ** 2 * np.sin(np.outer(t, w))


def test_support_state_keeps_sole_still_at_origin(robot):
    """The support sole is at the world origin, flat, with zero velocity and acceleration."""
    _, q, qd, qdd = _joint_motion()
    st = support_base_state(robot, q, qd, qdd, 'right')
    data = robot.new_data()
    fid = robot.frame_id('r_sole')
    for k in (0, 17, 39):
        pin.forwardKinematics(robot.model, data, st['q'][k], st['v'][k], st['a'][k])
        pin.updateFramePlacements(robot.model, data)
        assert data.oMf[fid].translation == pytest.approx(np.zeros(3), abs=1e-12)
        assert data.oMf[fid].rotation == pytest.approx(np.eye(3), abs=1e-12)
        assert pin.getFrameVelocity(robot.model, data, fid).vector == pytest.approx(
            np.zeros(6), abs=1e-10)
        assert pin.getFrameAcceleration(robot.model, data, fid).vector == pytest.approx(
            np.zeros(6), abs=1e-9)


def test_support_state_velocity_matches_pose_derivative(robot):
    """The base twist equals the numerical derivative of the base pose."""
    t, q, qd, qdd = _joint_motion(n=2001)
    st = support_base_state(robot, q[1000:1002], qd[1000:1002], qdd[1000:1002], 'left')
    dq = pin.difference(robot.model, st['q'][0], st['q'][1]) / (t[1] - t[0])
    assert dq[:6] == pytest.approx(0.5 * (st['v'][0, :6] + st['v'][1, :6]), abs=1e-5)


def test_support_state_takes_roll_pitch_from_imu(robot):
    """With an IMU quaternion, the base roll/pitch are the IMU's, the sole centre stays put."""
    _, q, qd, qdd = _joint_motion(n=3)
    flat = support_base_state(robot, q, qd, qdd, 'right')
    rot_flat = pin.Quaternion(flat['q'][0, 6], *flat['q'][0, 3:6]).toRotationMatrix()
    rpy = pin.rpy.matrixToRpy(rot_flat)
    target = pin.rpy.rpyToMatrix(rpy[0] + 0.002, rpy[1] - 0.001, rpy[2] + 0.3)
    quat = pin.Quaternion(target).coeffs()  # imu_link has the trunk's orientation
    st = support_base_state(robot, q, qd, qdd, 'right', np.tile(quat, (3, 1)))
    rot = pin.Quaternion(st['q'][0, 6], *st['q'][0, 3:6]).toRotationMatrix()
    got = pin.rpy.matrixToRpy(rot)
    assert got == pytest.approx([rpy[0] + 0.002, rpy[1] - 0.001, rpy[2]], abs=1e-9)
    data = robot.new_data()
    pin.framesForwardKinematics(robot.model, data, st['q'][0])
    assert data.oMf[robot.frame_id('r_sole')].translation == pytest.approx(np.zeros(3),
                                                                           abs=1e-12)


def test_wrench_and_torque_rows_match_rnea(robot):
    """W pi is the RNEA base wrench in the world; fixed-support torque rows match RNEA."""
    _, q, qd, qdd = _joint_motion(n=5, seed=4)
    st = support_base_state(robot, q, qd, qdd, 'right')
    regs = compute_regressors(robot, st['q'], st['v'], st['a'], 'right', ('wrench', 'torque'))
    pi = get_parameters(robot.model)
    data = robot.new_data()
    fid = robot.frame_id('r_sole')
    for k in range(5):
        tau = pin.rnea(robot.model, data, st['q'][k], st['v'][k], st['a'][k])
        assert regs.wrench[k] @ pi == pytest.approx(base_to_world(st['q'][k]) @ tau[:6])
        jac = pin.computeFrameJacobian(robot.model, data, st['q'][k], fid, pin.LOCAL)
        lam = np.linalg.solve(jac[:, :6].T, tau[:6])
        assert regs.torque[k] @ pi == pytest.approx(tau[6:] - jac[:, 6:].T @ lam, abs=1e-9)


def _floating_case(robot, frame: str, n: int, seed: int):
    """Support states of a random motion on the right foot, and the joint efforts and right
    foot wrench (in ``frame``) of the same dynamics."""
    _, q, qd, qdd = _joint_motion(n=n, seed=seed)
    st = support_base_state(robot, q, qd, qdd, 'right')
    data = robot.new_data()
    fid = robot.frame_id(frame)
    taus, wrenches = [], []
    for k in range(n):
        tau = pin.rnea(robot.model, data, st['q'][k], st['v'][k], st['a'][k])
        jac = pin.computeFrameJacobian(robot.model, data, st['q'][k], fid, pin.LOCAL)
        w = np.linalg.solve(jac[:, :6].T, tau[:6])
        taus.append(tau[6:] - jac[:, 6:].T @ w)
        wrenches.append(w)
    return st, np.array(taus), np.array(wrenches)


def test_floating_rows_balance_efforts_and_ft_wrench(robot):
    """Y pi equals S^T tau + J_ft^T w_ft when tau and w_ft come from the same dynamics."""
    st, tau, wrench = _floating_case(robot, 'r_ankle_ft', 4, 5)
    pi = get_parameters(robot.model)
    regs = compute_regressors(robot, st['q'], st['v'], st['a'], 'right', ('floating',),
                              tau=tau, foot_wrench={'right': wrench})
    for k in range(4):
        assert regs.floating[k] @ pi == pytest.approx(regs.floating_rhs[k], abs=1e-9)


def test_zmp_rows_give_zmp_error_in_metres(robot):
    """With fz = model fz, the two rows times pi are measured minus model ZMP [m]."""
    _, q, qd, qdd = _joint_motion(n=3, seed=6)
    st = support_base_state(robot, q, qd, qdd, 'right')
    regs = compute_regressors(robot, st['q'], st['v'], st['a'])
    pi = get_parameters(robot.model)
    w = regs.wrench @ pi
    model = np.column_stack([-w[:, 4] / w[:, 2], w[:, 3] / w[:, 2]])
    meas = model + np.array([[0.01, -0.02], [0.0, 0.005], [-0.003, 0.0]])
    rows = zmp_rows(regs.wrench, meas, w[:, 2])
    assert (rows @ pi).reshape(-1, 2) == pytest.approx(meas - model, abs=1e-12)


def test_coulomb_viscous_columns_layout():
    """Viscous then smoothed-Coulomb columns, one joint per row."""
    f = coulomb_viscous_columns(np.array([0.5, -2.0]))
    assert f @ np.array([1.0, 2.0, 3.0, 4.0]) == pytest.approx(
        [0.5 + 3 * np.tanh(50), -4.0 - 4 * np.tanh(200)])


def test_floating_rows_without_ft_frame_use_the_foot_link(robot):
    """A foot whose description names no ft_frame has its wrench in its link frame: the
    floating rows balance with the wrench solved at the link (no crash on ft_frame None)."""
    import copy
    bare = copy.copy(robot)
    bare.feet = dict(robot.feet)
    bare.feet['right'] = copy.copy(robot.feet['right'])
    bare.feet['right'].ft_frame = None
    st, tau, wrench = _floating_case(robot, robot.feet['right'].link, 3, 7)
    pi = get_parameters(robot.model)
    regs = compute_regressors(bare, st['q'], st['v'], st['a'], 'right', ('floating',),
                              tau=tau, foot_wrench={'right': wrench})
    for k in range(3):
        assert regs.floating[k] @ pi == pytest.approx(regs.floating_rhs[k], abs=1e-9)


def test_point_feet_forces_act_where_the_sphere_touches(solo12, solo12_run):
    """Solo12 in MuJoCo (truth outside the model): with the true parameters the floating-base
    rows balance on average once each point foot's force acts at the sphere's rolling lowest
    point (the shank is tilted; a point fixed on the shank left a 0.15 N.m mean pitch moment):
    every base row's mean residual under 0.01 N or N.m, the pitch row's RMS under 0.03 N.m."""
    from legid_ros.bench.robots import PREP
    from legid_ros.core.identification.api import prepare, split_options
    from legid_ros.core.identification.rows.linear import build_rows
    rec = solo12_run.slice(0, 3000)
    samples = prepare(rec, solo12, split_options(PREP)[0])
    rows = build_rows(samples, solo12, 'floating', friction=False)
    resid = (rows.A @ solo12_run.pi_true - rows.b).reshape(samples.n, -1)[:, :6]
    assert np.abs(resid.mean(axis=0)).max() < 0.01
    assert np.sqrt(np.mean(resid[:, 4] ** 2)) < 0.03
