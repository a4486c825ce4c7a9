"""Clean shutdown of the node processes: SIGINT and SIGTERM give exit 0, no traceback, the
estimator's state saved; start-up refusals are one line and a non-zero exit."""

import signal
import subprocess
import sys
import time

import pytest

from node_processes import NODE_NAMES, fresh_domain, node_env, start, stop, wait_spinning

pytestmark = pytest.mark.timeout(600)
NODES = ('sim_node', 'buffer_node', 'estimator_node', 'controller_node', 'ik_node')


def _domain(offset: int) -> int:
    """A locked domain of its own (``offset`` kept from the pid-derived ids it replaces)."""
    return fresh_domain()


@pytest.mark.parametrize('sig', [signal.SIGINT, signal.SIGTERM], ids=['SIGINT', 'SIGTERM'])
def test_signal_stops_every_node_cleanly(sig, tmp_path):
    """Every node started as its own process exits 0 without a traceback; state saved."""
    domain = _domain(sig)
    env = node_env(domain)
    state = tmp_path / 'state.npz'
    params = {'sim_node': {'duration_s': 3.0, 'start_delay_s': 0.0},
              'buffer_node': {'force_sensing': 'fsr'},
              'estimator_node': {'state_file': str(state), 'min_samples': 100,
                                 'update_period_s': 0.2},
              'controller_node': {'robot': 'leg3'}, 'ik_node': {}}
    for cycle in range(2):
        procs = {exe: start(exe, params[exe], env, tmp_path) for exe in NODES}
        try:
            silent = wait_spinning([NODE_NAMES[e] for e in NODES], domain, procs)
        finally:
            codes = stop(procs, sig)
        logs = {exe: (tmp_path / f'{exe}.err').read_text() for exe in NODES}
        assert silent == [], (silent, codes, logs)
        assert codes == {exe: 0 for exe in NODES}, (codes, logs)
        for exe, text in logs.items():
            assert 'Traceback' not in text and '[FATAL]' not in text, (exe, text[-2000:])
            assert 'context is invalid' not in text, (exe, text[-2000:])
            # the stop watchdog ended a node that did not stop (stop_signals.STOP_GRACE_S)
            assert 'after the stop signal' not in text, (exe, text[-4000:])
        assert state.is_file(), f'cycle {cycle}: estimator state not saved'


def test_sigusr1_writes_the_stacks_and_the_node_runs_on(tmp_path):
    """SIGUSR1 writes every thread's Python stack to a node's stderr; the node keeps
    spinning and a later SIGINT still stops it with exit 0."""
    domain = _domain(11)
    proc = start('ik_node', {}, node_env(domain), tmp_path)
    try:
        assert wait_spinning([NODE_NAMES['ik_node']], domain, {'ik_node': proc}) == []
        proc.send_signal(signal.SIGUSR1)
        time.sleep(1.0)
        assert proc.poll() is None
        err = (tmp_path / 'ik_node.err').read_text()
        assert 'most recent call first' in err and 'run_node' in err, err[-2000:]
    finally:
        codes = stop({'ik_node': proc}, signal.SIGINT)
    assert codes == {'ik_node': 0}


@pytest.mark.parametrize('exe, params, name', [
    ('controller_node', {'robot': 'leg3', 'joint_names': '[knee,hip_flex,ankle]'},
     'joint_names'),
    ('controller_node', {'robot': 'leg3', 'ident_file': '/nonexistent/ident.yaml'},
     'ident_file'),
    ('estimator_node', {'method': 'floating_qp', 'state_file': "''"}, 'method'),
])
def test_start_up_refusal_is_one_line_and_non_zero(exe, params, name, tmp_path):
    """A node refusing its configuration exits non-zero with one stderr line naming why."""
    env = node_env(_domain(7))
    proc = start(exe, params, env, tmp_path)
    code = proc.wait(timeout=120)
    err = (tmp_path / f'{exe}.err').read_text()
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith('[INFO]')]
    assert code != 0
    assert len(lines) == 1 and name in lines[0] and 'Traceback' not in err, err


def test_run_node_exits_2_on_refusal_without_rclpy_traceback():
    """A refusal exits with code 2 (not 1, a crash) and its line starts with node and name."""
    out = subprocess.run(
        [sys.executable, '-c', 'from legid_ros.ros.controller_node import main; '
         'raise SystemExit(main(["x", "--ros-args", "-p", "robot:=leg3", "-p", '
         '"joint_names:=[knee]"]))'], env=node_env(_domain(9)), capture_output=True,
        text=True, timeout=120)
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip().startswith('controller: parameter joint_names refused'), out.stderr
