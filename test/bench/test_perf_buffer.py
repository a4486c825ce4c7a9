"""Tests of legid_ros.bench.perf_buffer (a short real sim -> buffer run)."""

import math

from legid_ros.bench.perf_buffer import measure_buffer_core_pct


def test_short_run_reports_finite_buffer_cpu_and_context():
    """A 3 s run gives the buffer's CPU share, the rate, the 6 topics and the drops, finite."""
    out = measure_buffer_core_pct(3.0)
    for key in ('buffer_core_pct', 'rate_hz', 'seconds', 'topics', 'samples_dropped'):
        assert key in out, key
    assert math.isfinite(out['buffer_core_pct']) and 0.0 < out['buffer_core_pct'] < 200.0
    assert math.isfinite(out['rate_hz']) and out['rate_hz'] > 100.0
    assert len(out['topics']) == 6 and out['seconds'] == 3.0
    assert out['samples_dropped'] >= 0
