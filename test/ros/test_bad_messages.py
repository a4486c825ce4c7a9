"""Nodes survive malformed messages (real rclpy): an empty JointState, NaN fields, mismatched
arrays, a wrench in the wrong frame, garbage windows each cost that message and a counted
cause; the node stays alive and keeps producing output on the good input that follows."""

import math

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from legid_ros.core.synthetic import SyntheticConfig, simulate_biped
from legid_ros.ros import conversions as cv
from legid_ros.ros.buffer_node import BufferNode
from legid_ros.ros.controller_node import DIAG_NAME as CTL_DIAG
from legid_ros.ros.controller_node import NAME_CACHE_SIZE, ControllerNode
from legid_ros.ros.estimator_node import EstimatorNode
from legid_ros.ros.node_util import sensor_qos

from pipeline_helpers import params, ros_context, spin_until

pytestmark = pytest.mark.timeout(600)
N = 900  # good samples (0.9 s at 1 kHz)
BAD_AT = 300  # the bad messages come before this sample
FT = {'left': 'l_ankle_ft', 'right': 'r_ankle_ft'}


@pytest.fixture(scope='module')
def recording():
    """0.9 s of the biped."""
    return simulate_biped(SyntheticConfig(duration_s=N / 1000.0, seed=5))


def _bad_messages(rec, t):
    """(topic, message) of every bad case, stamped ``t``."""
    names = list(rec.joint_names)
    nan_q = rec.q[BAD_AT].copy()
    nan_q[2] = np.nan
    short = cv.joint_state_msg(t, names, rec.q[BAD_AT])
    short.position = short.position[:3]
    wrong = cv.wrench_msg(t, 'some_other_frame', rec.foot_wrench['left'][BAD_AT])
    nan_imu = cv.imu_msg(t, 'imu_link', rec.imu_quat[BAD_AT], [math.nan] * 3, [math.inf] * 3)
    return [('js', JointState()), ('js', cv.joint_state_msg(t, names, nan_q)), ('js', short),
            ('js', cv.joint_state_msg(t, ['x'] * 10000, np.zeros(10000))),
            ('left', wrong), ('left', WrenchStamped()), ('imu', nan_imu), ('imu', Imu())]


def _good(rec, k, t):
    out = [('imu', cv.imu_msg(t, 'imu_link', rec.imu_quat[k], rec.imu_gyro[k], rec.imu_acc[k]))]
    out += [(f, cv.wrench_msg(t, FT[f], rec.foot_wrench[f][k])) for f in ('left', 'right')]
    out.append(('js', cv.joint_state_msg(t, rec.joint_names, rec.q[k], rec.qd[k], rec.tau[k])))
    return out


def _garbage_windows():
    empty = Float64MultiArray()
    wrong = Float64MultiArray(data=[1.0, 2.0, 3.0])
    wrong.layout.dim = [MultiArrayDimension(label='rows', size=7, stride=21),
                        MultiArrayDimension(label='nonsense', size=3, stride=3)]
    return [empty, wrong]


