"""Real rclpy tests of the controller node: published torques equal the core computation."""

import os
import time

import numpy as np
import pytest
import rclpy
from builtin_interfaces.msg import Duration
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from legid_ros.core.buffer.schema import BufferConfig, ChannelSchema
from legid_ros.core.feedforward import (FeedforwardModel, FloatingFeedforward,
                                        PdFeedforwardController, PdGains,
                                        reflected_rotor_inertia)
from legid_ros.core.inertial import get_parameters, parameter_names
from legid_ros.core.robot import load_robot
from legid_ros.ros.controller_node import DIAG_NAME, ControllerNode
from legid_ros.ros.conversions import diagnostic_values, parameters_msg, window_msg

from pipeline_helpers import EVENT_S, set_remote

OUT_ORDER = ['knee', 'hip_abad', 'hip_flex']
STATE_ORDER = ['hip_flex', 'knee', 'hip_abad']
Q = {'hip_abad': 0.05, 'hip_flex': 0.4, 'knee': 1.1}  # [rad]
QD = {'hip_abad': 0.1, 'hip_flex': -0.2, 'knee': 0.3}  # [rad/s]
REF = {'hip_abad': (0.06, 0.2, 1.0), 'hip_flex': (0.41, -0.1, -2.0), 'knee': (1.08, 0.5, 3.0)}


class Harness:
    """A controller node plus a test node that feeds and records it."""

    def __init__(self, overrides=None):
        ns = f'controller_test_{os.getpid()}'  # private topics: no cross-talk on a shared domain
        self.ctl = ControllerNode(namespace=ns, parameter_overrides=overrides or [
            Parameter('robot', value='leg3'), Parameter('joint_names', value=OUT_ORDER),
            Parameter('rate_hz', value=500.0),
            Parameter('state_timeout_s', value=60.0)])  # a busy machine may stall for seconds
        self.io = rclpy.create_node('controller_test_io', namespace=ns)
        self.pub_state = self.io.create_publisher(JointState, 'joint_states', 10)
        self.pub_ref = self.io.create_publisher(JointTrajectory, 'legid/reference', 10)
        self.pub_par = self.io.create_publisher(Float64MultiArray, 'legid/parameters', 10)
        self.pub_win = self.io.create_publisher(Float64MultiArray, 'legid/window', 10)
        self.ff, self.cmd, self.diag = [], [], []
        self.io.create_subscription(Float64MultiArray, 'legid/feedforward', self.ff.append, 10)
        self.io.create_subscription(JointState, 'legid/command', self.cmd.append, 10)
        self.io.create_subscription(DiagnosticArray, '/diagnostics', self.diag.append, 10)
        self.ex = SingleThreadedExecutor()
        self.ex.add_node(self.ctl)
        self.ex.add_node(self.io)
        assert self.spin_until(lambda: self.pub_state.get_subscription_count() > 0
                               and self.pub_ref.get_subscription_count() > 0
                               and self.pub_par.get_subscription_count() > 0)

    def spin_until(self, cond, timeout=EVENT_S):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.ex.spin_once(timeout_sec=0.01)
            if cond():
                return True
        return False

    def spin_for(self, seconds):
        self.spin_until(lambda: False, seconds)

    def send_state(self):
        msg = JointState(name=STATE_ORDER, position=[Q[j] for j in STATE_ORDER],
                         velocity=[QD[j] for j in STATE_ORDER])
        self.pub_state.publish(msg)

    def send_ref(self, names, values):
        pt = JointTrajectoryPoint(positions=[v[0] for v in values],
                                  velocities=[v[1] for v in values],
                                  accelerations=[v[2] for v in values],
                                  time_from_start=Duration())
        self.pub_ref.publish(JointTrajectory(joint_names=names, points=[pt]))

    def close(self):
        self.ex.shutdown()
        self.ctl.destroy_node()
        self.io.destroy_node()


@pytest.fixture
def harness():
    rclpy.init()
    h = Harness()
    yield h
    h.close()
    rclpy.shutdown()


def _expected(leg, pi=None, gains=None):
    ff = FeedforwardModel(leg, pi=pi, rotor_inertia=reflected_rotor_inertia(leg))
    ctl = PdFeedforwardController.for_robot(leg, ff, gains=gains)
    names = leg.actuated_joint_names
    out = ctl.step([Q[j] for j in names], [QD[j] for j in names], *[
        [REF[j][k] for j in names] for k in range(3)])
    order = [names.index(j) for j in OUT_ORDER]
    return out.tau_ff[order], out.tau[order]


