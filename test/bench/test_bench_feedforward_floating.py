"""Tests of the floating part of legid bench feedforward (--only floating, report)."""

import json
from types import SimpleNamespace

from legid_ros.bench import feedforward, feedforward_floating

JOINTS = ['r_hip_yaw', 'r_knee']


def _part():
    err = {c: {j: v * (i + 1) for j, v in zip(JOINTS, (1e-3, 2e-3))}
           for i, c in enumerate(('identified', 'urdf', 'pd'))}
    for row in err.values():
        row['max'] = max(row.values())
    return {'floating': {'max_err_rad': {c: err[c] for c in ('pd', 'urdf', 'identified')},
                         'tau_ff_us_median': 150.0, 'fell': False},
            'floating_meta': {'stance_leg_joints': JOINTS, 'gains': {'kp': 1000.0, 'kd': 10.0},
                              'identification': {'method': 'zmp_qp', 'consistent': True},
                              'single_support_s': 20.0,
                              'checks': {'identified_vs_urdf': True}}}


def test_only_floating_keeps_the_other_results_and_writes_its_report(tmp_path, monkeypatch):
    """--only floating replaces the floating keys of an existing feedforward.json, keeps the
    rest, and writes the floating JSON and Markdown on their own."""
    monkeypatch.setattr(feedforward_floating, 'run_floating', lambda args: _part())
    (tmp_path / 'feedforward.json').write_text(json.dumps({'tau_ff_us_median': 12.0,
                                                           'floating': {'old': True}}))
    args = SimpleNamespace(only='floating', out=str(tmp_path), floating_single=20.0,
                           floating_ident='zmp_qp', floating_ident_s=60.0,
                           floating_gains=[1000.0, 10.0], floating_measured=False)
    out = feedforward.run(args)
    assert out['tau_ff_us_median'] == 12.0
    assert set(out['floating']) == {'max_err_rad', 'tau_ff_us_median', 'fell'}
    alone = json.loads((tmp_path / 'feedforward_floating.json').read_text())
    assert alone['floating'] == out['floating']
    md = (tmp_path / 'feedforward_floating.md').read_text()
    assert '| identified | 1.00e-03 | 2.00e-03 | 2.00e-03 |' in md
    assert 'legid bench feedforward --json --only floating' in md
