"""Robustness of buffer + estimator (real rclpy) against bad input: each case yields a
diagnostic, the nodes keep running, every valid sample reaches a window, and no physically
inconsistent parameter set is published."""

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from rcl_interfaces.msg import SetParametersResult
from rcl_interfaces.srv import SetParameters
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray

from legid_ros.core.inertial import check_consistency
from legid_ros.core.robot import load_robot
from legid_ros.core.synthetic import SyntheticConfig, simulate_biped
from legid_ros.ros import conversions as cv
from legid_ros.ros.buffer_node import DIAG_NAME, BufferNode
from legid_ros.ros.estimator_node import EstimatorNode
from legid_ros.ros.node_util import latched_qos, sensor_qos
from legid_ros.ros.robustness import ProblemCounts, guarded

from pipeline_helpers import params, ros_context, spin_until

pytestmark = pytest.mark.timeout(120)
N = 1200  # samples per case (1.2 s at 1 kHz)
FT_FRAME = {'left': 'l_ankle_ft', 'right': 'r_ankle_ft'}  # the biped description's F/T frames


@pytest.fixture(scope='module')
def recording():
    """1.2 s of the biped with sensor noise."""
    return simulate_biped(SyntheticConfig(duration_s=N / 1000.0, seed=11))


def _stream(rec, case):
    """Messages (topic, msg) of one case and the stamps of its valid joint states."""
    names = list(rec.joint_names)
    out, valid = [], []
    offset = 100.0
    order = list(range(rec.n))
    if case == 'out_of_order_duplicate':
        order[300], order[301] = order[301], order[300]
        order.insert(600, order[599])
    segments = [(offset, order)]
    if case == 'clock_jump_back':
        segments = [(offset, order[:700]), (offset - 5.0, order[:700])]
    for off, idx in segments:
        for k in idx:
            t = off + rec.t[k]
            q, qd, tau = rec.q[k].copy(), rec.qd[k], rec.tau[k]
            nm = names
            ok = True
            if case == 'nonfinite' and k in (200, 201):
                q[3] = np.nan if k == 200 else np.inf
                ok = False
            if case == 'names' and k >= 400:
                nm = ['bogus'] + names[::-1]
                q, qd, tau = np.r_[7.0, q[::-1]], np.r_[0.0, qd[::-1]], np.r_[0.0, tau[::-1]]
            if case == 'missing_fields' and k >= 300:
                qd = tau = None
            js = cv.joint_state_msg(t, nm, q, qd, tau)
            if case == 'missing_fields' and k >= 300:
                js.velocity, js.effort = [], []
            acc = rec.imu_acc[k].copy()
            if case == 'nonfinite' and k == 500:
                acc[0] = np.nan
            out.append(('imu', cv.imu_msg(t, 'imu_link', rec.imu_quat[k], rec.imu_gyro[k], acc)))
            for foot in ('left', 'right'):
                if case == 'silent_foot' and foot == 'right' and 400 <= k < 800:
                    continue
                w = rec.foot_wrench[foot][k].copy()
                if case == 'nonfinite' and k == 700 and foot == 'left':
                    w[2] = np.inf
                out.append((foot, cv.wrench_msg(t, FT_FRAME[foot], w)))
            out.append(('js', js))
            if ok:
                valid.append(t)
    return out, np.unique(valid)


EXPECTED_EVENT = {'nonfinite': 'nonfinite_position', 'names': 'unknown_joint_names',
                  'missing_fields': 'missing_velocity',
                  'out_of_order_duplicate': 'duplicate_stamp', 'silent_foot': 'stale_force_right',
                  'clock_jump_back': 'clock_jump_back', 'burst': None}


