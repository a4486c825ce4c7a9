"""`legid save` and `legid reset` (separate processes) against estimator and buffer node
processes on private ROS domains: the files named are written, resets answer, a refusal exits
1, a missing service exits 3 with a hint naming the node meant, a mute one exits 3, Ctrl-C
exits 130."""

import os
import re
import select
import signal
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import rclpy
import yaml
from std_srvs.srv import Trigger

from legid_ros.core.inertial import get_parameters, parameter_names
from legid_ros.core.robot import load_robot
from legid_ros.ros.estimator_node import EstimatorNode

from node_processes import BIN, fresh_domain, node_env, start, stop, wait_spinning
from pipeline_helpers import params, ros_context

pytestmark = pytest.mark.timeout(600)
LEGID = str(BIN / 'legid')
DEADLINE_S = 120.0  # [s] for a process to end or a node to come up; reached only when broken
WAIT_S = 60.0  # [s] --timeout of the calls expected to succeed: generous on a loaded machine


def _legid(*args, domain=None, timeout_s=DEADLINE_S):
    """Run `legid ARGS` (``domain``: its ROS_DOMAIN_ID environment); returns the result and
    the wall time [s]."""
    env = dict(os.environ) if domain is None else node_env(domain)
    begin = time.monotonic()
    res = subprocess.run([LEGID, *args], capture_output=True, text=True, env=env,
                         timeout=timeout_s, check=False)
    return res, time.monotonic() - begin


def _state_with_parameters(path):
    """Write an estimator state file holding a published (CAD) parameter set."""
    with ros_context() as (ctx, ex, nodes):
        est = EstimatorNode(context=ctx, parameter_overrides=params(state_file=str(path)))
        nodes.append(est)
        robot = load_robot('biped')
        est.published = (get_parameters(robot.model), parameter_names(robot.model))
        est.save_state()


def _nodes(tmp, namespace, state_file, output_dir):
    """Start an estimator (restoring ``state_file``) and a buffer in ``namespace`` on a domain
    of their own; returns (domain, processes) once both answer a service."""
    domain = fresh_domain()
    env = node_env(domain)
    ros_args = ['-r', f'__ns:={namespace}'] if namespace != '/' else []
    procs = {'estimator': start('estimator_node', {'state_file': str(state_file),
                                                   'output_dir': str(output_dir)},
                                env, tmp, ros_args),
             'buffer': start('buffer_node', {}, env, tmp, ros_args)}
    prefix = namespace.strip('/') + '/' if namespace != '/' else ''
    missing = wait_spinning([prefix + 'estimator', prefix + 'buffer'], domain, procs,
                            DEADLINE_S)
    if missing:
        stop(procs)
        logs = {p.name: p.read_text()[-2000:] for p in tmp.glob('*.err')}
        pytest.fail(f'nodes {missing} did not come up: {logs}')
    return domain, procs


@pytest.fixture(scope='module')
def plain(tmp_path_factory):
    """/estimator (restored with a parameter set, writable output_dir) and /buffer."""
    tmp = tmp_path_factory.mktemp('plain')
    _state_with_parameters(tmp / 'state.npz')
    domain, procs = _nodes(tmp, '/', tmp / 'state.npz', tmp / 'identified')
    yield domain, tmp
    stop(procs)


@pytest.fixture(scope='module')
def robot1(tmp_path_factory):
    """/robot1/estimator (whose state_file lies below a regular file: every save fails) and
    /robot1/buffer."""
    tmp = tmp_path_factory.mktemp('robot1')
    (tmp / 'a_file').write_text('not a directory')
    domain, procs = _nodes(tmp, '/robot1', tmp / 'a_file' / 'state.npz', tmp / 'identified')
    yield domain, tmp
    stop(procs)


def test_save_writes_the_files_it_names(plain):
    """`legid save --domain-id D` exits 0 and names the state, URDF and YAML, which parse."""
    domain, tmp = plain
    res, _ = _legid('save', '--domain-id', str(domain), '--timeout', str(WAIT_S))
    assert res.returncode == 0, res.stderr
    line = res.stdout.strip().splitlines()[-1]
    assert line.startswith('/estimator/save: wrote '), res.stdout
    files = [Path(p) for p in line.split('wrote ', 1)[1].split(', ')]
    assert all(p.is_absolute() and p.is_file() for p in files), files
    by_suffix = {p.suffix: p for p in files}
    assert set(by_suffix) == {'.npz', '.urdf', '.yaml'}, files
    assert by_suffix['.npz'] == tmp / 'state.npz'
    assert by_suffix['.urdf'].parent == tmp / 'identified'
    root = ET.parse(by_suffix['.urdf']).getroot()
    assert root.tag == 'robot' and root.findall('link/inertial')
    doc = yaml.safe_load(by_suffix['.yaml'].read_text())
    assert isinstance(doc, dict) and doc
    with np.load(by_suffix['.npz'], allow_pickle=False) as z:
        assert 'node_pi' in z.files and np.isfinite(z['node_pi']).all()