@pytest.mark.parametrize('raw', [True, False], ids=['raw_decoding', 'rclpy_decoding'])
def test_buffer_and_estimator_survive_bad_messages(recording, raw):
    """After every bad case the buffer still emits windows and the estimator still folds."""
    rec = recording
    t0 = 100.0
    with ros_context() as (ctx, ex, nodes):
        buf = BufferNode(context=ctx, parameter_overrides=params(
            force_sensing='wrench', window_length=100, window_hop=50, raw_decoding=raw,
            queue_depth=5000, diagnostics_period_s=1000.0))
        est = EstimatorNode(context=ctx, parameter_overrides=params(
            min_samples=50, update_period_s=0.2, state_file='', publish_markers=False))
        src = Node('source', context=ctx)
        nodes += [buf, est, src]
        qos = sensor_qos(5000)
        pubs = {'js': src.create_publisher(JointState, 'joint_states', qos),
                'imu': src.create_publisher(Imu, 'imu', qos),
                'left': src.create_publisher(WrenchStamped, 'left_foot/wrench', qos),
                'right': src.create_publisher(WrenchStamped, 'right_foot/wrench', qos)}
        pub_win = src.create_publisher(Float64MultiArray, 'legid/window', 50)
        windows, diags = [], []
        src.create_subscription(Float64MultiArray, 'legid/window',
                                lambda m: windows.append(m), 500)
        src.create_subscription(DiagnosticArray, '/diagnostics', diags.append, 500)
        for n in nodes:
            ex.add_node(n)
        assert spin_until(ex, lambda: pubs['js'].get_subscription_count() > 0
                          and pub_win.get_subscription_count() > 0)
        for k in range(N):
            t = t0 + rec.t[k]
            if k == BAD_AT:
                for topic, msg in _bad_messages(rec, t - 0.0005):
                    pubs[topic].publish(msg)
                for msg in _garbage_windows():
                    pub_win.publish(msg)
            for topic, msg in _good(rec, k, t):
                pubs[topic].publish(msg)
            if k % 100 == 99:
                spin_until(ex, lambda: False, 0.02)
        t_bad = t0 + rec.t[BAD_AT]
        assert spin_until(ex, lambda: buf.received['joint_states'] >= N + 4
                          and any(_last_stamp(w) > t_bad + 0.3 for w in windows))
        assert spin_until(ex, lambda: est.windows >= 3 and est.folded > 0)
        events = dict(buf.buffer.events)
    for cause in ('missing_joints', 'nonfinite_position', 'bad_position_length',
                  'wrong_frame_id'):
        assert events.get(cause, 0) >= 1, (cause, events)
    assert est.events.get('bad_window', 0) == 2, est.events
    buffer_diags = [d for d in diags if cv.diagnostic_values(d, 'legid buffer')]
    assert len(buffer_diags) <= 1  # period 1000 s: only the first problem is published early


def _last_stamp(msg):
    """Last row stamp of a window message [s] (-1 for the garbage ones)."""
    try:
        win, _ = cv.window_from_msg(msg)
    except ValueError:
        return -1.0
    return float(win[-1, 0]) if len(win) else -1.0


def test_controller_survives_bad_states_with_bounded_cache():
    """Bad joint states are counted, the name cache stays bounded, /diagnostics is limited,
    and the next valid state + reference give a finite command."""
    with ros_context() as (ctx, ex, nodes):
        ctl = ControllerNode(context=ctx, parameter_overrides=params(
            robot='leg3', rate_hz=200.0, state_timeout_s=100.0, diagnostics_period_s=1000.0))
        io = Node('io', context=ctx)
        nodes += [ctl, io]
        pub_state = io.create_publisher(JointState, 'joint_states', 100)
        pub_ref = io.create_publisher(JointTrajectory, 'legid/reference', 10)
        ff, diags = [], []
        io.create_subscription(Float64MultiArray, 'legid/feedforward', ff.append, 10)
        io.create_subscription(DiagnosticArray, '/diagnostics',
                               lambda m: diags.append(m) if cv.diagnostic_values(
                                   m, CTL_DIAG) else None, 100)
        for n in nodes:
            ex.add_node(n)
        assert spin_until(ex, lambda: pub_state.get_subscription_count() > 0
                          and pub_ref.get_subscription_count() > 0)
        names = ['hip_abad', 'hip_flex', 'knee']
        bad = [JointState(), JointState(name=names, position=[0.0, math.nan, 0.0],
                                        velocity=[0.0] * 3),
               JointState(name=names, position=[0.0], velocity=[0.0] * 3)]
        bad += [JointState(name=names + [f'extra_{i}'], position=[0.0] * 4,
                           velocity=[0.0] * 4) for i in range(200)]
        for msg in bad:  # best-effort input (sensor QoS): one message at a time
            seen = ctl.counts['bad_states'] + len(ctl._state_map)
            pub_state.publish(msg)
            spin_until(ex, lambda: ctl.counts['bad_states'] + len(ctl._state_map) > seen
                       or len(ctl._state_map) == NAME_CACHE_SIZE, 5.0)
        assert spin_until(ex, lambda: ctl.counts['bad_states'] >= 3
                          and len(ctl._state_map) == NAME_CACHE_SIZE)
        pub_state.publish(JointState(name=names, position=[0.0, 0.3, 0.9], velocity=[0.0] * 3))
        pub_ref.publish(JointTrajectory(joint_names=names, points=[JointTrajectoryPoint(
            positions=[0.0, 0.3, 0.9], velocities=[0.0] * 3, accelerations=[0.0] * 3)]))
        assert spin_until(ex, lambda: len(ff) > 0)
        assert ctl.counts['bad_states'] == 3
        assert np.isfinite(ff[-1].data).all()
        assert len(diags) <= 1
