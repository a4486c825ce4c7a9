"""The nodes' spin helper: it serves callbacks, stops on ``until`` and on its deadline, also on a
node with simulated time and no /clock, and leaves no timer behind."""

import time

import pytest
from rclpy.node import Node
from std_msgs.msg import Float64

from legid_ros.ros.executor import spin

from pipeline_helpers import EVENT_S, params, ros_context

pytestmark = pytest.mark.timeout(300)


def test_spin_stops_when_until_turns_true_on_simulated_time_without_a_clock():
    """until() is polled on the steady clock: no /clock (sim time stuck at 0) still stops it."""
    with ros_context() as (ctx, ex, nodes):
        node = Node('spin_probe', context=ctx, parameter_overrides=params(use_sim_time=True))
        nodes.append(node)
        got = []
        node.create_subscription(Float64, 'spin_probe/x', got.append, 10)
        pub = node.create_publisher(Float64, 'spin_probe/x', 10)
        polls = []
        t0 = time.monotonic()

        def until():
            polls.append(time.monotonic())
            if len(polls) % 3 == 0:
                pub.publish(Float64(data=float(len(polls))))
            return len(got) >= 3

        spin(node, executor=ex, until=until, timeout_s=EVENT_S, poll_s=0.05)
        assert len(got) >= 3, 'the subscription was not served while spinning'
        assert time.monotonic() - t0 < EVENT_S - 1.0, 'stopped by the deadline, not by until()'
        assert node.get_clock().now().nanoseconds == 0  # simulated time never ran
        assert not list(node.timers), 'the polling timer was left on the node'


def test_spin_returns_at_its_deadline():
    """Without until(), spin returns once timeout_s has passed (and not long after)."""
    with ros_context() as (ctx, ex, nodes):
        node = Node('spin_deadline', context=ctx)
        nodes.append(node)
        t0 = time.monotonic()
        spin(node, executor=ex, timeout_s=0.5, poll_s=0.05)
        took = time.monotonic() - t0
        assert took >= 0.5 - 1e-3
        assert took < EVENT_S