@pytest.mark.parametrize('case', list(EXPECTED_EVENT))
def test_bad_input_case(recording, case, tmp_path):
    """The case is reported in /diagnostics, valid samples all reach windows, no bad params."""
    robot = load_robot('biped')
    msgs, valid = _stream(recording, case)
    with ros_context() as (ctx, ex, nodes):
        buf = BufferNode(context=ctx, parameter_overrides=params(
            force_sensing='wrench', window_length=100, window_hop=50, diagnostics_period_s=0.2,
            idle_flush_s=0.2, queue_depth=5000))
        est = EstimatorNode(context=ctx, parameter_overrides=params(
            min_samples=200, update_period_s=0.2, state_file='', publish_markers=False))
        src = Node('source', context=ctx)
        probe = Node('probe', context=ctx)
        nodes += [buf, est, src, probe]
        qos = sensor_qos(5000)
        pubs = {'js': src.create_publisher(JointState, 'joint_states', qos),
                'imu': src.create_publisher(Imu, 'imu', qos),
                'left': src.create_publisher(WrenchStamped, 'left_foot/wrench', qos),
                'right': src.create_publisher(WrenchStamped, 'right_foot/wrench', qos)}
        windows, params_msgs, diags = [], [], []
        probe.create_subscription(Float64MultiArray, 'legid/window',
                                  lambda m: windows.append(cv.window_from_msg(m)[0]), 500)
        probe.create_subscription(Float64MultiArray, 'legid/parameters',
                                  lambda m: params_msgs.append(cv.parameters_from_msg(m)),
                                  latched_qos(100))
        probe.create_subscription(DiagnosticArray, '/diagnostics', diags.append, 500)
        for n in nodes:
            ex.add_node(n)
        assert spin_until(ex, lambda: pubs['js'].get_subscription_count() > 0)
        chunk = 10**6 if case == 'burst' else 200
        for start in range(0, len(msgs), chunk):
            for topic, m in msgs[start:start + chunk]:
                pubs[topic].publish(m)
            spin_until(ex, lambda: False, 0.02)
        spin_until(ex, lambda: buf.received['joint_states'] >= len(
            [m for m in msgs if m[0] == 'js']))
        spin_until(ex, lambda: buf.buffer.pending == 0 and bool(windows) and
                   buf.buffer.rows_emitted >= len(valid))
        # every window the buffer published has reached the probe, and the case's WARN its
        # /diagnostics (events, not time)
        spin_until(ex, lambda: len(windows) >= buf.windows_published)

        def buffer_statuses():
            return [s for s in (cv.diagnostic_values(d, DIAG_NAME) for d in diags) if s]
        expected = EXPECTED_EVENT[case]
        spin_until(ex, lambda: expected is None or (
            expected in ' '.join(f'{s[1]} {" ".join(s[2])}' for s in buffer_statuses())
            and any(s[0] == 1 for s in buffer_statuses())))
        statuses = buffer_statuses()
        assert est.windows > 0 and buf.windows_published > 0  # both nodes kept working
    seen = np.unique(np.concatenate([w[:, 0] for w in windows]))
    missing = np.setdiff1d(valid, seen)
    assert missing.size == 0, f'{missing.size} valid samples lost, e.g. {missing[:5]}'
    text = ' '.join(f'{s[1]} {" ".join(s[2])}' for s in statuses)
    if expected is not None:
        assert expected in text, text[-500:]
        assert any(s[0] == 1 for s in statuses)  # WARN level
    for values, _ in params_msgs:
        assert check_consistency(values, robot.body_names).ok


def test_failed_set_parameters_call_still_answers_every_parameter():
    """A SetParameters service callback that raises replies one refused result per parameter
    (not an empty list) and counts the failure."""
    def fail(request, response):
        response.results.append(SetParametersResult(successful=True))
        raise OverflowError('timer period too long')

    problems = ProblemCounts()
    request = SetParameters.Request(parameters=[
        Parameter(n, value=1.0).to_parameter_msg() for n in ('a', 'b', 'c')])
    response = guarded(fail, problems, None, service=True)(request, SetParameters.Response())
    assert [r.successful for r in response.results] == [True, False, False]
    assert 'too long' in response.results[2].reason
    assert problems.counts == {'callback_error.OverflowError': 1}


def test_timer_callback_is_guarded_and_carries_an_empty_signature():
    """A GuardedNode timer hands rclpy a callback with a preset empty signature (rclpy reads it
    at every tick) that still counts a failure instead of raising."""
    import inspect

    from legid_ros.ros.robustness import GuardedNode

    with ros_context() as (ctx, _executor, nodes):
        node = GuardedNode('legid_test_timer_signature', context=ctx)
        nodes.append(node)
        calls = []

        def tick():
            calls.append(1)
            raise ValueError('bad tick')
        timer = node.create_timer(10.0, tick)
        assert timer.callback.__signature__ == inspect.Signature()
        assert inspect.signature(timer.callback).parameters == {}
        timer.callback()
        assert calls == [1]
        assert node.problems.counts == {'callback_error.ValueError': 1}
