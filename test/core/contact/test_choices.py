"""Tests of legid_ros.core.contact.choices: the base state's source and the contact margin."""

import numpy as np
import pytest

from legid_ros.core.contact.choices import (KEEP_MIN, MARGINS_S, ContactTally, base_source,
                                            choose)
from legid_ros.core.errors import BadInputError
from legid_ros.core.identification.online import OnlineEstimator
from legid_ros.core.identification.prepare import PrepareOptions, prepare
from legid_ros.core.pipeline.online_folding import FoldSettings, WindowFolder
from legid_ros.core.pipeline.replay import recording_windows
from legid_ros.core.robot import load_robot


@pytest.fixture(scope='module')
def biped():
    """The built-in biped (flat feet)."""
    return load_robot('biped')


def _alternating(period_s: float, duration_s: float = 20.0, rate_hz: float = 100.0,
                 double_s: float = 0.0):
    """Two feet taking turns every ``period_s`` [s], both loaded for ``double_s`` [s] at each
    change: (t, loaded)."""
    t = np.arange(0.0, duration_s, 1.0 / rate_hz)
    phase = np.floor(t / period_s).astype(int) % 2
    left = phase == 0
    both = (t % period_s) < double_s
    return t, np.stack([left | both, ~left | both], axis=1)


def test_two_loaded_soles_take_the_base_from_the_contacts(biped, solo12):
    """Flat feet: 'contacts' once several feet carry load in 10 % of the samples, else the sole;
    point feet always 'contacts'; no IMU keeps the sole; a given base wins; a bad one is
    refused."""
    t, single = _alternating(2.0)
    _, with_double = _alternating(2.0, double_s=0.5)
    assert choose(biped, t, single).base == 'support'
    assert choose(biped, t, with_double).multi_contact_share == pytest.approx(0.25, abs=0.01)
    assert choose(biped, t, with_double).base == 'contacts'
    assert choose(biped, t, with_double, imu=False).base == 'support'
    assert choose(biped, t, with_double, base='support').base == 'support'
    assert choose(solo12, t, np.tile(single, 2)).base == 'contacts'
    with pytest.raises(BadInputError, match='base must be one of'):
        base_source(biped, 'ground', 0.0)


def test_margin_is_the_longest_that_keeps_half_of_the_samples(biped):
    """Slow stepping keeps the full 0.5 s; a trot-like 0.2 s alternation gets a shorter margin
    that keeps at least half of the samples (0.5 s would keep none); a given margin is used as
    is; a negative one is refused."""
    t, slow = _alternating(5.0)
    assert choose(biped, t, slow).transition_s == MARGINS_S[0]
    t, fast = _alternating(0.2)
    ch = choose(biped, t, fast)
    assert ch.transition_s < MARGINS_S[0] and ch.kept_share >= KEEP_MIN
    longer = MARGINS_S[MARGINS_S.index(ch.transition_s) - 1]
    assert choose(biped, t, fast, transition_s=longer).kept_share < KEEP_MIN
    assert choose(biped, t, fast, transition_s=0.3).transition_s == 0.3
    with pytest.raises(BadInputError, match='transition_s must be >= 0'):
        choose(biped, t, fast, transition_s=-0.1)


def test_streaming_counts_decide_as_the_batch(biped):
    """Each row counted once (with the states around it known) gives the batch choice."""
    t, loaded = _alternating(0.7, double_s=0.2)
    batch = choose(biped, t, loaded)
    tally = ContactTally()
    for rows in np.array_split(np.arange(t.size), 13):
        tally.add(t, loaded, rows)
    stream = tally.choice(biped)
    assert (stream.base, stream.transition_s) == (batch.base, batch.transition_s)
    assert stream.kept_share == pytest.approx(batch.kept_share)


def test_prepare_and_the_online_folding_choose_alike(talos):
    """On Talos stepping in place in MuJoCo (flat feet, two loaded in most samples), ``prepare``
    and the estimator node's folder both take the base from the contacts, with the same chosen
    margin and nearly the same share kept (the buffer's contact states come from its raw forces,
    ``prepare``'s from its filtered ones)."""
    from legid_ros.core.sim.described import perturbed_truth, simulate_described
    from legid_ros.core.sim.described.locomotion import plan_stepping
    pi_true, _ = perturbed_truth(talos, 0)
    rec = simulate_described(talos, pi_true, rate_hz=200.0, seed=0,
                             plan=plan_stepping(talos, 12.0, seed=0))
    batch = prepare(rec, talos, PrepareOptions(transition_s=None)).choice
    folder = WindowFolder(FoldSettings(transition_s=None))
    est = OnlineEstimator(talos, min_samples=10)
    for w in recording_windows(rec, talos):
        folder.fold(est, w)
    assert batch.base == folder.choice.base == 'contacts'
    assert batch.transition_s == folder.choice.transition_s
    assert folder.choice.kept_share == pytest.approx(batch.kept_share, abs=0.05)
