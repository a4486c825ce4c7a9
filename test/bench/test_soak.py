"""The soak bench's memory figures: growth after the settling minute and the RSS trend."""

import numpy as np

from legid_ros.bench.soak import _growth, _trend


def test_trend_reads_a_steady_leak_that_growth_also_sees_and_ignores_the_first_minute():
    """0.6 MB/min after a 12 MB start-up reads 18 MB per half hour; flat after it reads 0."""
    t = np.arange(0.0, 601.0, 10.0)
    leak = [(x, 200.0 + (12.0 if x >= 30 else 0.0) + 0.01 * max(x - 60.0, 0.0)) for x in t]
    flat = [(x, 200.0 + (12.0 if x >= 30 else 0.0)) for x in t]
    assert abs(_trend(leak, 600.0) - 18.0) < 1e-6
    assert abs(_growth(leak, 600.0) - 5.4) < 1e-6
    assert abs(_trend(flat, 600.0)) < 1e-9 and _growth(flat, 600.0) == 0.0


def test_trend_ignores_one_off_steps_and_a_creep_beside_a_step_and_reads_steps_that_recur():
    """Two one-off 5 MB steps, or an early creep and a later step, read about 0; a step in every
    third reads growth; too few samples read 0."""
    t = np.arange(0.0, 601.0, 10.0)
    step = [(x, 200.0 + (5.0 if x >= 200 else 0.0)) for x in t]
    twice = [(x, 200.0 + (5.0 if x >= 200 else 0.0) + (5.0 if x >= 450 else 0.0)) for x in t]
    creep_step = [(x, 200.0 + 0.005 * min(max(x - 60.0, 0.0), 200.0) + (4.5 if x >= 420 else 0.0))
                  for x in t]
    thrice = [(x, 200.0 + 5.0 * sum(x >= s for s in (150, 330, 510))) for x in t]
    assert abs(_trend(step, 600.0)) < 1e-9
    assert _growth(step, 600.0) == 5.0
    assert abs(_trend(twice, 600.0)) < 1e-9
    assert abs(_trend(creep_step, 600.0)) < 1e-9
    assert _trend(thrice, 600.0) > 5.0
    assert _trend([(70.0, 1.0), (80.0, 2.0), (90.0, 3.0)], 600.0) == 0.0
