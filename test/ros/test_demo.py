"""`legid demo` end to end: nodes as separate processes, report, figures, saved state."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(240)


def test_short_demo_runs_every_node_and_reports(tmp_path):
    """A 15 s demo exits 0, publishes parameters better than CAD and writes its outputs."""
    out = tmp_path / 'demo'
    proc = subprocess.run([str(Path(sys.executable).parent / 'legid'), 'demo', '--duration',
                           '15', '--out', str(out)], capture_output=True, text=True,
                          timeout=220)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert '=== legid demo report ===' in proc.stdout
    report = json.loads((out / 'demo_report.json').read_text())
    assert report['parameters_published'] > 0
    assert report['missing_nodes'] == []
    truth, ident, cad = (report['masses_truth'], report['masses_identified'],
                         report['masses_cad'])
    assert sum(abs(ident[g] - truth[g]) for g in truth) < sum(abs(cad[g] - truth[g])
                                                              for g in truth)
    assert report['messages']['listener']['windows'] > 50
    assert report['estimator_state_saved']
    for name in ('demo_masses.png', 'demo_zmp_deviation.png', 'demo_solve_times.png',
                 'identified/biped_identified.urdf', 'identified/biped_identified.yaml'):
        assert (out / name).is_file(), name
    assert all(code is not None for code in report['exit_codes'].values())
