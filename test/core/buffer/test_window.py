"""Tests of the windows read back into named arrays: stitching overlapping windows."""

import numpy as np
import pytest

from legid_ros.core.pipeline.replay import recording_windows
from legid_ros.core.robot import load_robot
from legid_ros.core.synthetic import NoiseModel, SyntheticConfig, simulate_biped


@pytest.fixture(scope='module')
def windows():
    """The buffer's overlapping windows of a short exact biped run at 1 kHz."""
    rec = simulate_biped(SyntheticConfig(duration_s=2.0, seed=4, noise=NoiseModel.none()))
    return rec, list(recording_windows(rec, load_robot('biped'), length=200, hop=100))


def test_extended_windows_give_each_row_once_in_order(windows):
    """Overlapping windows stitched together hold every row of the run once, with the values
    the windows carry."""
    rec, wins = windows
    stream = wins[0]
    for w in wins[1:]:
        assert stream.same_layout(w)
        stream = stream.extended(w)
    assert np.all(np.diff(stream.t) > 0)
    assert stream.n >= rec.n - 1
    last = wins[-1]
    rows = np.searchsorted(stream.t, last.t)
    np.testing.assert_array_equal(stream.q[rows], last.q)
    np.testing.assert_array_equal(stream.contact[rows], last.contact)
    for foot, w in last.foot_wrench.items():
        np.testing.assert_array_equal(stream.foot_wrench[foot][rows], w)


def test_a_window_with_no_newer_row_leaves_the_stream_as_it_is(windows):
    """Extending by a window older than the stream's end adds nothing."""
    _, wins = windows
    stream = wins[0].extended(wins[1])
    assert stream.extended(wins[0]) is stream


def test_another_layout_is_told_apart(windows):
    """A window with other joints is not the same layout (the folder starts a new stream)."""
    _, wins = windows
    other = wins[0].take(slice(None))
    other.joint_names = list(reversed(other.joint_names))
    assert not wins[0].same_layout(other)
