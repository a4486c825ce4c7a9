"""Sim node with real rclpy: robot topics from a recording, looping, latched ground truth."""

import numpy as np
import pytest
from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray

from legid_ros.core.description.errors import DescriptionKeyError
from legid_ros.core.errors import BadInputError
from legid_ros.core.synthetic import NoiseModel, SyntheticConfig, simulate_biped
from legid_ros.ros import conversions as cv
from legid_ros.ros.node_util import latched_qos, sensor_qos
from legid_ros.ros.sim_node import SimNode, make_recording

from pipeline_helpers import params, ros_context, spin_until
from test_buffer_node import _renamed_biped

pytestmark = pytest.mark.timeout(600)


def test_streams_every_topic_loops_and_latches_truth():
    """Joint states carry the recording's q; a lap restarts after a gap; truth is latched.

    Wrench, sole-sensor and raw ankle F/T topics carry the recording's values.
    """
    rec = simulate_biped(SyntheticConfig(duration_s=0.3, noise=NoiseModel.none(), seed=2))
    with ros_context() as (ctx, ex, nodes):
        sim = SimNode(recording=rec, context=ctx, parameter_overrides=params(
            real_time_factor=2.0, loop=True, loop_gap_s=0.2, publish_forces='both',
            start_delay_s=0.3))
        probe = Node('probe', context=ctx)
        nodes += [sim, probe]
        js, imu, wrench, fsr, truth, raw = [], [], [], [], [], []
        qos = sensor_qos(2000)
        probe.create_subscription(JointState, 'joint_states', js.append, qos)
        probe.create_subscription(Imu, 'imu', imu.append, qos)
        probe.create_subscription(WrenchStamped, 'right_foot/wrench', wrench.append, qos)
        probe.create_subscription(WrenchStamped, 'right_foot/fsr/sensor_2', fsr.append, qos)
        probe.create_subscription(WrenchStamped, 'left_foot/wrench_raw', raw.append, qos)
        for n in nodes:
            ex.add_node(n)
        assert spin_until(ex, lambda: len(js) >= 2 * rec.n + 10)
        probe.create_subscription(Float64MultiArray, 'legid/sim/ground_truth', truth.append,
                                  latched_qos())
        assert spin_until(ex, lambda: bool(truth))
        assert sim.lap >= 2
    q = np.array([m.position for m in js[:rec.n]])
    np.testing.assert_allclose(q, rec.q, atol=1e-12)
    assert list(js[0].name) == rec.joint_names
    stamps = np.array([cv.stamp_to_sec(m.header.stamp) for m in js])
    steps = np.diff(stamps)
    assert np.all(steps > 0)
    assert np.sum(steps > 0.15) >= 1  # the loop gap
    np.testing.assert_allclose(steps[steps < 0.15], 1e-3, atol=1e-6)
    assert len(imu) >= rec.n and len(wrench) >= rec.n and len(fsr) >= rec.n
    np.testing.assert_allclose([m.wrench.force.z for m in fsr[:rec.n]], rec.fsr['right'][:, 2],
                               atol=1e-9)
    # the raw ankle F/T of the swing foot: its own weight, as in the bags
    assert len(raw) >= rec.n and raw[0].header.frame_id == 'l_ankle_ft'
    np.testing.assert_allclose([m.wrench.force.z for m in raw[:rec.n]],
                               rec.ankle_ft['left'][:, 2], atol=1e-9)
    values, names = cv.parameters_from_msg(truth[-1])
    np.testing.assert_allclose(values, rec.pi_true)
    assert names == rec.param_names


def test_make_recording_rejects_unknown_engine_and_noise():
    """Unknown engine or noise names are bad input, not a crash."""
    with pytest.raises(BadInputError):
        make_recording('bullet', 1.0, 0, 'default')
    with pytest.raises(BadInputError):
        make_recording('synthetic', 1.0, 0, 'loud')


def test_unmeasured_velocity_is_left_out():
    """A recording without joint velocities streams joint states with an empty velocity."""
    rec = simulate_biped(SyntheticConfig(duration_s=0.05, noise=NoiseModel.none(), seed=2))
    rec.qd[:] = np.nan
    with ros_context() as (ctx, ex, nodes):
        sim = SimNode(recording=rec, context=ctx, parameter_overrides=params(
            real_time_factor=2.0, loop=False, start_delay_s=0.3))
        probe = Node('probe', context=ctx)
        nodes += [sim, probe]
        js = []
        probe.create_subscription(JointState, 'joint_states', js.append, sensor_qos(500))
        for n in nodes:
            ex.add_node(n)
        assert spin_until(ex, lambda: len(js) >= rec.n)
    assert len(js[0].velocity) == 0
    np.testing.assert_allclose(js[-1].effort, rec.tau[-1])


