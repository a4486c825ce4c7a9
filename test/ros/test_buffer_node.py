"""Buffer node with real rclpy: windows from the sim node's topics, ZMP, diagnostics, reset."""

import numpy as np
import pytest
import yaml
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PointStamped
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger

from legid_ros.core import paths
from legid_ros.core.description.errors import DescriptionKeyError
from legid_ros.core.synthetic import NoiseModel, SyntheticConfig, simulate_biped
from legid_ros.ros import conversions as cv
from legid_ros.ros.buffer_node import DIAG_NAME, BufferNode
from legid_ros.ros.sim_node import SimNode

from pipeline_helpers import params, ros_context, spin_until

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope='module')
def recording():
    """A short exact synthetic run (0.8 s at 1 kHz)."""
    return simulate_biped(SyntheticConfig(duration_s=0.8, noise=NoiseModel.none(), seed=3))


def _run(recording, force_mode, robot='biped'):
    with ros_context() as (ctx, ex, nodes):
        buf = BufferNode(context=ctx, parameter_overrides=params(
            force_sensing=force_mode, window_length=200, window_hop=100,
            diagnostics_period_s=0.2, idle_flush_s=0.2, robot=robot))
        sim = SimNode(recording=recording, context=ctx, parameter_overrides=params(
            real_time_factor=2.0, loop=False, publish_forces='both', start_delay_s=0.3,
            robot=robot))
        probe = ctx and buf.__class__.__mro__[1]('probe', context=ctx)
        nodes += [buf, sim, probe]
        windows, zmps, diags = [], [], []
        probe.create_subscription(Float64MultiArray, 'legid/window',
                                  lambda m: windows.append(cv.window_from_msg(m)), 50)
        probe.create_subscription(PointStamped, 'legid/zmp/measured', zmps.append, 200)
        probe.create_subscription(DiagnosticArray, '/diagnostics', diags.append, 50)
        for n in nodes:
            ex.add_node(n)

        def rows():
            return sum(len(w) for w, _ in windows[1:]) + (len(windows[0][0]) if windows else 0)
        assert spin_until(ex, lambda: sim.finished and buf.buffer.rows_emitted >= recording.n)
        assert spin_until(ex, lambda: len(windows) >= buf.buffer.windows_emitted)

        def diag_rows():
            vals = [cv.diagnostic_values(d, DIAG_NAME) for d in diags]
            return max([int(v[2]['rows_emitted']) for v in vals if v] + [0])
        assert spin_until(ex, lambda: diag_rows() >= recording.n)
        client = probe.create_client(Trigger, '/buffer/reset')
        assert spin_until(ex, client.service_is_ready)
        future = client.call_async(Trigger.Request())
        assert spin_until(ex, future.done)
        assert future.result().success
        assert spin_until(ex, lambda: any(cv.diagnostic_values(d, DIAG_NAME) for d in diags))
        buf.subscribed = buf.sensor_topics  # gone once shut down
        return sim, buf, windows, zmps, diags


