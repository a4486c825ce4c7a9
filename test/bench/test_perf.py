"""Tests of legid bench perf: its online part gives the issue's keys, finite, with goals."""

import argparse
import math

from legid_ros.bench import perf


def test_online_part_gives_the_keys_and_goals(tmp_path):
    """A short online-only run reports the update figures (finite) and judges them."""
    parser = argparse.ArgumentParser()
    perf.add_arguments(parser)
    args = parser.parse_args(['--online-duration', '20', '--skip', 'identify', 'buffer'])
    res = perf.run(args)
    for key in ('online_update_ms_median', 'online_update_lmi_over_plain',
                'update_ratio_600s_vs_10s'):
        assert math.isfinite(res[key]) and res[key] > 0
        assert key in res['goals']
    assert set(res['online_update_ms_by_set']) == {'reduced', 'grouped'}
    for name, solve_ms in res['online_solve_ms_by_set'].items():  # a part of the update
        assert 0 < solve_ms < 10 * res['online_update_ms_by_set'][name]
    assert res['online_consistent_by_at_end'] in ('qp', 'lmi')
    assert isinstance(res['passed'], bool)
