"""Node parameters with real rclpy: read-only ones refuse changes with a reason, ranges and
choices are enforced, run-time ones are applied, and every one is described."""

import math
from pathlib import Path

import pytest
import yaml
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.node import Node
from rclpy.parameter import Parameter

from legid_ros.core.robot import load_robot
from legid_ros.core.synthetic import NoiseModel, SyntheticConfig, simulate_biped
from legid_ros.ros import buffer_node, controller_node, estimator_node, ik_node, sim_node
from legid_ros.ros.buffer_node import BufferNode
from legid_ros.ros.controller_node import ControllerNode
from legid_ros.ros.estimator_node import EstimatorNode
from legid_ros.ros.ik_node import IkNode
from legid_ros.ros.parameters import ParameterRefusedError
from legid_ros.ros.sim_node import SimNode

from pipeline_helpers import params, ros_context, set_remote, spin_until

pytestmark = pytest.mark.timeout(120)
CONFIG = Path(__file__).resolve().parents[2] / 'config'


@pytest.fixture(scope='module')
def recording():
    """A 50 ms noiseless biped run (enough for a sim node to start)."""
    return simulate_biped(SyntheticConfig(duration_s=0.05, noise=NoiseModel.none(), seed=2))


def _nodes(ctx, recording):
    """One node of each kind, on the given context."""
    return [BufferNode(context=ctx),
            EstimatorNode(context=ctx, parameter_overrides=params(state_file='')),
            ControllerNode(context=ctx),
            IkNode(context=ctx),
            SimNode(recording=recording, context=ctx)]


def test_every_declared_parameter_has_a_description(recording):
    """Every parameter a legid node declares has a non-empty description and a fixed type."""
    with ros_context() as (ctx, ex, nodes):
        bare = Node('bare', context=ctx)
        nodes.append(bare)
        own = set(bare.list_parameters([], 0).names)  # declared by rclpy itself
        nodes += _nodes(ctx, recording)
        for node in nodes[1:]:
            names = [n for n in node.list_parameters([], 0).names if n not in own]
            assert len(names) >= 10, node.get_name()
            for d in node.describe_parameters(names):
                assert d.description.strip(), f'{node.get_name()}.{d.name}'
                assert not d.dynamic_typing and d.type != 0, f'{node.get_name()}.{d.name}'


def test_read_only_parameter_is_refused_with_a_reason(recording):
    """ros2 param set on a start-up-only parameter fails with a reason; the value stays."""
    with ros_context() as (ctx, ex, nodes):
        nodes += _nodes(ctx, recording)
        probe = Node('probe', context=ctx)
        nodes.append(probe)
        for n in nodes:
            ex.add_node(n)
        for target, name, value in (('/buffer', 'window_length', 100),
                                    ('/estimator', 'method', 'torque_ls'),
                                    ('/controller', 'rate_hz', 500.0),
                                    ('/sim', 'real_time_factor', 2.0)):
            result, = set_remote(ex, probe, target, **{name: value})
            assert not result.successful and 'read-only' in result.reason, (target, name)
        assert nodes[0].get_parameter('window_length').value == 200
        assert nodes[0].p['window_length'] == 200
        assert nodes[1].get_parameter('method').value == ''  # the robot's


def test_out_of_range_or_unknown_value_is_refused(recording):
    """Run-time values out of range, off the choices or breaking a node rule are refused."""
    with ros_context() as (ctx, ex, nodes):
        buf, est, ctl, ik, _ = _nodes(ctx, recording)
        nodes += [buf, est, ctl, ik, _]
        cases = ((buf, 'diagnostics_period_s', -1.0, 'out of range'),
                 (buf, 'flush_every', 0, 'out of range'),
                 (est, 'forgetting_half_life_s', -1.0, 'out of range'),
                 (est, 'regularization', -2.0, 'out of range'),
                 (ctl, 'kp', [1.0, 2.0], 'per model joint'),
                 (ctl, 'kd', [1.0, -2.0, 3.0], '>= 0'),
                 (ik, 'duty', 1.0, 'duty'),
                 (ik, 'period_s', 0.0, '> 0'),
                 (ik, 'stride_m', 1, 'type'))
        for node, name, value, why in cases:
            before = node.p[name]
            result, = node.set_parameters([Parameter(name, value=value)])
            assert not result.successful and why in result.reason, (name, result.reason)
            assert node.p[name] == before and node.get_parameter(name).value == before


@pytest.mark.parametrize('node_cls, name, value', [
    (BufferNode, 'window_length', 0), (BufferNode, 'force_sensing', 'sonar'),
    (EstimatorNode, 'method', 'bogus'), (EstimatorNode, 'fold_rate_hz', -1.0),
    (EstimatorNode, 'auto_levels', 'knee=mass'), (EstimatorNode, 'auto_levels', 'thigh'),
    (ControllerNode, 'rt_priority', 120), (ControllerNode, 'rate_hz', 1000)])
def test_start_up_refuses_values_that_cannot_work(node_cls, name, value):
    """An override that cannot work (range, choices, type) stops the node in one clear line."""
    with ros_context() as (ctx, ex, nodes):
        with pytest.raises(ParameterRefusedError) as info:
            nodes.append(node_cls(context=ctx, parameter_overrides=params(**{name: value})))
    message = str(info.value)
    assert name in message and '\n' not in message and info.value.name == name


