"""Tests of legid_ros.bag.cdr: the one CDR decoder (bag reader and live raw subscriptions)."""

import numpy as np
from rosbags.typesys import Stores, get_typestore

from legid_ros.bag.cdr import CdrLayout, RawBatch
from legid_ros.bag.codec import TYPES, FixedLayout

TS = get_typestore(Stores.ROS2_HUMBLE)


def _rows(typename, frame, n, names=None, slots=6):
    layout = FixedLayout(TS, typename, frame, names=names)
    values = np.arange(n * slots, dtype=float).reshape(n, slots)
    stamps = 1_700_000_000_000_000_000 + np.arange(n) * 1_000_000
    return [bytes(r) for r in layout.pack(stamps, values)], stamps, values


def test_batch_keeps_every_good_message_around_a_bad_one():
    """A truncated message in a batch costs only itself; the rest decode exactly."""
    raws, stamps, values = _rows(TYPES['wrench'], 'ft', 20)
    raws[7] = raws[7][:30]
    dec = RawBatch('wrench')
    groups = dec.decode(raws)
    got_t = np.concatenate([g[0] for g in groups])
    got_v = np.vstack([g[1] for g in groups])
    keep = np.arange(20) != 7
    assert dec.bad == 1 and len(got_t) == 19
    np.testing.assert_allclose(np.sort(got_t), stamps[keep] * 1e-9)
    np.testing.assert_array_equal(got_v[np.argsort(got_t)], values[keep])


def test_other_frames_are_counted_not_decoded():
    """Messages in a frame outside the accepted set are counted as wrong_frame, per message."""
    good, _, _ = _rows(TYPES['wrench'], 'ft', 5)
    other, _, _ = _rows(TYPES['wrench'], 'elsewhere', 3)
    dec = RawBatch('wrench')
    groups = dec.decode(good + other, frames={'', 'ft'})
    assert sum(len(g[0]) for g in groups) == 5
    assert dec.wrong_frame == 3 and dec.last_wrong_frame == 'elsewhere'


def test_joint_state_layout_reads_what_the_bag_writer_packed():
    """The bag writer's bytes and the live decoder agree on stamps, names and values."""
    names = ['a', 'bb', 'ccc']
    raws, stamps, values = _rows(TYPES['joint_state'], '', 4, names=names, slots=9)
    (t, (nm, p, v, e)), = RawBatch('joint_state').decode(raws)
    assert nm == tuple(names)
    np.testing.assert_array_equal(np.hstack([p, v, e]), values)
    ok, ns, vals = CdrLayout.learn('joint_state', raws[0]).unpack_rows(raws)
    assert ok.all() and (ns == stamps).all()
    np.testing.assert_array_equal(vals, values)
