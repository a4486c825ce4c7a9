"""Buffer node with real rclpy: a bag in another setup's conventions, replayed into the node,
gives the canonical run's windows (issue 24, the live half)."""

import sys
import threading
from pathlib import Path

import pytest
from rclpy.node import Node
from std_msgs.msg import Float64MultiArray

from legid_ros.bag.recording_io import write_bag
from legid_ros.core.buffer.window import unpack_window
from legid_ros.ros import conversions as cv
from legid_ros.ros.buffer_node import BufferNode
from legid_ros.ros.replay import BagReplay

from pipeline_helpers import params, ros_context, spin_until

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'core' / 'buffer'))
from convention_readouts import (READOUTS, SAMPLES, assert_same_windows,  # noqa: E402
                                 make_setups, rows, window_rows)

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope='module')
def setups(solo12, solo12_run, tmp_path_factory):
    """Canonical robot and run, and per readout (robot of that setup, its raw readout)."""
    root = tmp_path_factory.mktemp('node_conv')
    return root, make_setups(solo12, solo12_run, root)


def node_rows(robot, raw, root, name):
    """Rows of the windows the buffer node publishes when the readout's bag is replayed."""
    bag = write_bag(raw, root / f'{name}_bag', robot=robot)
    with ros_context() as (ctx, ex, nodes):
        buf = BufferNode(context=ctx, parameter_overrides=params(
            robot=str(root / f'{name}.yaml'), force_sensing='wrench', use_ankle_ft=False,
            window_length=200, window_hop=100, idle_flush_s=0.2))
        pub, probe = Node('replayer', context=ctx), Node('probe', context=ctx)
        nodes += [buf, pub, probe]
        windows = []
        probe.create_subscription(Float64MultiArray, 'legid/window',
                                  lambda m: windows.append(cv.window_from_msg(m)), 100)
        ex.add_node(buf)
        ex.add_node(probe)
        replay = BagReplay(pub, bag, rate=2.0)
        assert replay.wait_for_subscribers(timeout_s=90.0)
        spin_until(ex, lambda: False, 0.5)
        thread = threading.Thread(target=replay.run)
        thread.start()
        assert spin_until(ex, lambda: not thread.is_alive()
                          and buf.buffer.rows_emitted >= SAMPLES)
        assert spin_until(ex, lambda: len(windows) >= buf.buffer.windows_emitted)
        thread.join(timeout=10.0)
        events, topics = dict(buf.buffer.events), set(buf.sensor_topics)
    wins = [unpack_window(w, schema) for w, schema in windows]
    return window_rows(wins, list(robot.feet)), events, topics


@pytest.mark.parametrize('name', ['imu_world', 'foot'])
def test_a_replayed_setup_s_bag_gives_the_canonical_windows(setups, name):
    """The node subscribes the setup's IMU and force topics, accepts their frame ids (no
    message refused) and its windows are the canonical run's: q, IMU, contacts exactly,
    wrenches and CoP within the IMU tilt error's effect (as the buffer's core)."""
    root, (canon, run, variants) = setups
    robot, raw = variants[name]
    got, events, topics = node_rows(robot, raw, root, name)
    assert robot.imu.topic in topics
    assert {'/' + f.wrench_topic.lstrip('/') for f in robot.feet.values()} <= topics
    assert 'wrong_frame_id' not in events and 'undecodable_message' not in events, events
    assert_same_windows(got, rows(run, canon, conventions=False), run, canon,
                        READOUTS[name].force_expressed_in == 'world')