@pytest.mark.parametrize('force_mode', ['fsr', 'wrench'])
def test_windows_cover_every_sample_and_match_recording(recording, force_mode):
    """Every joint-state sample lands in a window with its q; the measured ZMP is the truth."""
    sim, buf, windows, zmps, diags = _run(recording, force_mode)
    schema = windows[0][1]
    stamps = np.unique(np.concatenate([w[:, 0] for w, _ in windows]))
    assert len(stamps) == recording.n
    t_rec = sim.t0_wall + recording.t - recording.t[0]
    np.testing.assert_allclose(stamps, t_rec, atol=2e-9)
    full = np.vstack([w for w, _ in windows])
    _, first = np.unique(full[:, 0], return_index=True)
    rows = full[first]
    qcols = [schema.index(f'q.{j}') for j in recording.joint_names]
    np.testing.assert_allclose(rows[:, qcols], recording.q, atol=1e-12)
    zmp = rows[:, [schema.index('zmp_raw.x'), schema.index('zmp_raw.y')]]
    err = np.linalg.norm(zmp - recording.zmp_true, axis=1)
    assert np.nanmax(err) < 1e-3
    assert np.all(rows[1:, schema.index('ok')] == 1)
    assert rows[:, schema.index('contact.right')].min() == 1.0
    for foot in ('left', 'right'):  # the raw ankle F/T, carried unchanged (same stamps)
        cols = [schema.index(f'ankle_ft.{foot}.{a}') for a in ('fx', 'fy', 'fz', 'tx', 'ty',
                                                                 'tz')]
        np.testing.assert_allclose(rows[:, cols], recording.ankle_ft[foot], atol=1e-9)
    qdd = rows[300:, [schema.index(f'qdd.{j}') for j in recording.joint_names]]
    assert np.sqrt(np.mean((qdd - recording.qdd_true[300:]) ** 2)) < \
        0.5 * np.sqrt(np.mean(recording.qdd_true[300:] ** 2)) + 0.05
    # the measured ZMP is published by every processing pass: at least once per window
    assert len(zmps) >= len(windows) > 5 and zmps[-1].header.frame_id == 'world'
    statuses = [cv.diagnostic_values(d, DIAG_NAME) for d in diags]
    values = [s[2] for s in statuses if s]
    assert max(int(v['rows_emitted']) for v in values) == recording.n
    assert values[-1]['force_sensing'] == force_mode
    assert int(values[-1]['received.ankle_ft']) == 2 * recording.n
    assert buf.buffer.rows_emitted == 0  # after ~/reset



def _schema_and_topics(**kw):
    with ros_context() as (ctx, ex, nodes):
        node = BufferNode(context=ctx, parameter_overrides=params(force_sensing='wrench', **kw))
        nodes.append(node)
        return list(node.schema.names), node.sensor_topics


def test_ankle_ft_channels_follow_the_parameter():
    """use_ankle_ft adds 6 channels per foot and subscribes its raw topic; off, as before."""
    names_on, subs_on = _schema_and_topics()
    names_off, subs_off = _schema_and_topics(use_ankle_ft=False)
    assert len(names_on) == len(names_off) + 12
    assert names_on[:len(names_off)] == names_off
    assert names_on[-12:-6] == [f'ankle_ft.left.{a}' for a in ('fx', 'fy', 'fz', 'tx', 'ty',
                                                                'tz')]
    assert {'/left_foot/wrench_raw', '/right_foot/wrench_raw'} <= subs_on
    assert not any(t.endswith('wrench_raw') for t in subs_off)


def test_a_second_long_burst_loses_no_sample(recording):
    """The sim publishes the whole 0.8 s run in one timer call while the buffer cannot run (one
    thread): with the default queues every sample still reaches a window (a 0.5 s queue lost
    them, as a CPU-starved buffer did in the soak)."""
    with ros_context() as (ctx, ex, nodes):
        buf = BufferNode(context=ctx, parameter_overrides=params(force_sensing='wrench',
                                                                 idle_flush_s=0.2))
        sim = SimNode(recording=recording, context=ctx, parameter_overrides=params(
            real_time_factor=40.0, publish_period_s=0.05, loop=False, publish_forces='wrench',
            start_delay_s=0.3, wait_for_subscribers=1))
        nodes += [buf, sim]
        for n in nodes:
            ex.add_node(n)
        assert spin_until(ex, lambda: sim.finished and buf.buffer.rows_emitted >= recording.n), \
            (sim.published, buf.received)
        assert sim.published == recording.n
        assert buf.received['joint_states'] == recording.n
        assert buf.buffer.rows_emitted == recording.n


