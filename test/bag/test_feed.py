"""Tests of legid_ros.bag.feed: a bag's messages through the buffer as the node gets them."""

import numpy as np
import pytest

from legid_ros.bag.feed import bag_windows
from legid_ros.bag.recording_io import read_bag, write_bag
from legid_ros.core.pipeline.replay import recording_windows
from legid_ros.core.robot import load_robot
from legid_ros.core.synthetic import NoiseModel, SyntheticConfig, simulate_biped


@pytest.fixture(scope='module')
def robot():
    """The synthetic biped."""
    return load_robot('biped')


@pytest.fixture(scope='module')
def rec(robot):
    """2 s of the synthetic biped at 500 Hz with sensor noise."""
    return simulate_biped(SyntheticConfig(duration_s=2.0, rate_hz=500.0, seed=4,
                                          noise=NoiseModel()), robot)


def _rows(wins):
    """Unique rows of windows by stamp: (t, q, total normal force, zmp)."""
    t = np.concatenate([w.t for w in wins])
    _, first = np.unique(t, return_index=True)
    return (t[first], np.concatenate([w.q for w in wins])[first],
            np.concatenate([w.fz for w in wins])[first],
            np.concatenate([w.zmp_world for w in wins])[first])


@pytest.mark.parametrize('mode', ['wrench', 'fsr'])
def test_a_bag_fed_message_by_message_gives_the_read_recording_s_windows(tmp_path, rec, robot,
                                                                          mode):
    """Joint states in another order in every message, every message logged up to 5 ms late
    (out of order across topics), the buffer waiting 6 ms for late samples (reorder_s): the
    windows are those of the bag read as a recording (to float seconds' precision at the
    bag's epoch); waiting the default 2 ms, late force samples are missed."""
    rng = np.random.default_rng(1)
    bag = write_bag(rec, tmp_path / 'bag', robot=robot,
                    joint_order=np.argsort(rng.random(rec.q.shape), axis=1),
                    log_delay_s=rng.uniform(0.0, 0.005, rec.n))
    got = _rows(list(bag_windows(bag, robot, force_mode=mode, reorder_s=0.006)))
    ref = _rows(list(recording_windows(read_bag(bag, robot), robot, force_mode=mode)))
    assert len(got[0]) == len(ref[0]) > 0.9 * rec.n
    np.testing.assert_allclose(got[0] - got[0][0], ref[0] - ref[0][0], atol=1e-6)  # [s]
    for a, b in zip(got[1:], ref[1:]):  # stamps of 1.7e9 s: float seconds to 0.2 us
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6, equal_nan=True)
    short = _rows(list(bag_windows(bag, robot, force_mode=mode)))
    np.testing.assert_array_equal(short[1], ref[1])
    assert np.nanmax(np.abs(short[3] - ref[3])) > 1e-5  # [m] ZMP of missed force samples
