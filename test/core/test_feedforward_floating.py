"""Tests of legid_ros.core.feedforward.floating and contact_state (floating-base feedforward)."""

from types import SimpleNamespace

import numpy as np
import pinocchio as pin
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.feedforward import FloatingFeedforward
from legid_ros.core.feedforward.contact_state import (reading_from_window, sensor_offsets,
                                                      sole_wrench)
from legid_ros.core.inertial import get_parameters
from legid_ros.core.robot import load_robot
from legid_ros.core.synthetic.motion import BipedIK, Target
from legid_ros.core.synthetic.truth import OUT_OF_MODEL_TRUTH, perturbed_truth

G = 9.81


@pytest.fixture(scope='module')
def biped():
    return load_robot('biped', floating_base=True)


@pytest.fixture(scope='module')
def postures(biped):
    """Joint angles standing on both feet and on the right foot (left lifted)."""
    ik = BipedIK(biped, biped.model)
    out = {}
    for name, left, com in (('double', [0.02, 0.13, 0.0], [0.01, 0.065]),
                            ('single', [0.02, 0.13, 0.05], [0.0, 0.0])):
        q, ok = ik.solve(ik.initial(), Target(np.array(left), 0.0, np.array(com), 0.5, 0.0))
        assert ok
        out[name] = q[7:]
    return out


def _com_in_sole(ff, sole):
    """COM of the model with the feedforward's last base pose, in a sole frame [m]."""
    data = ff.model.createData()
    pin.centerOfMass(ff.model, data, ff._q)
    pin.framesForwardKinematics(ff.model, data, ff._q)
    return data.oMf[ff.model.getFrameId(sole)].actInv(data.com[0])


def test_static_single_support_foot_carries_the_true_weight(biped, postures):
    """Standing still on one foot, the stance wrench is the truth's weight under its COM."""
    pi_true = perturbed_truth(biped, OUT_OF_MODEL_TRUTH)
    ff = FloatingFeedforward(biped, pi=pi_true, stance=('right',))
    z = np.zeros(12)
    terms = ff.evaluate(postures['single'], z, z)
    w = terms.wrenches['right']
    mass = pi_true[0::10].sum()
    assert abs(mass - get_parameters(biped.model)[0::10].sum()) > 0.5  # the truth differs
    np.testing.assert_allclose(w[:3], [0.0, 0.0, mass * G], atol=1e-6)
    com = _com_in_sole(ff, 'r_sole')
    np.testing.assert_allclose([-w[4] / w[2], w[3] / w[2]], com[:2], atol=1e-9)  # CoP = COM


def test_stance_soles_stay_at_rest(biped, postures):
    """The base twist and acceleration keep the stance sole's velocity and acceleration zero."""
    rng = np.random.default_rng(3)
    ff = FloatingFeedforward(biped, stance=('right',))
    qd, qdd = rng.normal(0, 0.5, 12), rng.normal(0, 2.0, 12)
    t = ff.evaluate(postures['single'], qd, qdd)
    v, a = np.r_[t.base_velocity, qd], np.r_[t.base_acceleration, qdd]
    data = ff.model.createData()
    pin.forwardKinematics(ff.model, data, ff._q, v, a)
    sid = ff.model.getFrameId('r_sole')
    np.testing.assert_allclose(pin.getFrameVelocity(ff.model, data, sid, pin.LOCAL).vector, 0,
                               atol=1e-10)
    np.testing.assert_allclose(pin.getFrameAcceleration(ff.model, data, sid, pin.LOCAL).vector,
                               0, atol=1e-9)
    assert np.abs(t.base_acceleration).max() > 0.1  # the base does move


def test_whole_body_equation_holds_with_the_qp_wrenches(biped, postures):
    """M a + h = S^T tau + sum J^T w on every row, in double support."""
    rng = np.random.default_rng(4)
    ff = FloatingFeedforward(biped, stance=('left', 'right'))
    qd, qdd = 0.05 * rng.normal(size=12), 0.2 * rng.normal(size=12)
    t = ff.evaluate(postures['double'], qd, qdd)
    model, data = ff.model, ff.model.createData()
    full = ff._q.copy()
    rhs = pin.rnea(model, data, full, np.r_[t.base_velocity, qd], np.r_[t.base_acceleration,
                                                                          qdd])
    pin.computeJointJacobians(model, data, full)
    contact = sum(pin.getFrameJacobian(model, data, model.getFrameId(f'{f[0]}_sole'),
                                       pin.LOCAL).T @ w for f, w in t.wrenches.items())
    np.testing.assert_allclose(rhs - contact, np.r_[np.zeros(6), t.tau], atol=1e-4)
    assert min(w[2] for w in t.wrenches.values()) > 50.0  # both feet carry


def test_measured_wrench_at_the_ankle_gives_the_qp_torques(biped, postures):
    """The QP's sole wrench, moved to the ankle F/T frame and fed as measured, gives the same
    torques (frames are handled)."""
    rng = np.random.default_rng(5)
    ff = FloatingFeedforward(biped, stance=('right',))
    qd, qdd = 0.3 * rng.normal(size=12), rng.normal(size=12)
    t_qp = ff.evaluate(postures['single'], qd, qdd)
    data = ff.model.createData()
    pin.framesForwardKinematics(ff.model, data, ff._q)
    sole = data.oMf[ff.model.getFrameId('r_sole')]
    ft = data.oMf[ff.model.getFrameId('r_ankle_ft')]
    w_ft = (ft.inverse() * sole).act(pin.Force(t_qp.wrenches['right'])).vector
    ff.set_contacts(('right',), {'right': w_ft})
    t_meas = ff.evaluate(postures['single'], qd, qdd)
    assert t_meas.measured
    np.testing.assert_allclose(t_meas.tau, t_qp.tau, atol=1e-8)
    assert t_meas.base_residual < 1e-8


