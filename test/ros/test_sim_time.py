"""Simulated time end to end (real rclpy): the sim publishes /clock, and with use_sim_time the
buffer and the estimator run on it: windows flow and parameters are solved and published."""

import pytest
from rosgraph_msgs.msg import Clock
from rclpy.node import Node
from std_msgs.msg import Float64MultiArray

from legid_ros.core.synthetic import SyntheticConfig, simulate_biped
from legid_ros.ros import conversions as cv
from legid_ros.ros.buffer_node import BufferNode
from legid_ros.ros.estimator_node import EstimatorNode
from legid_ros.ros.node_util import latched_qos
from legid_ros.ros.parameters import ParameterRefusedError
from legid_ros.ros.sim_node import SimNode

from pipeline_helpers import params, ros_context, spin_until

pytestmark = pytest.mark.timeout(300)


def test_pipeline_runs_on_the_sim_clock():
    """With use_sim_time everywhere, /clock from the sim drives the estimator's solve timer."""
    rec = simulate_biped(SyntheticConfig(duration_s=2.0, seed=2))
    with ros_context() as (ctx, ex, nodes):
        sim = SimNode(recording=rec, context=ctx, parameter_overrides=params(
            use_sim_time=True, publish_clock=True, real_time_factor=2.0, loop=False,
            start_delay_s=0.2))
        buf = BufferNode(context=ctx, parameter_overrides=params(use_sim_time=True))
        est = EstimatorNode(context=ctx, parameter_overrides=params(
            use_sim_time=True, min_samples=100, update_period_s=0.2, state_file='',
            publish_markers=False))
        probe = Node('probe', context=ctx)
        nodes += [sim, buf, est, probe]
        clocks, solved = [], []
        probe.create_subscription(Clock, '/clock', clocks.append, 100)
        probe.create_subscription(Float64MultiArray, 'legid/parameters', solved.append,
                                  latched_qos())
        for n in nodes:
            ex.add_node(n)
        assert est.get_clock().now().nanoseconds == 0  # no /clock yet: simulated time 0
        assert spin_until(ex, lambda: est.updates > 0 and solved), est.status()
        assert buf.windows_published > 0 and clocks
        first = cv.stamp_to_sec(clocks[0].clock)
        assert abs(first - sim.t0_wall) < 1.0  # the clock carries the sample stamps
        assert est.get_clock().now().nanoseconds * 1e-9 >= first


def test_sim_refuses_a_robot_it_cannot_simulate():
    """robot:=leg3 without a recording is refused at start-up (it used to stream the biped)."""
    with ros_context() as (ctx, ex, nodes):
        with pytest.raises(ParameterRefusedError) as info:
            nodes.append(SimNode(context=ctx, parameter_overrides=params(robot='leg3')))
    assert info.value.name == 'robot'