def test_published_torques_equal_core_computation(harness):
    """legid/feedforward and legid/command carry the core's tau_ff and tau in joint_names order."""
    leg = load_robot('leg3', floating_base=False)
    harness.send_state()
    harness.send_ref(['hip_flex', 'hip_abad', 'knee'], [REF[j] for j in
                                                        ['hip_flex', 'hip_abad', 'knee']])
    assert harness.spin_until(lambda: len(harness.ff) >= 3 and len(harness.cmd) >= 3)
    tau_ff, tau = _expected(leg)
    np.testing.assert_allclose(harness.ff[-1].data, tau_ff, rtol=1e-9, atol=1e-9)
    cmd = harness.cmd[-1]
    assert list(cmd.name) == OUT_ORDER
    np.testing.assert_allclose(cmd.effort, tau, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(cmd.position, [REF[j][0] for j in OUT_ORDER])
    # a new identified parameter set (heavier shank) changes the torques to the core's
    pi = get_parameters(leg.model)
    pi[20:30] *= 1.5
    harness.pub_par.publish(parameters_msg(pi, parameter_names(leg.model)))
    tau_ff2, tau2 = _expected(leg, pi)
    assert harness.spin_until(lambda: np.allclose(harness.ff[-1].data, tau_ff2, atol=1e-9))
    assert not np.allclose(tau_ff2, tau_ff)
    assert harness.ctl.counts['parameter_updates'] == 1


@pytest.mark.parametrize('case', ['unknown_joint', 'nan'])
def test_bad_reference_gives_diagnostic_and_no_command(harness, case):
    """A reference with an unknown joint or NaN yields an ERROR diagnostic and no command."""
    harness.send_state()
    names = ['hip_abad', 'hip_flex', 'knee']
    values = [REF[j] for j in names]
    if case == 'unknown_joint':
        names = ['hip_abad', 'hip_flex', 'ankle']
    else:
        values[1] = (float('nan'), 0.0, 0.0)
    harness.send_ref(names, values)

    def error_seen():
        for msg in harness.diag:
            st = diagnostic_values(msg, DIAG_NAME)
            if st is not None and st[0] == 2 and 'bad_references' in st[1]:
                return True
        return False

    assert harness.spin_until(error_seen)
    harness.spin_for(0.3)
    assert harness.ff == [] and harness.cmd == []
    assert harness.ctl.counts['bad_references'] == 1


def test_mismatched_parameter_names_are_rejected(harness):
    """Parameters whose names do not match the model are refused with a diagnostic."""
    harness.pub_par.publish(parameters_msg(np.ones(3), ['a.m', 'b.m', 'c.m']))
    assert harness.spin_until(lambda: harness.ctl.counts['bad_parameters'] == 1)
    assert harness.ctl.counts['parameter_updates'] == 0
    leg = load_robot('leg3', floating_base=False)
    np.testing.assert_allclose(harness.ctl.ff.parameters, get_parameters(leg.model))


def test_whole_trajectory_is_held_at_its_last_point(harness):
    """After a whole trajectory ends, the command holds its last position at rest."""
    leg = load_robot('leg3', floating_base=False)
    names = leg.actuated_joint_names
    harness.send_state()
    last = {'hip_abad': 0.1, 'hip_flex': 0.5, 'knee': 1.3}
    pts = [JointTrajectoryPoint(positions=[Q[j] for j in names], time_from_start=Duration()),
           JointTrajectoryPoint(positions=[last[j] for j in names],
                                time_from_start=Duration(nanosec=50_000_000))]
    harness.pub_ref.publish(JointTrajectory(joint_names=names, points=pts))
    assert harness.spin_until(lambda: len(harness.cmd) > 0)
    harness.send_state()
    end = [last[j] for j in OUT_ORDER]
    # the trajectory lasts 50 ms: wait for the command to reach its end (however long the
    # machine takes to get there), then check that it holds it at rest
    assert harness.spin_until(lambda: np.allclose(harness.cmd[-1].position, end, atol=1e-12))
    n = len(harness.cmd)
    assert harness.spin_until(lambda: len(harness.cmd) > n)
    cmd = harness.cmd[-1]
    np.testing.assert_allclose(cmd.position, end)
    np.testing.assert_allclose(cmd.velocity, 0.0)
    ctl = PdFeedforwardController.for_robot(
        leg, FeedforwardModel(leg, rotor_inertia=reflected_rotor_inertia(leg)))
    out = ctl.step([Q[j] for j in names], [QD[j] for j in names], [last[j] for j in names],
                   np.zeros(3), np.zeros(3))
    order = [names.index(j) for j in OUT_ORDER]
    np.testing.assert_allclose(cmd.effort, out.tau[order], rtol=1e-9, atol=1e-9)


def test_runtime_gains_change_the_command(harness):
    """kp and kd set at run time (as ros2 param set does) are used from the next cycle on."""
    leg = load_robot('leg3', floating_base=False)
    names = leg.actuated_joint_names
    harness.send_state()
    harness.send_ref(names, [REF[j] for j in names])
    _, tau = _expected(leg)
    assert harness.spin_until(lambda: harness.cmd and np.allclose(harness.cmd[-1].effort, tau,
                                                                  atol=1e-9))
    gains = PdGains([100.0, 200.0, 300.0], [10.0, 20.0, 30.0])
    results = set_remote(harness.ex, harness.io, harness.ctl.get_fully_qualified_name(),
                         kp=gains.kp.tolist(), kd=gains.kd.tolist())
    assert all(r.successful for r in results), [r.reason for r in results]
    _, tau2 = _expected(leg, gains=gains)
    assert not np.allclose(tau2, tau)
    assert harness.spin_until(lambda: np.allclose(harness.cmd[-1].effort, tau2, atol=1e-9))


@pytest.fixture
def biped_harness():
    rclpy.init()
    h = Harness([Parameter('robot', value='biped'), Parameter('floating_base', value=True),
                 Parameter('rate_hz', value=500.0), Parameter('state_timeout_s', value=60.0),
                 Parameter('use_measured_wrenches', value=True)])
    yield h
    h.close()
    rclpy.shutdown()


def test_floating_biped_uses_contact_consistent_feedforward(biped_harness):
    """A floating biped gets the whole-body feedforward: the contact QP over stance_feet
    without buffer rows, the measured wrench of a buffer row once one arrives."""
    from legid_ros.core.synthetic.motion import BipedIK, Target

    h = biped_harness
    biped = load_robot('biped', floating_base=True)
    names = biped.actuated_joint_names
    ik = BipedIK(biped, biped.model)
    q, ok = ik.solve(ik.initial(), Target(np.array([0.02, 0.13, 0.0]), 0.0,
                                          np.array([0.0, 0.02]), 0.5, 0.0))
    assert ok
    q = q[7:]
    qdd = np.linspace(-0.5, 0.5, len(names))
    h.pub_state.publish(JointState(name=names, position=q.tolist(), velocity=[0.0] * 12))
    h.pub_ref.publish(JointTrajectory(joint_names=names, points=[JointTrajectoryPoint(
        positions=q.tolist(), velocities=[0.0] * 12, accelerations=qdd.tolist(),
        time_from_start=Duration())]))
    core = FloatingFeedforward(biped, rotor_inertia=reflected_rotor_inertia(biped))
    core.set_contacts(('left', 'right'))
    expected_qp = core.torque(q, np.zeros(12), qdd)
    assert h.spin_until(lambda: len(h.ff) >= 2)
    assert len(h.ff[-1].data) == 12
    np.testing.assert_allclose(h.ff[-1].data, expected_qp, atol=1e-6)
    # a buffer row: right foot only, 6-axis wrench at its F/T frame
    schema = ChannelSchema.for_config(BufferConfig(joint_names=names, feet=['left', 'right']))
    row = np.zeros(len(schema))
    row[schema.index('ok')] = 1.0
    row[schema.index('contact.right')] = 1.0
    for k in range(4):
        row[schema.index(('imu.qx', 'imu.qy', 'imu.qz', 'imu.qw')[k])] = np.nan
    w = np.array([2.0, -1.0, 320.0, 1.5, -2.0, 0.1])
    for a, v in zip(('fx', 'fy', 'fz', 'tx', 'ty', 'tz'), w):
        row[schema.index(f'wrench.right.{a}')] = v
    h.pub_win.publish(window_msg(row[None, :], schema))
    core.set_contacts(('right',), {'right': w}, {'right': 'r_ankle_ft'})
    expected_meas = core.torque(q, np.zeros(12), qdd)
    assert not np.allclose(expected_meas, expected_qp, atol=1e-3)
    assert h.spin_until(lambda: np.allclose(h.ff[-1].data, expected_meas, atol=1e-6))
    assert h.ctl.counts['measured_contact_cycles'] > 0
