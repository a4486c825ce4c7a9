"""Tests of legid_ros.bag.trajectory_bag."""

import numpy as np
import pytest
from rosbags.rosbag2 import Reader
from rosbags.typesys import Stores, get_typestore

from legid_ros.bag.trajectory_bag import REFERENCE_TOPIC, write_reference_bag
from legid_ros.core.errors import BadInputError


def test_reference_bag_round_trip(tmp_path):
    """One JointTrajectory on /legid/reference holds the names, times and positions written."""
    t = np.arange(50) * 0.02
    q = np.column_stack([np.sin(t), np.cos(t)])
    path = write_reference_bag(tmp_path / 'ref', ['a', 'b'], t, q, np.gradient(q, axis=0),
                               np.zeros_like(q))
    ts = get_typestore(Stores.ROS2_HUMBLE)
    with Reader(path) as reader:
        msgs = [ts.deserialize_cdr(raw, c.msgtype)
                for c, _, raw in reader.messages() if c.topic == REFERENCE_TOPIC]
    assert len(msgs) == 1
    msg = msgs[0]
    assert list(msg.joint_names) == ['a', 'b']
    back = np.array([p.positions for p in msg.points])
    times = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec
                      for p in msg.points])
    assert np.allclose(back, q) and np.allclose(times, t, atol=1e-9)


def test_reference_bag_refuses_bad_input(tmp_path):
    """Mismatched shapes and an existing path are refused with BadInputError."""
    t = np.arange(3.0)
    with pytest.raises(BadInputError):
        write_reference_bag(tmp_path / 'r', ['a'], t, np.zeros((3, 2)), np.zeros((3, 2)),
                            np.zeros((3, 2)))
    write_reference_bag(tmp_path / 'r', ['a'], t, np.zeros((3, 1)), np.zeros((3, 1)),
                        np.zeros((3, 1)))
    with pytest.raises(BadInputError, match='exists'):
        write_reference_bag(tmp_path / 'r', ['a'], t, np.zeros((3, 1)), np.zeros((3, 1)),
                            np.zeros((3, 1)))