def test_reset_with_buffer_answers_success_in_order(robot1):
    """`legid reset --buffer` resets the buffer, then the estimator; both succeed, exit 0
    (domain taken from ROS_DOMAIN_ID)."""
    domain, _ = robot1
    res, _ = _legid('reset', '--node', '/robot1/estimator', '--buffer', '/robot1/buffer',
                    '--timeout', str(WAIT_S), domain=domain)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.strip().splitlines()
    assert lines[-2] == '/robot1/buffer/reset: buffer reset', res.stdout
    assert lines[-1].startswith('/robot1/estimator/reset: estimator reset'), res.stdout


def test_refused_save_exits_1_with_the_reason(robot1):
    """A save the node cannot do (its state_file lies below a file) exits 1, its reason on
    stderr."""
    domain, _ = robot1
    res, _ = _legid('save', '--node', 'robot1/estimator', '--timeout', str(WAIT_S),
                    domain=domain)
    assert res.returncode == 1, (res.stdout, res.stderr)
    assert '/robot1/estimator/save refused: save failed' in res.stderr
    assert 'Traceback' not in res.stderr


def test_namespaced_node_is_suggested(robot1):
    """`legid save` with no /estimator but a /robot1/estimator exits 3 suggesting it."""
    domain, _ = robot1
    res, _ = _legid('save', '--domain-id', str(domain), '--timeout', '20')
    assert res.returncode == 3, (res.stdout, res.stderr)
    error = [x for x in res.stderr.splitlines() if 'error:' in x]
    assert len(error) == 1, res.stderr
    assert 'no service /estimator/save' in error[0]
    assert 'did you mean --node /robot1/estimator? (visible .../save services: ' \
           '/robot1/estimator/save)' in error[0]
    assert 'check that node /estimator is running, with the same ROS_DOMAIN_ID' in error[0]


def test_misspelt_node_is_suggested(plain):
    """`legid reset --node /estimatr` exits 3 suggesting /estimator and listing the resets."""
    domain, _ = plain
    res, _ = _legid('reset', '--node', '/estimatr', '--domain-id', str(domain), '--timeout',
                    '20')
    assert res.returncode == 3, (res.stdout, res.stderr)
    assert 'did you mean --node /estimator?' in res.stderr
    assert '/buffer/reset, /estimator/reset' in res.stderr


def test_absent_node_exits_3_after_the_timeout_with_the_hint():
    """On a domain with no node, `legid save --timeout 3` exits 3 after waiting the 3 s (not
    much longer), one line naming the service, the domain and what to check."""
    domain = fresh_domain()
    res, wall = _legid('save', '--domain-id', str(domain), '--timeout', '3')
    assert res.returncode == 3, (res.stdout, res.stderr)
    assert 3.0 <= wall < 3.0 + 60.0  # the rest is the interpreter's and rclpy's start-up
    error = [x for x in res.stderr.splitlines() if x.startswith('legid save: error:')]
    assert len(error) == 1, res.stderr
    assert f'no service /estimator/save (std_srvs/srv/Trigger) appeared within 3 s on ' \
           f'ROS_DOMAIN_ID {domain}' in error[0]
    assert 'no service at all is visible on this domain; check that node /estimator is ' \
           'running, with the same ROS_DOMAIN_ID' in error[0]
    assert 'Traceback' not in res.stderr and not res.stdout


def test_ctrl_c_while_waiting_exits_130():
    """SIGINT while `legid save` waits for its service ends it with exit 130, no traceback."""
    domain = fresh_domain()
    proc = subprocess.Popen([LEGID, 'save', '--domain-id', str(domain), '--timeout', '600'],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=node_env(domain))
    try:
        end = time.monotonic() + DEADLINE_S
        seen = ''
        while 'waiting up to' not in seen and time.monotonic() < end:
            ready, _, _ = select.select([proc.stderr], [], [], 1.0)
            if ready:
                seen += proc.stderr.readline()
            assert proc.poll() is None, seen
        assert 'waiting up to 600 s for /estimator/save' in seen
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=DEADLINE_S)
        rest = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 130, rest
    assert 'legid save: interrupted' in rest and 'Traceback' not in rest


@pytest.mark.parametrize('args, why', [
    (['save', '--timeout', '0'], '--timeout 0'),
    (['save', '--timeout', 'nan'], '--timeout nan'),
    (['reset', '--node', 'no spaces'], "--node 'no spaces'"),
    (['save', '--domain-id', '150'], '--domain-id 150'),
    (['save', '--domain-id', 'x'], 'argument --domain-id'),
])
def test_bad_arguments_exit_2(args, why):
    """A bad timeout, node name or domain id exits 2 with one line naming it, no traceback."""
    res, _ = _legid(*args)
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert why in res.stderr and 'Traceback' not in res.stderr


def test_service_that_never_answers_exits_3_after_resending():
    """A /estimator/save served by a node that never spins: requests are resent, then exit 3
    with one line saying it did not answer."""
    domain = fresh_domain()
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=domain)
    try:
        mute = rclpy.create_node('estimator', context=ctx)
        mute.create_service(Trigger, '~/save', lambda req, res: res)
        res, _ = _legid('save', '--domain-id', str(domain), '--timeout', '8')
        mute.destroy_node()
    finally:
        rclpy.shutdown(context=ctx)
    assert res.returncode == 3, (res.stdout, res.stderr)
    found = re.search(r'/estimator/save did not answer within 8 s \((\d+) request\(s\) sent\)',
                      res.stderr)
    assert found and int(found.group(1)) >= 2, res.stderr
    assert 'Traceback' not in res.stderr and not res.stdout
