"""Estimator files (real rclpy): a damaged state file is moved aside and the estimator starts
fresh; the identified URDF/YAML never land outside output_dir; a killed save leaves nothing."""

import numpy as np
import pytest
import yaml
from std_srvs.srv import Trigger

from legid_ros.core import paths
from legid_ros.core.atomic_files import temp_path
from legid_ros.core.inertial import get_parameters, parameter_names
from legid_ros.core.robot import load_robot
from legid_ros.ros.estimator_node import EstimatorNode

from pipeline_helpers import params, ros_context

pytestmark = pytest.mark.timeout(120)


def _valid_state(path):
    with ros_context() as (ctx, ex, nodes):
        est = EstimatorNode(context=ctx, parameter_overrides=params(state_file=str(path)))
        nodes.append(est)
        robot = load_robot('biped')
        est.published = (get_parameters(robot.model), parameter_names(robot.model))
        est.save_state()


def _damage(path, how):
    if how == 'empty':
        path.write_bytes(b'')
    elif how == 'truncated':
        data = path.read_bytes()
        path.write_bytes(data[:len(data) // 2])
    elif how == 'nan_statistics':
        with np.load(path) as z:
            state = {k: z[k] for k in z.files}
        state['H'] = state['H'] * np.nan
        np.savez(path, **state)
    elif how == 'nan_parameters':
        with np.load(path) as z:
            state = {k: z[k] for k in z.files}
        state['node_pi'][3] = np.inf
        np.savez(path, **state)
    elif how == 'wrong_size':
        with np.load(path) as z:
            state = {k: z[k] for k in z.files}
        state['node_pi'] = state['node_pi'][:5]
        np.savez(path, **state)


@pytest.mark.parametrize('how', ['empty', 'truncated', 'nan_statistics', 'nan_parameters',
                                 'wrong_size'])
def test_damaged_state_is_moved_aside_and_estimator_starts_fresh(how, tmp_path):
    """The node starts, reports the file once, renames it .corrupt-<time>, folds nothing."""
    path = tmp_path / 'state.npz'
    _valid_state(path)
    _damage(path, how)
    with ros_context() as (ctx, ex, nodes):
        est = EstimatorNode(context=ctx, parameter_overrides=params(state_file=str(path)))
        nodes.append(est)
        assert not est.restored and est.published is None
        assert est.events == {'state_file_unusable': 1}
        assert est.est.normal.n == 0
        est.save_state()  # the next save writes a good file again
    aside = [p.name for p in tmp_path.iterdir() if '.corrupt-' in p.name]
    assert len(aside) == 1 and aside[0].startswith('state.npz.corrupt-')
    with ros_context() as (ctx, ex, nodes):
        est = EstimatorNode(context=ctx, parameter_overrides=params(state_file=str(path)))
        nodes.append(est)
        assert est.restored and est.events == {}


def test_valid_state_is_restored_with_its_published_set(tmp_path):
    """An intact state file is restored and its parameter set published again."""
    path = tmp_path / 'state.npz'
    _valid_state(path)
    with ros_context() as (ctx, ex, nodes):
        est = EstimatorNode(context=ctx, parameter_overrides=params(state_file=str(path)))
        nodes.append(est)
        assert est.restored and est.published is not None
        assert np.isfinite(est.published[0]).all()


def test_temp_file_of_a_killed_save_is_removed_at_start(tmp_path):
    """A temporary file left by a save killed mid-write is deleted; the state is untouched."""
    path = tmp_path / 'state.npz'
    _valid_state(path)
    temp_path(path).write_bytes(b'half a zip')
    with ros_context() as (ctx, ex, nodes):
        est = EstimatorNode(context=ctx, parameter_overrides=params(state_file=str(path)))
        nodes.append(est)
        assert est.restored
    assert sorted(p.name for p in tmp_path.iterdir()) == ['state.npz']


def test_escaping_robot_name_writes_only_inside_output_dir(tmp_path):
    """robot: ../../escaped in the description gives escaped_identified.* inside output_dir."""
    desc = yaml.safe_load(paths.config_path('biped.yaml').read_text())
    desc['robot'] = '../../escaped'
    desc['urdf'] = str(paths.urdf_path('biped.urdf'))
    work = tmp_path / 'a' / 'b'
    work.mkdir(parents=True)
    ypath = work / 'escaped.yaml'
    ypath.write_text(yaml.safe_dump(desc))
    out = work / 'out'
    with ros_context() as (ctx, ex, nodes):
        est = EstimatorNode(context=ctx, parameter_overrides=params(
            robot=str(ypath), state_file='', output_dir=str(out)))
        nodes.append(est)
        est.published = (get_parameters(est.robot.model), parameter_names(est.robot.model))
        response = est._on_save(Trigger.Request(), Trigger.Response())
    assert response.success, response.message
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob('*')
                     if p.is_file())
    assert written == ['a/b/escaped.yaml', 'a/b/out/escaped_identified.urdf',
                       'a/b/out/escaped_identified.yaml']


def test_save_answer_names_absolute_paths_and_says_what_is_missing(tmp_path, monkeypatch):
    """~/save names absolute paths (relative settings resolved against the node's directory),
    says when no parameter set exists yet, and never 'wrote None' without a state file."""
    monkeypatch.chdir(tmp_path)
    with ros_context() as (ctx, ex, nodes):
        est = EstimatorNode(context=ctx, parameter_overrides=params(
            state_file='rel/state.npz', output_dir='rel/out'))
        nodes.append(est)
        early = est._on_save(Trigger.Request(), Trigger.Response())
        est.published = (get_parameters(est.robot.model), parameter_names(est.robot.model))
        full = est._on_save(Trigger.Request(), Trigger.Response())
    with ros_context() as (ctx, ex, nodes):
        est = EstimatorNode(context=ctx, parameter_overrides=params(state_file=''))
        nodes.append(est)
        empty = est._on_save(Trigger.Request(), Trigger.Response())
    assert early.success and early.message == (
        f'wrote {tmp_path}/rel/state.npz (no parameter set yet: no URDF or YAML written)')
    assert full.success and full.message == (
        f'wrote {tmp_path}/rel/state.npz, {tmp_path}/rel/out/biped_identified.urdf, '
        f'{tmp_path}/rel/out/biped_identified.yaml')
    assert empty.success and 'None' not in empty.message
    assert empty.message.startswith('nothing written (state_file is empty)')
