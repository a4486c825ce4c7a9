"""Tests of legid_ros.bench.perf_identify (identify against reading its bag)."""

import math

from legid_ros.bench.perf_identify import METHODS, measure_identify


def test_measure_identify_on_a_tiny_bag_gives_every_figure(tmp_path):
    """On a 4 s bag every figure is there, finite and positive, per timed method."""
    out = measure_identify(tmp_path, duration_s=4.0, rate_hz=200.0, rounds=1)
    assert set(out['identify_over_read_ratio']) == set(METHODS) == set(out['identify_s'])
    values = [out['identify_peak_rss_over_bag'], out['read_s'], out['bag_mb'], out['read_cpu_s'],
              out['read_peak_rss_mb'], *out['identify_over_read_ratio'].values(),
              *out['identify_s'].values(), *out['identify_peak_rss_mb'].values(),
              *out['identify_cpu_s'].values()]
    assert all(math.isfinite(v) and v > 0 for v in values)
    assert (tmp_path / 'out_zmp_qp' / 'parameters.yaml').is_file()