def test_raw_ankle_topics_can_be_switched_off():
    """publish_ankle_ft=false creates no raw ankle F/T publisher; the default creates both."""
    rec = simulate_biped(SyntheticConfig(duration_s=0.1, noise=NoiseModel.none(), seed=2))
    with ros_context() as (ctx, ex, nodes):
        off = SimNode(recording=rec, context=ctx, parameter_overrides=params(
            publish_ankle_ft=False))
        on = SimNode(recording=rec, context=ctx)
        nodes += [off, on]
        assert off.pub_ankle == {} and sorted(on.pub_ankle) == ['left', 'right']


def test_payload_republishes_truth_and_imu_heading_is_corrupted():
    """payload_kg changes the latched truth at payload_at_s (2 kg more); the IMU heading
    parameters turn the published orientation about z by offset + drift t only."""
    from scipy.spatial.transform import Rotation

    with ros_context() as (ctx, ex, nodes):
        sim = SimNode(context=ctx, parameter_overrides=params(
            duration_s=0.6, protocol='right', noise='none', payload_kg=2.0, payload_at_s=0.3,
            imu_yaw_offset_deg=30.0, imu_yaw_drift_deg_s=0.5, real_time_factor=2.0,
            loop=False, start_delay_s=0.3, wait_for_subscribers=1))
        probe = Node('probe', context=ctx)
        nodes += [sim, probe]
        imu, truth, js = [], [], []
        probe.create_subscription(Imu, 'imu', imu.append, sensor_qos(2000))
        probe.create_subscription(JointState, 'joint_states', js.append, sensor_qos(2000))
        probe.create_subscription(Float64MultiArray, 'legid/sim/ground_truth', truth.append,
                                  latched_qos())
        for n in nodes:
            ex.add_node(n)
        assert spin_until(ex, lambda: sim.finished and len(imu) >= sim.rec.n)
        assert spin_until(ex, lambda: len(truth) >= 2)
    rec = make_recording('synthetic', 0.6, 0, 'none', 'right')
    masses = [sum(cv.parameters_from_msg(m)[0][0::10]) for m in truth]
    assert len(masses) == 2 and masses[1] - masses[0] == pytest.approx(2.0)
    got = np.array([[m.orientation.x, m.orientation.y, m.orientation.z, m.orientation.w]
                    for m in imu[:rec.n]])
    rel = (Rotation.from_quat(got) * Rotation.from_quat(rec.imu_quat).inv()).as_rotvec()
    np.testing.assert_allclose(rel[:, :2], 0.0, atol=1e-9)
    np.testing.assert_allclose(np.degrees(rel[:, 2]), 30.0 + 0.5 * rec.t, atol=1e-6)


def test_swap_is_the_default_protocol_and_mujoco_refuses_it():
    """make_recording runs the support swap under 'auto' (synthetic); mujoco refuses a swap."""
    rec = make_recording('synthetic', 12.0, 1, 'none', 'auto')
    assert rec.meta['support_foot'] == 'swap'
    assert rec.foot_wrench['left'][:, 2].max() > 100.0
    with pytest.raises(BadInputError):
        make_recording('mujoco', 1.0, 0, 'none', 'swap')


def test_force_sensors_publish_on_the_description_topics(tmp_path):
    """Sensors named right_foot/fsr/c<k> are published there, in their frames; digit-led
    names (right_foot/fsr/2) are refused at start-up naming the key."""
    rec = simulate_biped(SyntheticConfig(duration_s=0.1, noise=NoiseModel.none(), seed=2))
    with ros_context() as (ctx, ex, nodes):
        sim = SimNode(recording=rec, context=ctx, parameter_overrides=params(
            real_time_factor=2.0, loop=False, publish_forces='fsr', start_delay_s=0.3,
            robot=_renamed_biped(tmp_path, '{foot}_foot/fsr/c{k}')))
        probe = Node('probe', context=ctx)
        nodes += [sim, probe]
        got = []
        probe.create_subscription(WrenchStamped, 'right_foot/fsr/c2', got.append,
                                  sensor_qos(2000))
        for n in nodes:
            ex.add_node(n)
        assert spin_until(ex, lambda: sim.finished and len(got) >= rec.n)
        assert sorted(p.topic_name for p in sim.pub_fsr['right']) == \
            [f'/right_foot/fsr/c{k}' for k in range(4)]
    assert len(got) == rec.n and got[0].header.frame_id == 'r_sole_rl'
    np.testing.assert_allclose([m.wrench.force.z for m in got], rec.fsr['right'][:, 2])
    with ros_context() as (ctx, ex, nodes):
        with pytest.raises(DescriptionKeyError, match=r'feet\.left\.force_sensors\[0\]\.topic'):
            SimNode(recording=rec, context=ctx, parameter_overrides=params(
                publish_forces='fsr', robot=_renamed_biped(tmp_path, '{foot}_foot/fsr/{k}')))
