"""The parameter-file check of the nodes: a launch ``config:=`` that is missing or unreadable
is refused in one line with exit 2 instead of running on the code defaults."""

import os
import subprocess
from pathlib import Path

import pytest

from legid_ros.ros.executor import run_node
from legid_ros.ros.node_util import config_file_problems, parameter_file_problem

from node_processes import BIN, node_env

pytestmark = pytest.mark.timeout(300)
CONFIG = Path(__file__).resolve().parents[2] / 'config' / 'legid.yaml'


def test_parameter_file_problem_names_each_kind_of_bad_file(tmp_path):
    """Missing, a directory, invalid YAML and a non-mapping are refused naming the file."""
    bad_yaml = tmp_path / 'bad.yaml'
    bad_yaml.write_text('estimator: {ros__parameters: [\n')
    listing = tmp_path / 'list.yaml'
    listing.write_text('- 1\n')
    cases = {tmp_path / 'missing.yaml': 'does not exist', tmp_path: 'not a file',
             bad_yaml: 'not valid YAML', listing: 'mapping'}
    for path, why in cases.items():
        problem = parameter_file_problem(path)
        assert problem and str(path) in problem and why in problem, problem
        assert '\n' not in problem
    assert parameter_file_problem('') is not None
    assert parameter_file_problem(CONFIG) is None


def test_config_option_is_read_before_ros_args_only(tmp_path):
    """--config-file is checked before --ros-args (either spelling); ROS arguments are not."""
    missing = str(tmp_path / 'missing.yaml')
    assert config_file_problems(['ik_node', '--config-file', str(CONFIG), '--ros-args']) == []
    assert len(config_file_problems(['ik_node', '--config-file', missing])) == 1
    assert len(config_file_problems(['ik_node', f'--config-file={missing}'])) == 1
    assert config_file_problems(['ik_node', '--config-file']) == ['--config-file needs a path']
    assert config_file_problems(['ik_node', '--ros-args', '--config-file', missing]) == []


def test_run_node_refuses_a_missing_config_file_before_building_the_node(tmp_path, capsys):
    """run_node returns 2 with one line naming the file and never builds the node."""
    built = []
    code = run_node(lambda: built.append(1), ['ik_node', '--config-file',
                                              str(tmp_path / 'gone.yaml'), '--ros-args'])
    err = capsys.readouterr().err
    assert code == 2 and built == []
    assert err.count('\n') == 1 and 'gone.yaml' in err and 'does not exist' in err


def test_node_executable_exits_2_on_a_missing_config_file(tmp_path):
    """The ik_node executable given a missing --config-file exits 2 with one stderr line."""
    missing = tmp_path / 'nowhere' / 'legid.yaml'
    env = node_env(int(os.environ.get('ROS_DOMAIN_ID', '0')))
    out = subprocess.run([str(BIN / 'ik_node'), '--config-file', str(missing), '--ros-args',
                          '-r', '__node:=ik'], env=env, capture_output=True, text=True,
                         timeout=240)
    lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert out.returncode == 2, out.stderr
    assert len(lines) == 1 and str(missing) in lines[0] and 'Traceback' not in out.stderr


def test_run_node_builds_the_node_with_one_blas_thread():
    """Nodes run their small linear algebra on one BLAS thread (many threads on a busy
    computer cost 10-200x the work): set before the node is built."""
    from legid_ros.core.errors import LegidError
    from legid_ros.core.identification.threads import blas_threads, limit_blas_threads
    limit_blas_threads(2)
    assert max(blas_threads()) == 2  # numpy's at least (an old bundled one may stay at 1)
    seen = []

    def factory():
        seen.append(blas_threads())
        raise LegidError('refused on purpose')

    try:
        assert run_node(factory, ['ik_node', '--ros-args']) == 2
    finally:
        limit_blas_threads(1)
    assert seen == [[1] * len(seen[0])]
