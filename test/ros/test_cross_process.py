"""The ROS 2 stack is real: messages cross process boundaries through rmw_fastrtps."""

import subprocess
import sys
import textwrap
import time

import rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

PUBLISHER = textwrap.dedent('''
    import sys, time
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    rclpy.init()
    node = rclpy.create_node('legid_test_publisher')
    pub = node.create_publisher(JointState, 'joint_states',
                                QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
    deadline = time.monotonic() + 120.0
    while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    for i in range(50):
        msg = JointState()
        msg.header.stamp.sec = 1000 + i
        msg.name = ['l_knee', 'r_knee']
        msg.position = [0.01 * i, -0.01 * i]
        pub.publish(msg)
        time.sleep(0.01)
    sys.stdin.readline()  # stay (and keep resending) until the subscriber has them all
    node.destroy_node()
    rclpy.shutdown()
''')


def test_joint_state_crosses_processes():
    """JointStates published by another process reach a node here, in order and intact."""
    rclpy.init()
    try:
        node = rclpy.create_node('legid_test_subscriber')
        got = []
        node.create_subscription(JointState, 'joint_states', got.append,
                                 QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
        proc = subprocess.Popen([sys.executable, '-c', PUBLISHER], stdin=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 120.0  # start-up and discovery on a busy machine
            while len(got) < 50 and time.monotonic() < deadline:
                rclpy.spin_once(node, timeout_sec=0.1)
            proc.stdin.close()  # the publisher may go
            assert proc.wait(timeout=120) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        assert len(got) == 50
        assert [m.header.stamp.sec for m in got] == list(range(1000, 1050))
        assert list(got[7].name) == ['l_knee', 'r_knee']
        assert list(got[7].position) == [0.07, -0.07]
        node.destroy_node()
    finally:
        rclpy.shutdown()
