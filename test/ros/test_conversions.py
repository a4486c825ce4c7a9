"""Tests of legid_ros.ros.conversions (+ conversions_raw): messages <-> arrays, raw CDR."""

import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from rclpy.validate_topic_name import validate_topic_name
from sensor_msgs.msg import Imu, JointState

from legid_ros.core.buffer.sensor_buffer import BufferConfig, ChannelSchema
from legid_ros.core.errors import BadInputError
from legid_ros.ros import conversions as cv


def test_window_and_parameters_round_trip():
    """A window and a named parameter vector come back unchanged from their messages."""
    schema = ChannelSchema.for_config(BufferConfig(joint_names=['a', 'b'], feet=['l', 'r']))
    win = np.random.default_rng(0).normal(size=(7, len(schema)))
    back, sch = cv.window_from_msg(cv.window_msg(win, schema))
    np.testing.assert_array_equal(back, win)
    assert sch.names == schema.names
    values, names = cv.parameters_from_msg(cv.parameters_msg([1.0, 2.0], ['x.m', 'y.m']))
    assert names == ['x.m', 'y.m'] and list(values) == [1.0, 2.0]
    with pytest.raises(BadInputError):
        cv.parameters_msg([1.0], ['a', 'b'])


def test_raw_decoders_match_rclpy_serialization():
    """CDR bytes from rclpy decode to the same stamp, names and values (one and batch)."""
    rng = np.random.default_rng(1)
    names = ['l_knee', 'r_knee', 'x']
    msgs = [cv.joint_state_msg(10 + 0.001 * k, names, rng.normal(size=3), rng.normal(size=3),
                               rng.normal(size=3), frame_id='f') for k in range(5)]
    raws = [serialize_message(m) for m in msgs]
    t, nm, p, v, e = cv.decode_joint_state(raws[2])
    assert nm == tuple(names) and t == pytest.approx(10.002)
    np.testing.assert_array_equal(p, msgs[2].position)
    (stamps, (nm2, p2, v2, e2)), = cv.RawBatch('joint_state').decode(raws)
    np.testing.assert_allclose(stamps, 10 + 0.001 * np.arange(5))
    np.testing.assert_array_equal(e2[4], msgs[4].effort)
    imu = cv.imu_msg(3.0, 'imu_link', [0.1, 0.2, 0.3, 0.9], [1, 2, 3], [4, 5, 6])
    t, q, g, a = cv.decode_imu(serialize_message(imu))
    np.testing.assert_allclose(np.r_[q, g, a], [0.1, 0.2, 0.3, 0.9, 1, 2, 3, 4, 5, 6])
    bad = cv.RawBatch('wrench')
    assert bad.decode([b'\x00\x01\x00\x00garbage']) == [] and bad.bad == 1


def test_raw_packer_output_deserializes_with_rclpy():
    """RawPacker bytes are valid messages for rclpy, with the packed stamps and values."""
    zeros = np.zeros(2)
    packer = cv.RawPacker('joint_state', cv.joint_state_msg(0.0, ['a', 'b'], zeros, zeros, zeros))
    rows = packer.pack(np.array([1.25]), p=[[1.0, 2.0]], v=[[3.0, 4.0]], e=[[5.0, 6.0]])
    msg = deserialize_message(rows[0].tobytes(), JointState)
    assert cv.stamp_to_sec(msg.header.stamp) == 1.25 and list(msg.effort) == [5.0, 6.0]
    ipk = cv.RawPacker('imu', cv.imu_msg(0.0, 'imu', [0, 0, 0, 1], zeros[:1].repeat(3),
                                         zeros[:1].repeat(3)))
    m = deserialize_message(ipk.pack(np.array([2.0]), quat=[[0, 0, 0.6, 0.8]], gyro=[[1, 2, 3]],
                                     acc=[[4, 5, 6]])[0].tobytes(), Imu)
    assert m.orientation.z == 0.6 and m.linear_acceleration.z == 6.0


def test_topic_names_are_valid_ros_names():
    """Sole-sensor topics and renamed bag topics pass rclpy's topic validation."""
    assert validate_topic_name(cv.fsr_topic('left_foot/fsr', 3))
    assert cv.ros_topic_name('/left_foot/fsr/0') == '/left_foot/fsr/sensor_0'
    assert validate_topic_name(cv.ros_topic_name('/left_foot/fsr/0'))
    assert cv.ros_topic_name('/joint_states') == '/joint_states'


def test_transform_and_diagnostics():
    """TransformStamped carries the pose; a diagnostic status reads back by name."""
    tf = cv.transform_msg(1.0, 'world', 'trunk', [1, 2, 3, 0, 0, 0, 1])
    assert tf.child_frame_id == 'trunk' and tf.transform.translation.y == 2.0
    d = cv.diagnostic_msg(1.0, 'legid buffer', 'hw', 'warn', 'x', {'a': 1.5})
    level, message, values = cv.diagnostic_values(d, 'legid buffer')
    assert level == 1 and values == {'a': '1.5'}
