"""What the launch files decide, checked with stand-ins for ``launch``/``launch_ros`` (not
installable here): /clock under use_sim_time, legid replay --clock, rviz without its packages."""

import sys
import types
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


class _Recorded:
    """Stand-in of a launch class: keeps its arguments."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


class LaunchConfiguration(_Recorded):
    """Stand-in resolving from a dict context."""

    def perform(self, context):
        return context[self.args[0]]

    def __eq__(self, other):
        return isinstance(other, LaunchConfiguration) and other.args == self.args

    __hash__ = None


class PackageNotFoundError(KeyError):
    """ament_index_python's error."""


def _stubs(installed):
    mods = {}

    def module(name, **attrs):
        mod = types.ModuleType(name)
        mod.__dict__.update(attrs)
        mods[name] = mod

    def rec(name):
        return type(name, (_Recorded,), {})

    def prefix(package):
        if package not in installed:
            raise PackageNotFoundError(package)
        return '/opt/ros'

    module('launch', LaunchDescription=rec('LaunchDescription'))
    actions = ('DeclareLaunchArgument', 'LogInfo', 'OpaqueFunction', 'IncludeLaunchDescription')
    module('launch.actions', **{n: rec(n) for n in actions})
    module('launch.conditions', IfCondition=rec('IfCondition'),
           UnlessCondition=rec('UnlessCondition'))
    module('launch.launch_description_sources',
           PythonLaunchDescriptionSource=rec('PythonLaunchDescriptionSource'))
    module('launch.substitutions', Command=rec('Command'), LaunchConfiguration=LaunchConfiguration,
           PathJoinSubstitution=rec('PathJoinSubstitution'))
    module('launch_ros')
    module('launch_ros.actions', Node=rec('Node'))
    module('launch_ros.parameter_descriptions', ParameterValue=rec('ParameterValue'))
    module('launch_ros.substitutions', FindPackageShare=rec('FindPackageShare'))
    module('ament_index_python')
    module('ament_index_python.packages', PackageNotFoundError=PackageNotFoundError,
           get_package_prefix=prefix)
    return mods


def _load(name, monkeypatch, installed=()):
    for key, mod in _stubs(set(installed)).items():
        monkeypatch.setitem(sys.modules, key, mod)
    namespace = {}
    path = ROOT / 'launch' / name
    exec(compile(path.read_text(), str(path), 'exec'), namespace)
    return namespace


def _entities(ns):
    return ns['generate_launch_description']().args[0]


def _kind(obj):
    return type(obj).__name__


def test_sim_publishes_clock_under_use_sim_time(monkeypatch):
    """sim.launch.py sets the sim's publish_clock from use_sim_time (as a bool)."""
    ns = _load('sim.launch.py', monkeypatch)
    sim = next(e for e in _entities(ns) if _kind(e) == 'Node'
               and e.kwargs['executable'] == 'sim_node')
    params = sim.kwargs['parameters'][1]
    clock = params['publish_clock']
    assert clock.args[0] == LaunchConfiguration('use_sim_time')
    assert clock.kwargs['value_type'] is bool
    assert params['use_sim_time'] == LaunchConfiguration('use_sim_time')


@pytest.mark.parametrize('clock, loop, expected', [
    ('true', 'false', ['--clock']), ('false', 'false', []),
    ('True', 'true', ['--loop', '--clock']), ('false', '1', ['--loop'])])
def test_replay_passes_clock_and_loop_flags(monkeypatch, clock, loop, expected):
    """replay.launch.py gives legid replay --clock when clock is true, --loop when loop is."""
    ns = _load('replay.launch.py', monkeypatch)
    ctx = {'bag': '/data/run', 'rate': '2.0', 'loop': loop, 'clock': clock}
    node, = ns['_replay'](ctx)
    assert node.kwargs['arguments'] == ['replay', '--bag', '/data/run', '--rate', '2.0'] + expected
    assert node.kwargs['executable'] == 'legid'


