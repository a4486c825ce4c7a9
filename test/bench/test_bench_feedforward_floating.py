"""Tests of the floating part of legid bench feedforward (--only floating, report)."""

import json
from types import SimpleNamespace

from legid_ros.bench import feedforward, feedforward_floating

JOINTS = ['r_hip_yaw', 'r_knee']


def _part():
    err = {c: {j: v * (i + 1) for j, v in zip(JOINTS, (1e-3, 2e-3))}
           for i, c in enumerate(('identified', 'live', 'urdf', 'pd'))}
    for row in err.values():
        row['max'] = max(row.values())
    return {'floating': {'max_err_rad': {c: err[c] for c in ('pd', 'urdf', 'identified', 'live')},
                         'tau_ff_us_median': 150.0, 'fell': False, 'identified_method': 'sdp',
                         'identified_consistent': True},
            'floating_meta': {'stance_leg_joints': JOINTS, 'gains': {'kp': 1000.0, 'kd': 10.0},
                              'identification': {'method': 'sdp', 'consistent': True,
                                                 'live': {'live': {'param_set': 'reduced',
                                                                   'consistent': True}}},
                              'single_support_s': 20.0,
                              'ratio_live_vs_urdf': {'r_hip_yaw': 0.5, 'r_knee': 0.5},
                              'checks': {'identified_vs_urdf': True}}}


def test_only_floating_keeps_the_other_results_and_writes_its_report(tmp_path, monkeypatch):
    """--only floating replaces the floating keys of an existing feedforward.json, keeps the
    rest, and writes the floating JSON and Markdown on their own."""
    monkeypatch.setattr(feedforward_floating, 'run_floating', lambda args: _part())
    (tmp_path / 'feedforward.json').write_text(json.dumps({'tau_ff_us_median': 12.0,
                                                           'floating': {'old': True}}))
    args = SimpleNamespace(only='floating', out=str(tmp_path), floating_single=20.0,
                           floating_ident='sdp', floating_ident_s=60.0,
                           floating_gains=[1000.0, 10.0], floating_measured=False)
    out = feedforward.run(args)
    assert out['tau_ff_us_median'] == 12.0
    assert set(out['floating']) == {'max_err_rad', 'tau_ff_us_median', 'fell',
                                    'identified_method', 'identified_consistent'}
    alone = json.loads((tmp_path / 'feedforward_floating.json').read_text())
    assert alone['floating'] == out['floating']
    md = (tmp_path / 'feedforward_floating.md').read_text()
    assert '| identified | 1.00e-03 | 2.00e-03 | 2.00e-03 |' in md
    assert '| live | 2.00e-03 | 4.00e-03 | 4.00e-03 |' in md
    assert '| live / urdf | 0.50 | 0.50 | |' in md
    assert 'live: online estimator, reduced set' in md
    assert 'legid bench feedforward --json --only floating' in md
