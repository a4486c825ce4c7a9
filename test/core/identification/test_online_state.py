"""An online estimator's saved state: plain arrays that restore the same statistics, refused
with what it is for when it belongs to another method or parameter set."""

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.identification.online import OnlineEstimator
from legid_ros.core.identification.online.state import restore, state_of


def test_state_is_plain_arrays_that_restore_the_statistics(biped):
    """Every entry is a numpy array; a fresh estimator restored from it has the same
    statistics, solution and counters."""
    est = OnlineEstimator(biped, half_life_s=2.0)
    est.normal.H = est.normal.H + np.eye(est.normal.H.shape[0])
    est.normal.n, est.dropped, est.x = 12.5, 3, np.asarray(est.x, float) + 0.01
    state = state_of(est)
    assert all(isinstance(v, np.ndarray) for v in state.values())
    other = OnlineEstimator(biped, half_life_s=2.0)
    restore(other, state)
    assert np.array_equal(other.normal.H, est.normal.H) and other.normal.n == 12.5
    assert other.dropped == 3 and np.allclose(other.x, est.x)


def test_a_state_of_another_set_is_refused_naming_both(biped):
    """A standard-set state loaded into a grouped-set estimator: BadInputError naming the
    state's set and the estimator's, nothing restored."""
    std = OnlineEstimator(biped, half_life_s=2.0)
    grouped = OnlineEstimator(biped, half_life_s=2.0, param_set='grouped')
    before = grouped.normal.H.copy()
    with pytest.raises(BadInputError, match="set 'standard'.*set 'grouped'"):
        restore(grouped, state_of(std))
    assert np.array_equal(grouped.normal.H, before)
