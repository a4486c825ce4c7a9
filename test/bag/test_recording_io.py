"""Tests of legid_ros.bag.recording_io: rosbag2 writing, reading, alignment and summaries."""

import dataclasses

import numpy as np
import pytest
from rosbags.rosbag2 import Reader
from rosbags.typesys import Stores, get_typestore

from legid_ros.bag.recording_io import EPOCH_NS, bag_info, read_bag, write_bag
from legid_ros.core.errors import BadInputError
from legid_ros.core.robot import load_robot
from legid_ros.core.synthetic import NoiseModel, SyntheticConfig, simulate_biped

from bag_edits import restamp, write_raw

TS = get_typestore(Stores.ROS2_HUMBLE)


@pytest.fixture(scope='module')
def robot():
    return load_robot('biped')


@pytest.fixture(scope='module')
def rec(robot):
    return simulate_biped(SyntheticConfig(duration_s=0.6, rate_hz=500.0, seed=4,
                                          noise=NoiseModel()), robot)


@pytest.mark.parametrize('storage', ['mcap', 'sqlite3'])
def test_round_trip(tmp_path, rec, robot, storage):
    """write_bag then read_bag gives back every signal, truth and meta unchanged."""
    path = write_bag(rec, tmp_path / 'run', storage=storage, robot=robot)
    back = read_bag(path, robot)
    np.testing.assert_allclose(back.t, rec.t, atol=1e-9)
    for name in ('q', 'qd', 'tau', 'imu_quat', 'imu_gyro', 'imu_acc', 'zmp_true',
                 'base_pose_true', 'pi_true', 'pi_cad'):
        np.testing.assert_array_equal(getattr(back, name), getattr(rec, name), err_msg=name)
    for foot in ('left', 'right'):
        np.testing.assert_array_equal(back.foot_wrench[foot], rec.foot_wrench[foot])
        np.testing.assert_array_equal(back.fsr[foot], rec.fsr[foot])
        np.testing.assert_array_equal(back.ankle_ft[foot], rec.ankle_ft[foot])
    assert back.joint_names == rec.joint_names and back.param_names == rec.param_names
    assert back.meta['seed'] == 4 and back.meta['engine'] == 'synthetic'
    assert back.meta['noise'] == rec.meta['noise']


def test_messages_decode_with_plain_rosbags(tmp_path, rec, robot):
    """Every message of the bag deserialises with rosbags to the recorded values and frames."""
    path = write_bag(rec, tmp_path / 'run', robot=robot)
    k = 7
    stamp = EPOCH_NS + int(round(rec.t[k] * 1e9))
    seen = set()
    with Reader(path) as reader:
        for conn, log, raw in reader.messages():
            msg = TS.deserialize_cdr(raw, conn.msgtype)
            if conn.topic == '/legid/sim/ground_truth':
                label = msg.layout.dim[0].label
                assert label == 'parameters:' + ','.join(rec.param_names)
                np.testing.assert_array_equal(msg.data, rec.pi_true)
                seen.add(conn.topic)
            if log != stamp:
                continue
            assert msg.header.stamp.sec * 10 ** 9 + msg.header.stamp.nanosec == stamp
            seen.add(conn.topic)
            if conn.topic == '/joint_states':
                assert list(msg.name) == rec.joint_names
                np.testing.assert_array_equal(msg.effort, rec.tau[k])
            elif conn.topic == '/imu':
                assert msg.header.frame_id == 'imu_link'
                assert msg.angular_velocity.y == rec.imu_gyro[k, 1]
            elif conn.topic == '/right_foot/wrench':
                assert msg.header.frame_id == 'r_ankle_ft'
                assert msg.wrench.torque.x == rec.foot_wrench['right'][k, 3]
            elif conn.topic == '/left_foot/wrench_raw':
                assert msg.header.frame_id == 'l_ankle_ft'
                assert msg.wrench.force.z == rec.ankle_ft['left'][k, 2]
            elif conn.topic == '/right_foot/fsr/sensor_2':
                assert msg.header.frame_id == 'r_sole_rl'
                assert msg.wrench.force.z == rec.fsr['right'][k, 2]
            elif conn.topic == '/legid/sim/zmp':
                assert msg.header.frame_id == 'world' and msg.point.x == rec.zmp_true[k, 0]
            elif conn.topic == '/legid/sim/base_pose':
                assert msg.pose.orientation.w == rec.base_pose_true[k, 6]
    assert {'/joint_states', '/imu', '/right_foot/wrench', '/left_foot/wrench_raw',
            '/right_foot/fsr/sensor_2',
            '/legid/sim/zmp', '/legid/sim/base_pose', '/legid/sim/ground_truth'} <= seen


