"""Tests of legid_ros.core.contact.rule: hysteresis, streaming = batch, transition flags."""

import numpy as np
import pytest

from legid_ros.core.buffer.kinematics import StreamKinematics
from legid_ros.core.contact import (ContactRule, ContactThresholds, contact_states,
                                    measured_cop, near_transitions)
from legid_ros.core.contact.cop import normal_forces, up_axes
from legid_ros.core.contact.rule import node_thresholds
from legid_ros.core.errors import BadInputError

WEIGHT = 24.5  # [N], a 2.5 kg quadruped


def test_force_chattering_around_one_threshold_does_not_toggle():
    """A force chattering +-0.2 N around the touch-down (or lift-off) threshold changes the state
    once, when it first crosses it, and never back while it stays above the other threshold."""
    th = ContactThresholds(WEIGHT, 0.10, 0.07)  # on 2.45 N, off 1.715 N
    rng = np.random.default_rng(0)
    t = np.arange(2000)
    rising = np.where(t < 100, 0.0, th.on_n + 0.2 * np.sin(0.7 * t) + 0.05 * rng.standard_normal(
        t.size))
    st = contact_states(rising[:, None], th)[:, 0]
    first = int(np.flatnonzero(rising > th.on_n)[0])
    assert not st[:first].any() and st[first:].all()
    falling = np.where(t < 100, 10.0, th.off_n + 0.2 * np.sin(0.7 * t))
    st = contact_states(falling[:, None], th)[:, 0]
    first = int(np.flatnonzero(falling < th.off_n)[0])
    assert st[:first].all() and not st[first:].any()
    # one threshold (no hysteresis) toggles on the same series: what the band prevents
    single = contact_states(rising[:, None], ContactThresholds(WEIGHT, 0.10, 0.10))[:, 0]
    assert np.count_nonzero(np.diff(single.astype(int))) > 10


def test_unknown_forces_keep_the_state_and_start_off():
    """NaN forces keep the state; before any force every foot is off the ground."""
    th = ContactThresholds(WEIGHT)
    fz = np.array([[np.nan, np.nan], [10.0, 0.0], [np.nan, np.nan], [0.0, 10.0]])
    np.testing.assert_array_equal(contact_states(fz, th),
                                  [[0, 0], [1, 0], [1, 0], [0, 1]])


def test_bad_thresholds_are_refused():
    """A non-positive weight or lift-off above touch-down raise BadInputError."""
    for args in ((0.0,), (WEIGHT, 0.05, 0.08), (WEIGHT, 0.1, 0.0)):
        with pytest.raises(BadInputError):
            ContactThresholds(*args)


def test_transitions_of_any_foot_are_flagged():
    """Samples within transition_s of a change of ANY foot are flagged, not only of the most
    loaded one: here the least loaded foot lifts while the most loaded stays down."""
    t = np.arange(0, 10, 0.01)
    contact = np.ones((t.size, 4), bool)
    contact[(t >= 4.0) & (t < 6.0), 2] = False  # a light hind foot lifts at 4 s, back at 6 s
    near = near_transitions(t, contact, 0.3)
    expect = (np.abs(t - 3.995) < 0.3) | (np.abs(t - 5.995) < 0.3)
    np.testing.assert_array_equal(near, expect)
    assert not near_transitions(t, contact, 0.0).any()


def test_absolute_threshold_above_a_foot_share_is_warned(solo12):
    """The buffer node's former 20 N default on a 2.5 kg quadruped is warned about (80 % of a
    foot's share); the weight fractions and a small absolute force are not."""
    th, warning = node_thresholds(solo12, contact_force_n=20.0)
    assert warning and 'contact_force_n' in warning and th.on_n == pytest.approx(20.0)
    th, warning = node_thresholds(solo12)
    assert warning is None and th.on_n == pytest.approx(0.1 * solo12.total_mass * 9.81)
    assert node_thresholds(solo12, contact_force_n=1.5)[1] is None


def lifting_forces(rec):
    """Solo12's MuJoCo foot wrenches, each sensor keeping 1.5 N once its foot is in the air
    (issue 24's light-robot case)."""
    return {f: np.column_stack([w[:, :2], np.maximum(w[:, 2], 1.5), w[:, 3:]])
            for f, w in rec.foot_wrench.items()}


def test_streaming_chunks_give_the_batch_states_and_cop(solo12, solo12_run):
    """The buffer's kinematics fed in uneven chunks give the same contact states as the batch
    rule on the whole series, and the same CoP as measured_cop (prepare's) on those states at
    the buffer's base poses."""
    rec = solo12_run
    n = 3000
    force = {f: w[:n] for f, w in lifting_forces(rec).items()}
    q, imu = rec.q[:n], rec.imu_quat[:n]
    kin = StreamKinematics(solo12, 'wrench')
    parts = []
    edges = [0, 1, 7, 250, 251, 1100, 2999, n]
    for a, b in zip(edges[:-1], edges[1:]):
        parts.append(kin.rows(q[a:b], imu[a:b], {f: w[a:b] for f, w in force.items()}))
    zmp = np.vstack([p[0] for p in parts])
    contact = np.vstack([p[1] for p in parts]) > 0.5
    base = np.vstack([p[2] for p in parts])
    whole = StreamKinematics(solo12, 'wrench')
    zmp_1, contact_1, _ = whole.rows(q, imu, force)
    np.testing.assert_array_equal(contact, contact_1 > 0.5)
    np.testing.assert_allclose(zmp, zmp_1, atol=1e-12, equal_nan=True)
    # prepare's batch rule on its world-vertical forces (IMU tilt and joint kinematics)
    fz = normal_forces(solo12, 'wrench', force, up_axes(solo12, q, imu))
    batch = contact_states(fz, ContactThresholds.for_robot(solo12))
    np.testing.assert_array_equal(contact, batch)
    assert 0 < np.count_nonzero(np.diff(batch.astype(int), axis=0)) < 40
    # prepare's CoP on those states at the buffer's base poses
    full = np.hstack([base, q])
    ok = np.isfinite(full).all(axis=1)
    cop, _ = measured_cop(solo12, 'wrench', force, batch, q=np.where(ok[:, None], full, np.nan))
    np.testing.assert_allclose(zmp[ok], cop[ok], atol=1e-9, equal_nan=True)
    assert np.isfinite(zmp[ok]).mean() > 0.99



def test_contact_rule_object_equals_the_function_chunk_by_chunk():
    """ContactRule.update over chunks equals contact_states on the concatenation; reset forgets."""
    rng = np.random.default_rng(1)
    fz = np.cumsum(rng.normal(0, 0.5, (500, 3)), axis=0) + 2.0
    th = ContactThresholds(WEIGHT)
    rule = ContactRule(th, 3)
    got = np.vstack([rule.update(fz[a:b]) for a, b in ((0, 3), (3, 3), (3, 200), (200, 500))])
    np.testing.assert_array_equal(got, contact_states(fz, th))
    rule.reset()
    assert not rule.state.any()
