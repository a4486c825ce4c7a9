"""`legid demo` end to end: nodes as separate processes, report, figures, saved state."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.timeout(900)


def test_short_demo_runs_every_node_and_reports(tmp_path):
    """A 15 s demo exits 0, publishes a sound parameter set, writes its outputs, runs on a
    domain of its own and reaps every node it started.

    Nothing here depends on how much work fits in 15 s: a busy machine streams slower, and the
    demo streams on until the first parameter set (--patience, 120 s by default). How close
    the estimate gets to the truth is tested on a fixed recording in test_estimator_node.
    """
    out = tmp_path / 'demo'
    env = {k: v for k, v in os.environ.items() if k != 'ROS_DOMAIN_ID'}  # let it take one
    proc = subprocess.run([str(Path(sys.executable).parent / 'legid'), 'demo', '--duration',
                           '15', '--out', str(out)], capture_output=True, text=True,
                          timeout=840, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert '=== legid demo report ===' in proc.stdout
    report = json.loads((out / 'demo_report.json').read_text())
    assert report['parameters_published'] > 0
    assert report['streamed_s'] >= 15.0
    assert report['missing_nodes'] == []
    ident = report['masses_identified']
    assert set(ident) == set(report['masses_truth'])
    assert all(np.isfinite(m) and m > 0 for m in ident.values()), ident
    assert report['messages']['listener']['windows'] > 0
    assert report['estimator_state_saved']
    solve = report['solve_time_ms']  # the CPU share is reported beside the wall time
    assert 0.0 < solve['cpu_mean'] <= solve['mean'] + 1.0
    for name in ('demo_masses.png', 'demo_zmp_deviation.png', 'demo_solve_times.png',
                 'identified/biped_identified.urdf', 'identified/biped_identified.yaml'):
        assert (out / name).is_file(), name
    assert report['ros_domain'] != int(os.environ['ROS_DOMAIN_ID'])  # ours is locked
    assert all(code is not None for code in report['exit_codes'].values()), report
    assert 'unreaped' not in report['stopped_by'].values(), report['stopped_by']

CHILD = '''
import signal, sys, time
if sys.argv[1] in ('term_only', 'stubborn'):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
else:
    signal.signal(signal.SIGINT, lambda *a: sys.exit(0))
if sys.argv[1] == 'stubborn':
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
print('ready', flush=True)
time.sleep(600)
'''


def test_stop_escalates_and_reaps_every_process():
    """SIGINT, then SIGTERM, then SIGKILL: every process is reaped (an exit code), each one by
    the first signal it obeys (the old stop never waited after SIGKILL: no exit code)."""
    from legid_ros.commands.demo import _stop

    procs = {}
    try:
        for name in ('polite', 'term_only', 'stubborn', 'done'):
            procs[name] = subprocess.Popen([sys.executable, '-c', CHILD, name],
                                           stdout=subprocess.PIPE, text=True)
        for name in ('polite', 'term_only', 'stubborn'):
            assert procs[name].stdout.readline().strip() == 'ready'
        procs['done'].kill()
        procs['done'].wait()
        by = _stop(procs, {signal.SIGINT: 5.0, signal.SIGTERM: 5.0, signal.SIGKILL: 60.0})
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
            p.wait()
            p.stdout.close()
    assert by == {'done': '', 'polite': 'SIGINT', 'term_only': 'SIGTERM',
                  'stubborn': 'SIGKILL'}
    assert {k: p.returncode for k, p in procs.items()} == {
        'done': -signal.SIGKILL, 'polite': 0, 'term_only': -signal.SIGTERM,
        'stubborn': -signal.SIGKILL}