def test_runtime_diagnostics_period_is_applied():
    """Setting the buffer's diagnostics_period_s at run time changes its /diagnostics rate."""
    with ros_context() as (ctx, ex, nodes):
        buf = BufferNode(context=ctx, parameter_overrides=params(diagnostics_period_s=30.0))
        probe = Node('probe', context=ctx)
        nodes += [buf, probe]
        seen = []
        probe.create_subscription(
            DiagnosticArray, '/diagnostics',
            lambda m: seen.extend(s for s in m.status if s.name == buffer_node.DIAG_NAME), 50)
        for n in nodes:
            ex.add_node(n)
        spin_until(ex, lambda: False, 1.0)
        assert seen == []
        result, = set_remote(ex, probe, '/buffer', diagnostics_period_s=0.05)
        assert result.successful, result.reason
        assert spin_until(ex, lambda: len(seen) >= 5)
        assert buf.p.diagnostics_period_s == 0.05


def test_runtime_estimator_settings_reach_the_estimator():
    """Half-life, regularization and min_samples set at run time are the estimator's."""
    with ros_context() as (ctx, ex, nodes):
        est = EstimatorNode(context=ctx, parameter_overrides=params(state_file=''))
        nodes.append(est)
        results = est.set_parameters([Parameter('forgetting_half_life_s', value=30.0),
                                      Parameter('regularization', value=0.5),
                                      Parameter('min_samples', value=42),
                                      Parameter('publish_markers', value=False)])
        assert all(r.successful for r in results)
        assert (est.est.half_life_s, est.est.reg, est.est.min_samples) == (30.0, 0.5, 42)
        assert est.p['publish_markers'] is False


def test_config_files_list_declared_parameters_with_units():
    """The node YAMLs list declared parameters at their types and defaults, a unit per number."""
    specs = {'buffer': buffer_node.PARAMETERS, 'estimator': estimator_node.PARAMETERS,
             'sim': sim_node.PARAMETERS, 'ik': ik_node.PARAMETERS}
    noted = {('controller', 'robot'), ('controller', 'floating_base')}
    for path in (CONFIG / 'legid.yaml', CONFIG / 'controller.yaml', CONFIG / 'ik.yaml'):
        cfg = yaml.safe_load(path.read_text())
        for node, block in cfg.items():
            values = block['ros__parameters']
            if node == 'controller':
                robot = load_robot(values['robot'], floating_base=values['floating_base'])
                table = controller_node.ROBOT_PARAMETERS + controller_node.parameters(robot)
            else:
                table = specs[node]
            defaults = {s.name: s.default for s in table}
            for name, value in values.items():
                assert name in defaults, f'{path.name}: {node}.{name} is not declared'
                assert type(value) is type(defaults[name]), f'{path.name}: {node}.{name}'
                if (node, name) not in noted:
                    assert value == defaults[name], f'{path.name}: {node}.{name}'
        for line in path.read_text().splitlines():
            key, _, rest = line.strip().partition(':')
            value = yaml.safe_load(rest.split('#')[0]) if rest and line.startswith('    ') \
                else None
            numbers = value if isinstance(value, list) else [value]
            if numbers and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                               for v in numbers):
                assert '[' in rest.split('#', 1)[1], f'{path.name}: {key} has no unit'



@pytest.mark.parametrize('value', [float('inf'), float('nan'), 1e12],
                         ids=['inf', 'nan', 'too_long'])
def test_runtime_period_that_makes_no_timer_is_refused_and_the_old_timer_kept(value):
    """A period set to inf, NaN or beyond the timer clock is refused with a reason, one result
    per parameter, the old value and timer stay in force and /diagnostics keeps coming."""
    with ros_context() as (ctx, ex, nodes):
        est = EstimatorNode(context=ctx, parameter_overrides=params(
            state_file='', diagnostics_period_s=0.05))
        probe = Node('probe', context=ctx)
        nodes += [est, probe]
        seen = []
        probe.create_subscription(
            DiagnosticArray, '/diagnostics',
            lambda m: seen.extend(s for s in m.status if s.name == estimator_node.DIAG_NAME),
            50)
        for n in nodes:
            ex.add_node(n)
        timers = {n: est.p.timer_of(n) for n in ('diagnostics_period_s', 'update_period_s')}
        results = set_remote(ex, probe, '/estimator', diagnostics_period_s=value,
                             update_period_s=value)
        assert len(results) == 2
        for result in results:
            assert not result.successful and result.reason, result
        assert est.get_parameter('diagnostics_period_s').value == 0.05
        assert est.p.diagnostics_period_s == 0.05 and est.p.update_period_s == 1.0
        for name, timer in timers.items():
            assert est.p.timer_of(name) is timer and not timer.is_canceled(), name
        seen.clear()
        assert spin_until(ex, lambda: len(seen) >= 3)


@pytest.mark.parametrize('node_cls, name', [
    (BufferNode, 'diagnostics_period_s'), (EstimatorNode, 'update_period_s'),
    (ControllerNode, 'diagnostics_period_s'), (IkNode, 'period_s')])
def test_start_up_refuses_an_infinite_period_naming_it(node_cls, name):
    """``-p <period>:=.inf`` at start-up is a one-line refusal naming the parameter."""
    with ros_context() as (ctx, ex, nodes):
        with pytest.raises(ParameterRefusedError) as info:
            nodes.append(node_cls(context=ctx, parameter_overrides=params(
                **{name: float('inf')})))
    assert info.value.name == name and '\n' not in str(info.value)


def test_no_float_parameter_is_declared_with_an_infinite_bound(recording):
    """Every float range a node declares has finite bounds (rclpy takes inf at an inf bound)."""
    with ros_context() as (ctx, ex, nodes):
        nodes += _nodes(ctx, recording)
        for node in nodes:
            names = node.list_parameters([], 0).names
            for d in node.describe_parameters(names):
                for r in d.floating_point_range:
                    assert math.isfinite(r.from_value) and math.isfinite(r.to_value), d.name
