"""Estimator node with real rclpy: identification from the sim -> buffer stream, save/restore."""

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PointStamped
from rclpy.node import Node
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger
from visualization_msgs.msg import MarkerArray

from legid_ros.core.inertial import check_consistency, link_index
from legid_ros.core.robot import load_robot
from legid_ros.core.synthetic import SyntheticConfig, simulate_biped
from legid_ros.ros import conversions as cv
from legid_ros.ros.buffer_node import BufferNode
from legid_ros.ros.estimator_node import EstimatorNode
from legid_ros.ros.node_util import latched_qos
from legid_ros.ros.sim_node import SimNode

from pipeline_helpers import params, ros_context, spin_until

pytestmark = pytest.mark.timeout(600)
GROUP_LINKS = {'trunk': ['trunk'], 'thigh': ['l_thigh', 'r_thigh'],
               'shank': ['l_shank', 'r_shank'], 'foot': ['l_foot', 'r_foot']}


@pytest.fixture(scope='module')
def recording():
    """8 s of the biped excitation (Wu & Gao 2021) with the default sensor noise."""
    return simulate_biped(SyntheticConfig(duration_s=8.0, seed=5))


def group_masses(pi, robot):
    """Mass [kg] of each link group (sum over its links)."""
    return {g: sum(pi[10 * link_index(robot.model, link)] for link in links)
            for g, links in GROUP_LINKS.items()}


def _pipeline(recording, state_file, out_dir, rtf=4.0, **est_kw):
    """Run sim -> buffer -> estimator over the recording; return what was published."""
    got = {'params': [], 'zmp': [], 'markers': [], 'diag': []}
    # the method's own set (zmp_newton: reduced): the recording is shorter than the 30 s the
    # default 'auto' set folds before choosing its levels
    est_kw.setdefault('param_set', '')
    with ros_context() as (ctx, ex, nodes):
        est = EstimatorNode(context=ctx, parameter_overrides=params(
            update_period_s=0.3, min_samples=100, state_file=str(state_file),
            output_dir=str(out_dir), diagnostics_period_s=0.3, **est_kw))
        buf = BufferNode(context=ctx, parameter_overrides=params(idle_flush_s=0.2))
        sim = SimNode(recording=recording, context=ctx, parameter_overrides=params(
            real_time_factor=rtf, loop=False, start_delay_s=0.3))
        probe = Node('probe', context=ctx)
        nodes += [est, buf, sim, probe]
        probe.create_subscription(Float64MultiArray, 'legid/parameters',
                                  lambda m: got['params'].append(cv.parameters_from_msg(m)),
                                  latched_qos(10))
        probe.create_subscription(PointStamped, 'legid/zmp/predicted', got['zmp'].append, 100)
        probe.create_subscription(MarkerArray, 'legid/markers', got['markers'].append, 100)
        probe.create_subscription(DiagnosticArray, '/diagnostics', got['diag'].append, 100)
        for n in nodes:
            ex.add_node(n)
        # events, not time: the sim has sent everything, the buffer has put every sample in
        # a window (its last one after idle_flush_s without input), the estimator has taken
        # every window and solved after its last fold
        assert spin_until(ex, lambda: sim.finished
                          and buf.buffer.rows_emitted >= recording.n), buf.received
        assert spin_until(ex, lambda: est.windows == buf.windows_published), \
            (est.windows, buf.windows_published)
        assert spin_until(ex, lambda: est.new_since_update == 0 and est.updates > 0), \
            est.status()
        client = probe.create_client(Trigger, '/estimator/save')
        assert spin_until(ex, client.service_is_ready)
        future = client.call_async(Trigger.Request())
        assert spin_until(ex, future.done)
        got['save'] = future.result()
        got['status'] = est.status()
        got['published'] = est.published
        got['folded'] = est.folded
        got['raw_pi'] = None if est.result is None else est.result.pi.copy()
    return got