def test_replay_clock_defaults_to_use_sim_time(monkeypatch):
    """The clock argument's default is use_sim_time, declared after it."""
    ns = _load('replay.launch.py', monkeypatch)
    decl = [e for e in _entities(ns) if _kind(e) == 'DeclareLaunchArgument']
    names = [d.args[0] for d in decl]
    clock = decl[names.index('clock')]
    assert clock.kwargs['default_value'] == LaunchConfiguration('use_sim_time')
    assert names.index('use_sim_time') < names.index('clock')
    include = next(e for e in _entities(ns) if _kind(e) == 'IncludeLaunchDescription')
    assert dict(include.kwargs['launch_arguments'])['use_sim_time'] == \
        LaunchConfiguration('use_sim_time')


@pytest.mark.parametrize('installed, kinds', [
    ((), ['LogInfo']), (('rviz2',), ['LogInfo']),
    (('rviz2', 'robot_state_publisher'), ['Node', 'Node'])])
def test_rviz_needs_its_packages_or_is_skipped_with_a_note(monkeypatch, installed, kinds):
    """rviz:=true starts robot_state_publisher and rviz2 only when both are installed."""
    ns = _load('legid.launch.py', monkeypatch, installed)
    out = ns['_viewers']({'rviz': 'true', 'use_sim_time': 'false'})
    assert [_kind(e) for e in out] == kinds
    assert ns['_viewers']({'rviz': 'false'}) == []


def test_force_sensing_reaches_buffer_and_estimator(monkeypatch):
    """legid.launch.py passes force_sensing to the buffer and the estimator alike."""
    ns = _load('legid.launch.py', monkeypatch)
    nodes = {e.kwargs['executable']: e for e in _entities(ns) if _kind(e) == 'Node'}
    for exe in ('buffer_node', 'estimator_node'):
        value = nodes[exe].kwargs['parameters'][2]['force_sensing']
        assert value.args[0] == LaunchConfiguration('force_sensing')


LAUNCH_FILES = ('legid.launch.py', 'sim.launch.py', 'replay.launch.py')


@pytest.mark.parametrize('name', LAUNCH_FILES)
def test_method_default_agrees_with_the_config_file(monkeypatch, name):
    """Each launch file's default method is the estimator's method in config/legid.yaml."""
    ns = _load(name, monkeypatch)
    decl = {e.args[0]: e for e in _entities(ns) if _kind(e) == 'DeclareLaunchArgument'}
    cfg = yaml.safe_load((ROOT / 'config' / 'legid.yaml').read_text())
    assert decl['method'].kwargs['default_value'] == \
        cfg['estimator']['ros__parameters']['method'] == ''


@pytest.mark.parametrize('name', LAUNCH_FILES)
def test_missing_config_file_stops_the_launch_before_any_process(monkeypatch, name, tmp_path):
    """config:= a missing, unreadable or non-mapping file raises naming it, before any process
    starts; the installed config/legid.yaml passes."""
    ns = _load(name, monkeypatch)
    entities = _entities(ns)
    kinds = [_kind(e) for e in entities]
    checks = [i for i, e in enumerate(entities) if _kind(e) == 'OpaqueFunction'
              and e.kwargs['function'] is ns['_check_config']]
    starts = [i for i, k in enumerate(kinds) if k in ('Node', 'IncludeLaunchDescription')
              or (k == 'OpaqueFunction' and i not in checks)]
    assert checks and checks[0] < min(starts)
    check = ns['_check_config']
    folder = tmp_path / 'dir.yaml'
    folder.mkdir()
    listing = tmp_path / 'list.yaml'
    listing.write_text('- a\n- b\n')
    for bad in (tmp_path / 'missing.yaml', folder, listing):
        with pytest.raises(RuntimeError, match=str(bad)):
            check({'config': str(bad)})
    assert check({'config': str(ROOT / 'config' / 'legid.yaml')}) == []


@pytest.mark.parametrize('name', ('legid.launch.py', 'sim.launch.py'))
def test_every_node_gets_the_config_file_to_check(monkeypatch, name):
    """Every legid node a launch file starts gets --config-file <config> (checked at start)."""
    ns = _load(name, monkeypatch)
    nodes = [e for e in _entities(ns) if _kind(e) == 'Node']
    assert nodes
    for node in nodes:
        assert node.kwargs['arguments'] == ['--config-file', LaunchConfiguration('config')]
        assert node.kwargs['parameters'][0] == LaunchConfiguration('config')