def test_imu_orientation_and_parameters_reach_the_torques(biped, postures):
    """An IMU agreeing with the flat sole changes nothing; a heavier trunk raises the knee
    torque of the stance leg."""
    z = np.zeros(12)
    ff = FloatingFeedforward(biped, stance=('right',))
    tau = ff.torque(postures['single'], z, z)
    data = ff.model.createData()
    pin.framesForwardKinematics(ff.model, data, ff._q)
    imu = data.oMf[ff.model.getFrameId(biped.imu_frame)]
    quat = pin.Quaternion(imu.rotation).coeffs()  # [x, y, z, w]
    ff.set_contacts(('right',), base_quat=quat)
    np.testing.assert_allclose(ff.torque(postures['single'], z, z), tau, atol=1e-9)
    pi = get_parameters(biped.model)
    pi[0:10] *= 1.3  # trunk
    ff.set_parameters(pi)
    ff.set_contacts(('right',))
    knee = biped.actuated_joint_names.index('r_knee')
    assert abs(ff.torque(postures['single'], z, z)[knee]) > 1.1 * abs(tau[knee])


def test_bad_contact_states_are_refused(biped):
    """Unknown or no stance feet, malformed wrenches and a fixed base raise BadInputError."""
    ff = FloatingFeedforward(biped)
    for kwargs in ({'stance': ()}, {'stance': ('nose',)},
                   {'stance': ('right',), 'wrenches': {'left': np.zeros(6)}},
                   {'stance': ('right',), 'wrenches': {'right': [np.nan] * 6}},
                   {'stance': ('right',), 'base_quat': [0.0, 0.0, 0.0, 0.0]}):
        with pytest.raises(BadInputError):
            ff.set_contacts(**kwargs)
    with pytest.raises(BadInputError):
        FloatingFeedforward(load_robot('biped', floating_base=False))


def test_sole_sensors_and_window_rows_give_the_contact_state(biped):
    """Sole-sensor forces sum to a wrench whose CoP is their weighted centre; the latest ok row
    of a window gives the stance feet, wrenches and IMU orientation."""
    offsets = sensor_offsets(biped)
    forces = np.array([100.0, 50.0, 30.0, 20.0])
    w = sole_wrench(forces, offsets['right'])
    cop = forces @ offsets['right'][:, :2] / forces.sum()
    np.testing.assert_allclose([-w[4] / w[2], w[3] / w[2]], cop, atol=1e-12)
    assert abs(cop).max() > 0.005  # the sensors are off the sole centre
    rows = 3
    data = SimpleNamespace(
        t=np.arange(rows) * 0.01, ok=np.array([True, True, False]), feet=['left', 'right'],
        foot_wrench={}, fsr={'left': np.zeros((rows, 4)), 'right': np.tile(forces, (rows, 1))},
        contact=np.array([[1.0, 1.0], [0.0, 1.0], [1.0, 1.0]]),
        imu_quat=np.tile([0.0, 0.0, 0.0, 1.0], (rows, 1)))
    r = reading_from_window(data, biped, offsets)
    assert r.stance == ('right',) and r.t == pytest.approx(0.01)
    np.testing.assert_allclose(r.wrenches['right'], w)
    assert r.frames['right'] == 'r_sole'
    data.ok[:] = False
    with pytest.raises(BadInputError):
        reading_from_window(data, biped, offsets)


def test_a_wrench_at_the_foot_link_is_read_at_the_link_without_an_ft_frame(biped, postures):
    """A foot with no ft_frame has its wrench at the foot link (the buffer's wrench frame, not
    the sole's): the window's reading and set_contacts read it there and give the QP torques."""
    import copy
    import dataclasses
    robot = copy.copy(biped)
    robot.feet = {f: dataclasses.replace(ft, ft_frame=None) for f, ft in biped.feet.items()}
    foot = robot.feet['right']
    assert foot.wrench_frame == foot.link != foot.sole_frame
    rng = np.random.default_rng(6)
    ff = FloatingFeedforward(robot, stance=('right',))
    qd, qdd = 0.3 * rng.normal(size=12), rng.normal(size=12)
    t_qp = ff.evaluate(postures['single'], qd, qdd)
    data = ff.model.createData()
    pin.framesForwardKinematics(ff.model, data, ff._q)
    sole = data.oMf[ff.model.getFrameId(foot.sole_frame)]
    link = data.oMf[ff.model.getFrameId(foot.link)]
    w_link = (link.inverse() * sole).act(pin.Force(t_qp.wrenches['right'])).vector
    window = SimpleNamespace(
        t=np.zeros(1), ok=np.array([True]), feet=['left', 'right'],
        foot_wrench={'left': np.zeros((1, 6)), 'right': w_link[None, :]}, fsr={},
        contact=np.array([[0.0, 1.0]]), imu_quat=np.array([[0.0, 0.0, 0.0, 1.0]]))
    reading = reading_from_window(window, robot)
    assert reading.frames['right'] == foot.link
    for frames in (reading.frames, None):
        ff.set_contacts(('right',), {'right': w_link}, frames=frames)
        t_meas = ff.evaluate(postures['single'], qd, qdd)
        assert t_meas.measured
        np.testing.assert_allclose(t_meas.tau, t_qp.tau, atol=1e-8)
