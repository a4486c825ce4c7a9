"""Tests of the one rule deciding whether a stream is stamped from the joint states' clock."""

import math

from legid_ros.core.conventions.stamps import (STAMPS_APART_S, clock_offset_s, describe_offset,
                                               offset_label)


def test_latency_is_the_same_clock_and_a_second_more_is_another():
    """Offsets differing by receive latency (0.5 s) are one clock; by more than
    STAMPS_APART_S another, with the signed difference."""
    assert clock_offset_s(1.7e9 - 0.5, 1.7e9) is None
    assert clock_offset_s(1.7e9 + 1.5 * STAMPS_APART_S, 1.7e9) == 1.5 * STAMPS_APART_S
    assert clock_offset_s(-5.0, 1.7e9) == -5.0 - 1.7e9


def test_unstamped_streams():
    """A stream stamped 0 is another clock (inf) unless the joint states are not stamped
    either; stamped streams against unstamped joint states cannot be judged (None)."""
    assert math.isinf(clock_offset_s(None, 3.0))
    assert clock_offset_s(None, None) is None
    assert clock_offset_s(3.0, None) is None
    assert describe_offset(math.inf).startswith('are all 0')
    assert describe_offset(-2.0) == "are -2 s from the joint states' clock (another clock)"
    assert (offset_label(math.inf), offset_label(1e3)) == ('stamps 0', '+1e+03 s')