def test_online_estimate_moves_masses_toward_truth(recording, tmp_path):
    """Published group masses are closer to the truth than CAD's; every published set is sound."""
    robot = load_robot('biped')
    got = _pipeline(recording, tmp_path / 'state.npz', tmp_path / 'out')
    assert got['params'], 'no parameters published'
    for values, names in got['params']:
        assert check_consistency(values, robot.body_names).ok
    pi, names = got['params'][-1]
    truth = group_masses(recording.pi_true, robot)
    cad = group_masses(recording.pi_cad, robot)
    est = group_masses(pi, robot)
    err_est = sum(abs(est[g] - truth[g]) for g in truth)
    err_cad = sum(abs(cad[g] - truth[g]) for g in truth)
    assert err_est < 0.8 * err_cad, (est, truth)
    assert abs(est['foot'] - truth['foot']) < 0.5 * abs(cad['foot'] - truth['foot'])
    left = 10 * link_index(robot.model, 'l_foot')  # swings all along: weighed by its ankle F/T
    assert abs(pi[left] / recording.pi_true[left] - 1) < 0.05
    assert got['folded'] > 0.09 * recording.n  # fold_rate_hz 100
    assert got['zmp'] and got['markers']
    marker_ids = {m.id for m in got['markers'][-1].markers}
    assert {0, 1, 2, 3} <= marker_ids and 100 in marker_ids
    level, message, values = got['status']
    assert values['consistent'] is True and float(values['condition_number']) > 0
    # what the data determine leads the diagnostics, with its std, never 'inf'
    assert any(k.startswith('determined.total mass') for k in values), sorted(values)
    assert not any('inf' in str(v) for v in values.values())
    assert int(values['ankle_ft_rows']) == 6 * got['folded'] and values['ankle_ft_dropped'] == 0
    assert got['save'].success
    assert (tmp_path / 'out' / 'biped_identified.urdf').is_file()
    assert (tmp_path / 'out' / 'biped_identified.yaml').is_file()
    assert (tmp_path / 'state.npz').is_file()


def test_without_ankle_ft_the_foot_mass_stays_off(recording, tmp_path):
    """With use_ankle_ft off the ZMP alone leaves the swinging foot's mass > 15 % off."""
    robot = load_robot('biped')
    got = _pipeline(recording, tmp_path / 'state.npz', tmp_path / 'out', use_ankle_ft=False)
    pi, _ = got['params'][-1]
    left = 10 * link_index(robot.model, 'l_foot')
    assert abs(pi[left] / recording.pi_true[left] - 1) > 0.15
    assert int(got['status'][2]['ankle_ft_rows']) == 0


def test_restart_resumes_from_saved_state(recording, tmp_path):
    """A new estimator restores the statistics and republishes the last consistent solution."""
    short = recording.slice(0, 3000)
    got = _pipeline(short, tmp_path / 'state.npz', tmp_path / 'out')
    pi_before, _ = got['published']
    with ros_context() as (ctx, ex, nodes):
        est = EstimatorNode(context=ctx, parameter_overrides=params(
            state_file=str(tmp_path / 'state.npz'), output_dir=str(tmp_path / 'out'),
            param_set=''))
        probe = Node('probe2', context=ctx)
        nodes += [est, probe]
        seen = []
        probe.create_subscription(Float64MultiArray, 'legid/parameters',
                                  lambda m: seen.append(cv.parameters_from_msg(m)),
                                  latched_qos(10))
        for n in nodes:
            ex.add_node(n)
        assert spin_until(ex, lambda: bool(seen))
        assert est.restored
        assert est.est.normal.n == pytest.approx(float(got['status'][2]['samples_in_statistics']),
                                                 abs=1.0)
        np.testing.assert_allclose(seen[-1][0], pi_before)


@pytest.mark.parametrize('robot, method, param_set', [
    ('biped', 'zmp_newton', 'reduced'), ('talos', 'zmp_newton', 'grouped_sides'),
    ('solo12', 'zmp_newton', 'grouped_sides')])
def test_method_and_param_set_default_to_the_robots(robot, method, param_set):
    """Left at '', method and param_set come from the robot's feet at start-up; a named
    method keeps its own set."""
    with ros_context() as (ctx, executor, nodes):
        est = EstimatorNode(context=ctx, parameter_overrides=params(robot=robot,
                                                                    state_file=''))
        nodes.append(est)
        assert (est.method, est.est.param_set) == (method, param_set)
        other = EstimatorNode(context=ctx, parameter_overrides=params(
            robot=robot, state_file='', method='zmp_qp'))
        nodes.append(other)
        assert (other.method, other.est.param_set) == ('zmp_qp', 'standard')
