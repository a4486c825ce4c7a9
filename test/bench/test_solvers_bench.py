"""Tests of ``legid bench solvers`` (legid_ros.bench.solvers), on a few problems."""

import argparse
import json

from legid_ros.bench import solvers


def test_bench_solvers_reports_the_issue_keys(tmp_path):
    """A short run: the JSON keys of the figures, zero false converged, the .md report."""
    parser = argparse.ArgumentParser()
    parser.add_argument('--out')
    solvers.add_arguments(parser)
    args = parser.parse_args(['--problems', '9', '--no-biped', '--out', str(tmp_path)])
    out = solvers.run(args)
    json.dumps(out)
    assert out['newton_false_converged'] == 0
    assert out['newton_max_rel_cost_gap'] <= 1e-6
    assert out['random_problems'] == 9 and out['passed'] is False  # fewer than 500 problems
    assert sum(f['runs'] for f in out['random']['new'].values()) == 9
    assert out['old_false_converged'] > 0
    assert '`newton_false_converged`: **0**' in (tmp_path / 'solvers.md').read_text()