def test_info_counts_and_rates(tmp_path, rec, robot):
    """bag_info reports every topic with its type, count, rate and the time span."""
    info = bag_info(write_bag(rec, tmp_path / 'run', storage='sqlite3', robot=robot))
    topics = {t.name: t for t in info.topics}
    assert len(topics) == 19 and info.storage == 'sqlite3'
    assert topics['/joint_states'].msgtype == 'sensor_msgs/msg/JointState'
    assert topics['/imu'].count == rec.n and topics['/right_foot/fsr/sensor_3'].count == rec.n
    assert topics['/imu'].rate_hz == pytest.approx(500.0, rel=1e-9)
    assert topics['/legid/sim/ground_truth'].count == 1
    assert topics['/right_foot/wrench_raw'].msgtype == 'geometry_msgs/msg/WrenchStamped'
    assert topics['/right_foot/wrench_raw'].count == rec.n
    assert info.message_count == 16 * rec.n + 3
    assert info.duration_s == pytest.approx(rec.t[-1], abs=1e-9)
    assert '/left_foot/wrench' in info.table() and '/left_foot/wrench_raw' in info.table()


@pytest.mark.parametrize('storage', ['mcap', 'sqlite3'])
def test_ankle_ft_round_trip(tmp_path, robot, storage):
    """A 3 s, 100 Hz synthetic run keeps both feet's raw ankle F/T readings through a bag."""
    rec = simulate_biped(SyntheticConfig(duration_s=3.0, rate_hz=100.0, seed=9), robot)
    assert sorted(rec.ankle_ft) == ['left', 'right'] and rec.n == 300
    back = read_bag(write_bag(rec, tmp_path / 'run', storage=storage, robot=robot), robot)
    assert sorted(back.ankle_ft) == ['left', 'right']
    for foot in ('left', 'right'):
        assert back.ankle_ft[foot].shape == (300, 6)
        np.testing.assert_allclose(back.ankle_ft[foot], rec.ankle_ft[foot], rtol=0, atol=1e-12)
        assert not np.allclose(back.ankle_ft[foot], -back.foot_wrench[foot], atol=1e-3)


def test_bag_without_ankle_topics_reads_empty(tmp_path, rec, robot):
    """A recording without ankle F/T writes no raw topic and reads back with ankle_ft == {}."""
    bare = dataclasses.replace(rec, ankle_ft={})
    path = write_bag(bare, tmp_path / 'old', robot=robot)
    names = {t.name for t in bag_info(path).topics}
    assert '/left_foot/wrench' in names and '/left_foot/wrench_raw' not in names
    assert '/right_foot/wrench_raw' not in names
    back = read_bag(path, robot)
    assert back.ankle_ft == {}
    np.testing.assert_array_equal(back.foot_wrench['left'], rec.foot_wrench['left'])


def test_robot_without_raw_topic_skips_it(tmp_path, rec, robot):
    """A foot whose ankle_ft_topic is None gets no raw topic; the other foot keeps its own."""
    feet = dict(robot.feet, left=dataclasses.replace(robot.feet['left'], ankle_ft_topic=None))
    no_left = dataclasses.replace(robot, feet=feet)
    path = write_bag(rec, tmp_path / 'run', robot=no_left)
    names = {t.name for t in bag_info(path).topics}
    assert '/left_foot/wrench_raw' not in names and '/right_foot/wrench_raw' in names
    back = read_bag(path, robot)
    assert list(back.ankle_ft) == ['right']
    np.testing.assert_array_equal(back.ankle_ft['right'], rec.ankle_ft['right'])