def _renamed_biped(folder, pattern):
    """The biped's description with its sole sensors under force_sensors, topics ``pattern``."""
    desc = yaml.safe_load(paths.config_path('biped.yaml').read_text())
    desc['urdf'] = str(paths.urdf_path('biped.urdf'))
    for foot, s in (('left', 'l'), ('right', 'r')):
        f = desc['feet'][foot]
        del f['sensor_frames'], f['fsr_topic_prefix']
        f['force_sensors'] = [{'topic': pattern.format(foot=foot, k=k), 'frame': f'{s}_sole_{c}'}
                              for k, c in enumerate(('fl', 'fr', 'rl', 'rr'))]
    path = folder / 'robot.yaml'
    path.write_text(yaml.safe_dump(desc))
    return str(path)


def _rows(windows):
    """Unique rows of the windows, the time column made relative to the first row."""
    full = np.vstack([w for w, _ in windows])
    _, first = np.unique(full[:, 0], return_index=True)
    rows = full[first]
    rows[:, 0] -= rows[0, 0]
    return rows


def test_renamed_force_sensors_give_the_same_windows(recording, tmp_path):
    """Sole sensors named left_foot/fsr/c0..c3: the nodes use those names, windows unchanged."""
    robot = _renamed_biped(tmp_path, '{foot}_foot/fsr/c{k}')
    _, buf, windows, _, _ = _run(recording, 'fsr', robot)
    topics = buf.subscribed
    assert {f'/{foot}_foot/fsr/c{k}' for foot in ('left', 'right') for k in range(4)} <= topics
    assert not any('/sensor_' in t for t in topics)
    _, _, old, _, _ = _run(recording, 'fsr')
    new_rows, old_rows = _rows(windows), _rows(old)
    assert windows[0][1].names == old[0][1].names
    assert new_rows.shape == old_rows.shape == (recording.n, len(old[0][1].names))
    # stamps are wall times (float rounding ~0.2 us): the derivative and ZMP filters see
    # slightly other steps, every channel the filters do not touch is identical
    names = old[0][1].names
    exact = [i for i, n in enumerate(names)
             if n != 't' and not n.startswith(('qd.', 'qdd.', 'zmp.'))]
    np.testing.assert_allclose(new_rows[:, exact], old_rows[:, exact], atol=1e-9,
                               equal_nan=True)
    np.testing.assert_allclose(new_rows, old_rows, rtol=1e-3, atol=1e-4, equal_nan=True)


def test_digit_topic_is_refused_at_start_up(tmp_path):
    """A description topic left_foot/fsr/0 stops the node with its key and the fix."""
    robot = _renamed_biped(tmp_path, '{foot}_foot/fsr/{k}')
    with ros_context() as (ctx, ex, nodes):
        with pytest.raises(DescriptionKeyError, match=r'feet\.left\.force_sensors\[0\]\.topic.*'
                           r'fix: rename it'):
            BufferNode(context=ctx, parameter_overrides=params(robot=robot,
                                                               force_sensing='fsr'))


def test_a_stream_on_another_clock_is_named_in_the_diagnostics():
    """An IMU stamped 0 among joint states stamped from the wall clock: the node's status
    warns, names the IMU and says its stamps are 0 (diagnostic value stamp_offset_s.imu)."""
    import time
    with ros_context() as (ctx, ex, nodes):
        node = BufferNode(context=ctx, parameter_overrides=params(force_sensing='wrench'))
        nodes.append(node)
        names = list(node.cfg.joint_names)
        for k in range(50):
            t = time.time()
            node.buffer.add_imu(0.0, [0, 0, 0, 1], [0, 0, 0], [0, 0, 9.81])
            node.buffer.add_joint_state(t, names, np.zeros(len(names)))
        node._flush()
        level, message, values = node.status()
    assert level == 'warn'
    assert "another clock than the joint states': imu (stamps 0)" in message
    assert values['stamp_offset_s.imu'] == float('inf')
    assert node._explain('stamps_apart_imu').startswith(': imu header stamps are all 0')