def _header(t_s, frame=''):
    ns = EPOCH_NS + int(round(t_s * 1e9))
    return TS.types['std_msgs/msg/Header'](
        stamp=TS.types['builtin_interfaces/msg/Time'](sec=ns // 10 ** 9, nanosec=ns % 10 ** 9),
        frame_id=frame)


def test_read_jittered_multirate_bag(tmp_path, robot):
    """Jittered 500 Hz joint states, 200 Hz IMU, 1 kHz wrench: linear signals are aligned."""
    rng = np.random.default_rng(0)
    t_js = np.arange(200) / 500 + rng.uniform(-2e-4, 2e-4, 200)
    names = robot.actuated_joint_names[::-1]
    vec = TS.types['geometry_msgs/msg/Vector3']
    js = [(EPOCH_NS + int(t * 1e9), TS.types['sensor_msgs/msg/JointState'](
        header=_header(t), name=names, position=np.arange(12) * t, velocity=np.full(12, 1.0),
        effort=np.zeros(0))) for t in t_js]
    t_imu = np.arange(-2, 82) / 200
    quat = TS.types['geometry_msgs/msg/Quaternion'](x=0.0, y=0.0, z=0.0, w=1.0)
    imu = [(EPOCH_NS + int(t * 1e9), TS.types['sensor_msgs/msg/Imu'](
        header=_header(t, f'imu{i % 2}'), orientation=quat, orientation_covariance=np.zeros(9),
        angular_velocity=vec(x=t, y=2 * t, z=-t), angular_velocity_covariance=np.zeros(9),
        linear_acceleration=vec(x=0.0, y=0.0, z=9.81),
        linear_acceleration_covariance=np.zeros(9))) for i, t in enumerate(t_imu)]
    t_w = np.arange(-3, 403) / 1000
    wrench = [(EPOCH_NS + int(t * 1e9), TS.types['geometry_msgs/msg/WrenchStamped'](
        header=_header(t, 'r_ankle_ft'), wrench=TS.types['geometry_msgs/msg/Wrench'](
            force=vec(x=1.0, y=0.0, z=300 + 50 * t), torque=vec(x=0.0, y=0.0, z=0.0))))
        for t in t_w]
    write_raw(tmp_path / 'raw', {'/joint_states': ('sensor_msgs/msg/JointState', js),
                                  '/imu': ('sensor_msgs/msg/Imu', imu),
                                  '/right_foot/wrench': ('geometry_msgs/msg/WrenchStamped',
                                                         wrench)})
    rec = read_bag(tmp_path / 'raw', robot)
    t_read = np.sort(t_js) - np.sort(t_js)[0]
    np.testing.assert_allclose(rec.t, t_read, atol=2e-9)
    t_abs = np.sort(t_js)
    col = names.index('l_knee')
    np.testing.assert_allclose(rec.q[:, robot.actuated_joint_names.index('l_knee')],
                               col * t_abs, atol=1e-8)
    np.testing.assert_allclose(rec.imu_gyro, np.column_stack([t_abs, 2 * t_abs, -t_abs]),
                               atol=1e-8)
    np.testing.assert_allclose(rec.foot_wrench['right'][:, 2], 300 + 50 * t_abs, atol=1e-6)
    assert np.all(np.isnan(rec.tau)) and np.all(rec.qd == 1.0)
    assert rec.pi_true is None and rec.zmp_true is None and 'left' not in rec.foot_wrench
    assert rec.fsr == {} and rec.ankle_ft == {}


def test_bad_bags(tmp_path, rec, robot):
    """Missing, garbage, corrupt or joint-less bags and existing outputs raise BadInputError."""
    with pytest.raises(BadInputError, match='not found'):
        read_bag(tmp_path / 'nothing', robot)
    garbage = tmp_path / 'garbage.mcap'
    garbage.write_bytes(b'not a bag at all')
    with pytest.raises(BadInputError):
        bag_info(garbage)
    corrupt = tmp_path / 'corrupt'
    corrupt.mkdir()
    (corrupt / 'metadata.yaml').write_text('rosbag2_bagfile_information: [')
    with pytest.raises(BadInputError, match='cannot read'):
        read_bag(corrupt, robot)
    vec = TS.types['geometry_msgs/msg/Vector3']
    only_wrench = [(EPOCH_NS, TS.types['geometry_msgs/msg/WrenchStamped'](
        header=_header(0.0), wrench=TS.types['geometry_msgs/msg/Wrench'](
            force=vec(x=0.0, y=0.0, z=1.0), torque=vec(x=0.0, y=0.0, z=0.0))))]
    write_raw(tmp_path / 'nojs', {'/w': ('geometry_msgs/msg/WrenchStamped', only_wrench)})
    with pytest.raises(BadInputError, match='joint_states'):
        read_bag(tmp_path / 'nojs', robot)
    path = write_bag(rec.slice(0, 20), tmp_path / 'out', robot=robot)
    with pytest.raises(BadInputError, match='exists'):
        write_bag(rec.slice(0, 20), path, robot=robot)
    write_bag(rec.slice(0, 10), path, robot=robot, overwrite=True)
    assert read_bag(path, robot).n == 10
    with pytest.raises(BadInputError, match='storage'):
        write_bag(rec, tmp_path / 'x', storage='zip', robot=robot)


def test_fast_mcap_scans_match_rosbags(tmp_path, rec, robot):
    """Both MCAP scans (indexed, sequential) give the same Recording as rosbags' reader."""
    from unittest import mock

    import legid_ros.bag.codec as codec
    from legid_ros.bag.mcap_scan import McapScanError

    path = write_bag(rec, tmp_path / 'run', robot=robot)
    with mock.patch.object(codec, '_storage_files', lambda reader: ('', [])):
        ref = read_bag(path, robot)

    def broken(*args):
        raise McapScanError('forced')
    readings = [read_bag(path, robot)]
    with mock.patch.object(codec, 'scan_mcap_indexed', broken):
        readings.append(read_bag(path, robot))
    for got in readings:
        for name in ('t', 'q', 'qd', 'tau', 'imu_quat', 'imu_acc', 'zmp_true', 'base_pose_true',
                     'pi_true'):
            np.testing.assert_array_equal(getattr(got, name), getattr(ref, name), err_msg=name)
        np.testing.assert_array_equal(got.fsr['right'], ref.fsr['right'])
        np.testing.assert_array_equal(got.ankle_ft['left'], ref.ankle_ft['left'])
        assert got.meta == ref.meta


def test_joint_order_shuffled_per_message_and_late_logs_read_back(tmp_path, rec, robot):
    """A driver listing the joints in another order in every message, its messages logged
    up to 5 ms late: the bag reads back the recording in its own joint order and stamps."""
    rng = np.random.default_rng(3)
    order = np.argsort(rng.random(rec.q.shape), axis=1)
    path = write_bag(rec, tmp_path / 'shuffled', robot=robot, joint_order=order,
                     log_delay_s=rng.uniform(0.0, 0.005, rec.n))
    with Reader(path) as reader:
        conn = [c for c in reader.connections if c.topic == '/joint_states']
        names = [list(TS.deserialize_cdr(raw, c.msgtype).name)
                 for c, _, raw in reader.messages(connections=conn)]
    assert len({tuple(n) for n in names}) > 1
    back = read_bag(path, robot)
    np.testing.assert_allclose(back.t, rec.t, atol=1e-9)
    for name in ('q', 'qd', 'tau', 'imu_acc'):
        np.testing.assert_array_equal(getattr(back, name), getattr(rec, name), err_msg=name)


@pytest.mark.parametrize('shift_ns', [None, 1000 * 10 ** 9, -3 * 10 ** 9])
def test_stream_on_another_clock_is_aligned_by_receive_time(tmp_path, rec, robot, caplog,
                                                            shift_ns):
    """An IMU whose header stamps are 0 or on another clock (1000 s ahead, 3 s behind) is
    aligned by its receive times, with a warning naming it; the values match the stamped
    bag's (held at one value before)."""
    path = write_bag(rec, tmp_path / 'run', robot=robot)
    restamp(path, tmp_path / 'other', {robot.imu.topic: shift_ns})
    with caplog.at_level('WARNING'):
        back = read_bag(tmp_path / 'other', robot)
    np.testing.assert_array_equal(back.imu_acc, rec.imu_acc)
    np.testing.assert_array_equal(back.imu_quat, rec.imu_quat)
    assert back.meta['stamps_from_receive_time'] == [robot.imu.topic]
    assert robot.imu.topic in caplog.text and 'receive time' in caplog.text
    np.testing.assert_array_equal(back.foot_wrench['left'], rec.foot_wrench['left'])
    assert 'stamps_from_receive_time' not in read_bag(path, robot).meta
