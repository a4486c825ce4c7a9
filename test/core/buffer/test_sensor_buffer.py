"""Tests of the sensor buffer and its kinematics: alignment, windows, filters, ZMP."""

import numpy as np
import pinocchio as pin
import pytest

from legid_ros.core.buffer.sensor_buffer import Buffer, BufferConfig, ChannelSchema
from legid_ros.core.buffer.kinematics import StreamKinematics
from legid_ros.core.errors import BadInputError
from legid_ros.core.robot import load_robot

JOINTS = ['a', 'b', 'c']


def _cfg(**kw):
    base = dict(joint_names=JOINTS, feet=['left', 'right'], force_mode='wrench', length=20,
                hop=10, max_delay_s=0.005, stale_after_s=0.01)
    base.update(kw)
    return BufferConfig(**base)


def _feed(buf, times, q_fn=lambda t: np.array([t, 2 * t, -t]), aux=True, wrench=None):
    wins = []
    for t in times:
        if aux:
            buf.add_imu(t, [0, 0, 0, 1], [t, 0, 0], [0, 0, 9.81])
            for foot in ('left', 'right'):
                buf.add_wrench(foot, t, wrench if wrench is not None else [0, 0, 100, 0, 0, 0])
        buf.add_joint_state(t, JOINTS, q_fn(t), [], [])
        wins += buf.flush()
    return wins


def test_schema_label_round_trip():
    """The layout label parses back to the same channel list."""
    schema = ChannelSchema.for_config(_cfg())
    back = ChannelSchema.from_label(schema.label())
    assert back.names == schema.names
    assert back.suffixes('q.') == JOINTS
    assert len(back.columns('wrench.left.')) == 6


def test_every_row_in_a_window_and_windows_overlap():
    """Each accepted stamp appears in a window; consecutive windows share length - hop rows."""
    buf = Buffer(_cfg())
    times = np.arange(95) * 1e-3
    wins = _feed(buf, times)
    wins += buf.flush(force=True, final=True)
    seen = np.unique(np.concatenate([w[:, 0] for w in wins]))
    np.testing.assert_allclose(seen, times)
    full = [w for w in wins if len(w) == 20]
    np.testing.assert_allclose(full[1][:10, 0], full[0][10:, 0])
    assert buf.rows_emitted == 95


def test_interpolates_aux_stream_between_stamps():
    """IMU samples at half-period offsets are linearly interpolated onto joint stamps."""
    buf = Buffer(_cfg())
    sch = buf.schema
    wins = []
    for k in range(60):
        t = k * 1e-3
        buf.add_imu(t + 0.5e-3, [0, 0, 0, 1], [3 * (t + 0.5e-3), 0, 0], [0, 0, 9.81])
        for foot in ('left', 'right'):
            buf.add_wrench(foot, t + 0.5e-3, [0, 0, 100, 0, 0, 0])
        buf.add_joint_state(t, JOINTS, [t, t, t])
        wins += buf.flush()
    w = wins[-1]
    rows = w[w[:, 0] > 0.001]
    np.testing.assert_allclose(rows[:, sch.index('imu.wx')], 3 * rows[:, 0], atol=1e-12)
    assert np.all(rows[:, sch.index('ok')] == 1)


def test_out_of_order_and_duplicate_stamps():
    """Swapped stamps are re-sorted and counted, duplicates are dropped and counted."""
    buf = Buffer(_cfg(max_delay_s=0.01))
    times = list(np.arange(40) * 1e-3)
    times[10], times[11] = times[11], times[10]
    times.insert(20, times[19])
    wins = _feed(buf, times)
    wins += buf.flush(force=True, final=True)
    stamps = np.unique(np.concatenate([w[:, 0] for w in wins]))
    assert len(stamps) == 40
    for w in wins:
        assert np.all(np.diff(w[:, 0]) > 0)
    assert buf.events['out_of_order_stamp'] == 1
    assert buf.events['duplicate_stamp'] >= 1


def test_nonfinite_and_missing_fields():
    """NaN positions drop the row; missing velocities are differentiated from positions."""
    buf = Buffer(_cfg(velocity_cutoff_hz=0.0))
    sch = buf.schema
    q_fn = lambda t: np.array([np.nan, 0, 0]) if abs(t - 0.03) < 1e-9 else np.array([t, 2 * t, -t])
    times = np.arange(80) * 1e-3
    wins = _feed(buf, times, q_fn=q_fn)
    stamps = np.concatenate([w[:, 0] for w in wins])
    assert not np.any(np.isclose(stamps, 0.03))
    assert buf.events['nonfinite_position'] == 1
    assert buf.events['missing_velocity'] >= 79
    w = wins[-1]
    qd = w[:, [sch.index(f'qd.{j}') for j in JOINTS]]
    np.testing.assert_allclose(qd, np.tile([1.0, 2.0, -1.0], (len(w), 1)), atol=1e-9)
    assert np.all(np.isnan(w[:, sch.index('tau.a')]))


def test_reordered_and_unknown_joint_names():
    """Joint names in another order plus an unknown one map back to the configured order."""
    buf = Buffer(_cfg())
    sch = buf.schema
    wins = []
    for k in range(30):
        t = k * 1e-3
        buf.add_imu(t, [0, 0, 0, 1], [0, 0, 0], [0, 0, 9.81])
        for foot in ('left', 'right'):
            buf.add_wrench(foot, t, [0, 0, 100, 0, 0, 0])
        buf.add_joint_state(t, ['c', 'zzz', 'a', 'b'], [3.0, 9.0, 1.0, 2.0], [], [])
        wins += buf.flush()
    w = wins[0]
    np.testing.assert_allclose(w[:, [sch.index('q.a'), sch.index('q.b'), sch.index('q.c')]],
                               np.tile([1.0, 2.0, 3.0], (len(w), 1)))
    assert buf.events['unknown_joint_names'] == 1
    assert not buf.add_joint_state(1.0, ['a', 'b'], [0.0, 0.0])
    assert buf.events['missing_joints'] == 1


def test_silent_foot_sensor_keeps_rows_not_ok():
    """A foot stream that stops leaves the rows flowing (after max_delay) with ok = 0."""
    buf = Buffer(_cfg())
    sch = buf.schema
    wins = []
    for k in range(100):
        t = k * 1e-3
        buf.add_imu(t, [0, 0, 0, 1], [0, 0, 0], [0, 0, 9.81])
        buf.add_wrench('left', t, [0, 0, 100, 0, 0, 0])
        if k < 40:
            buf.add_wrench('right', t, [0, 0, 100, 0, 0, 0])
        buf.add_joint_state(t, JOINTS, [t, t, t])
        wins += buf.flush()
    rows = np.vstack(wins)
    ok = rows[:, sch.index('ok')]
    t = rows[:, 0]
    assert np.all(ok[t < 0.039] == 1)
    assert np.all(ok[t > 0.06] == 0)
    assert np.all(np.isnan(rows[t > 0.06, sch.index('wrench.right.fz')]))
    assert 'right' in buf.stale_streams()
    assert buf.events['stale_force_right'] >= 40
    assert t.max() >= 0.08


def test_clock_jump_back_starts_new_segment():
    """A looped clock flushes the old segment (no row lost) and restarts filters."""
    buf = Buffer(_cfg(jump_back_s=0.02))
    wins = _feed(buf, np.arange(55) * 1e-3)
    wins += _feed(buf, np.arange(40) * 1e-3)
    wins += buf.flush(force=True, final=True)
    assert buf.events['clock_jump_back'] == 1
    assert buf.rows_emitted == 95
    first_seg = np.unique(np.concatenate([w[:, 0] for w in wins[:-3] if w[-1, 0] > 0.03]))
    assert np.isclose(first_seg.max(), 0.054)


def _standing(force_mode):
    robot = load_robot('biped')
    kin = StreamKinematics(robot, force_mode)
    q = np.zeros(len(robot.actuated_joint_names))
    return robot, kin, q


def test_fsr_zmp_is_force_weighted_sensor_mean():
    """With straight legs the sole-sensor ZMP is the force-weighted mean of the corners."""
    robot, kin, q = _standing('fsr')
    forces = {'left': np.array([100.0, 100.0, 0.0, 0.0]), 'right': np.zeros(4)}
    zmp, contact, base = kin.row(q, np.array([0, 0, 0, 1.0]), forces)
    np.testing.assert_allclose(zmp, [0.0625, 0.0], atol=1e-9)
    np.testing.assert_allclose(contact, [1.0, 0.0])
    assert kin.support_foot == 'left'
    assert 0.3 < base[2] < 1.2  # trunk above the ground


def test_wrench_zmp_matches_fsr_zmp_for_same_load():
    """Corner point forces give the same ZMP through the ankle F/T wrench and the sole sensors."""
    robot, kin_f, q = _standing('fsr')
    _, kin_w, _ = _standing('wrench')
    rng = np.random.default_rng(0)
    fk = {'left': rng.uniform(10, 80, 4), 'right': rng.uniform(10, 80, 4)}
    zf, _, _ = kin_f.row(q, np.array([0, 0, 0, 1.0]), fk)
    data = robot.new_data()
    qf = pin.neutral(robot.model)
    pin.framesForwardKinematics(robot.model, data, qf)
    wrenches = {}
    for foot in ('left', 'right'):
        ft = data.oMf[robot.frame_id(robot.feet[foot].ft_frame)]
        total = pin.Force.Zero()
        for f, frame in zip(fk[foot], robot.feet[foot].sensor_frames):
            s = data.oMf[robot.frame_id(frame)]
            local = pin.SE3(np.eye(3), ft.actInv(s).translation)
            total += local.act(pin.Force(np.array([0, 0, f]), np.zeros(3)))
        wrenches[foot] = np.concatenate([total.linear, total.angular])
    zw, _, _ = kin_w.row(q, np.array([0, 0, 0, 1.0]), wrenches)
    np.testing.assert_allclose(zw, zf, atol=1e-9)


def test_config_rejects_bad_hop():
    """hop larger than length (rows would be skipped) is refused."""
    with pytest.raises(ValueError):
        _cfg(hop=30)


def test_unpack_window_round_trip():
    """unpack_window returns the columns the buffer wrote, by name."""
    from legid_ros.core.buffer.window import unpack_window, window_to_recording

    buf = Buffer(_cfg(force_mode='wrench'))
    wins = _feed(buf, np.arange(40) * 1e-3, wrench=[1, 2, 100, 3, 4, 5])
    data = unpack_window(wins[0], buf.schema)
    np.testing.assert_allclose(data.q[:, 1], 2 * data.t)
    np.testing.assert_allclose(data.foot_wrench['left'][5], [1, 2, 100, 3, 4, 5])
    assert data.joint_names == JOINTS and data.feet == ['left', 'right']
    rec = window_to_recording(data)
    assert rec.n == data.n and list(rec.foot_wrench) == ['left', 'right']


def test_stream_gap_starts_new_segment():
    """Joint states more than gap_s apart do not share a window and restart the filters."""
    buf = Buffer(_cfg(gap_s=0.05))
    wins = _feed(buf, np.arange(30) * 1e-3)
    wins += _feed(buf, 1.0 + np.arange(30) * 1e-3)
    wins += buf.flush(force=True, final=True)
    assert buf.events['stream_gap'] == 1
    for w in wins:
        assert np.ptp(w[:, 0]) < 0.05
    assert buf.rows_emitted == 60


def test_ankle_ft_channels_are_optional_streams():
    """Ankle F/T readings fill their channels; before the first one rows flow as without."""
    from legid_ros.core.buffer.window import unpack_window
    buf = Buffer(_cfg(ankle_ft_feet=['left']))
    sch = buf.schema
    assert sch.names[-6:] == [f'ankle_ft.left.{a}' for a in ('fx', 'fy', 'fz', 'tx', 'ty',
                                                              'tz')]
    wins = _feed(buf, np.arange(30) * 1e-3)  # no ankle reading yet: nothing held back
    plain = Buffer(_cfg())
    plain_wins = _feed(plain, np.arange(30) * 1e-3)
    assert buf.rows_emitted == plain.rows_emitted == 20 and buf.pending == plain.pending
    assert 'stale_ankle_ft_left' not in buf.events
    assert np.all(np.isnan(wins[-1][:, sch.index('ankle_ft.left.fz')]))
    assert np.all(wins[-1][:, sch.index('ok')] == 1)
    for k in range(30, 100):
        t = k * 1e-3
        if k < 70:
            buf.add_ankle_ft('left', t + 0.5e-3, [1.0, 2.0, -12.0 * (t + 0.5e-3), 0, 0.1, 0])
        buf.add_imu(t, [0, 0, 0, 1], [0, 0, 0], [0, 0, 9.81])
        for foot in ('left', 'right'):
            buf.add_wrench(foot, t, [0, 0, 100, 0, 0, 0])
        buf.add_joint_state(t, JOINTS, [t, t, t])
        wins += buf.flush()
    rows = np.vstack(wins)
    t = rows[:, 0]
    live = (t > 0.0305) & (t < 0.069)
    np.testing.assert_allclose(rows[live, sch.index('ankle_ft.left.fz')], -12.0 * t[live],
                               atol=1e-12)
    assert np.all(np.isnan(rows[t > 0.085, sch.index('ankle_ft.left.fx')]))
    assert np.all(rows[:, sch.index('ok')] == 1)  # never makes a row not ok
    assert buf.events['stale_ankle_ft_left'] >= 10
    assert 'ankle_ft_left' in buf.stale_streams()
    data = unpack_window(wins[-1], sch)
    assert set(data.ankle_ft) == {'left'} and data.ankle_ft['left'].shape == (20, 6)
    assert data.take(slice(0, 5)).ankle_ft['left'].shape == (5, 6)
    assert not buf.add_ankle_ft('right', 0.2, [0.0] * 6)
    assert buf.events['unexpected_ankle_ft'] == 1
    assert unpack_window(plain_wins[0], plain.schema).ankle_ft == {}
    with pytest.raises(BadInputError):
        _cfg(ankle_ft_feet=['middle'])


def test_joint_name_maps_stay_bounded():
    """Thousands of distinct joint-name lists never grow the name-map cache past its bound."""
    from legid_ros.core.buffer.sensor_buffer import MAX_NAME_MAPS, Buffer, BufferConfig

    cfg = BufferConfig(joint_names=['a', 'b'], feet=[], force_mode='wrench')
    buf = Buffer(cfg, None)
    for k in range(1000):
        buf._map(['a', 'b', f'extra_{k}'])
    assert len(buf._name_maps) <= MAX_NAME_MAPS
    assert buf._map(['b', 'a']).tolist() == [1, 0]


class _FailingKinematics:
    """Kinematics stub that fails on any batch holding a row with q[0] == 0.05."""

    def rows(self, q, imu_quat, forces):
        if np.any(np.isclose(q[:, 0], 0.05)):
            raise ValueError('cannot place this row')
        n = len(q)
        self.extra = np.zeros((n, 5))
        return np.zeros((n, 2)), np.ones((n, 2)), np.zeros((n, 7))


def test_row_that_cannot_be_processed_costs_only_itself():
    """A row whose processing fails is dropped and counted; every other row reaches a window."""
    buf = Buffer(_cfg(), _FailingKinematics())
    times = np.arange(95) * 1e-3
    wins = _feed(buf, times)
    wins += buf.flush(force=True, final=True)
    seen = np.unique(np.concatenate([w[:, 0] for w in wins]))
    np.testing.assert_allclose(seen, np.delete(times, 50))
    assert buf.events['processing_error'] == 1


def test_final_window_keeps_the_filter_context():
    """A segment's final window ends at its newest row and keeps the usual overlap, so a few
    leftover rows never arrive alone (too few for a derivative fit); it is not full length."""
    buf = Buffer(_cfg())
    times = np.arange(93) * 1e-3  # 3 rows after the last full window
    wins = _feed(buf, times)
    last = buf.flush(force=True, final=True)
    assert len(last) == 1 and len(last[0]) == 3 + 10
    np.testing.assert_allclose(last[0][-1, 0], times[-1])
    seen = np.unique(np.concatenate([w[:, 0] for w in wins + last]))
    np.testing.assert_allclose(seen, times)
    assert buf.rows_emitted == 93


class _Clock:
    """A wall clock the test moves [s]."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def _burst(buf, clock, forces_late_by_s: float):
    """100 joint states and IMU samples at once (a stall's burst); the foot wrenches of the
    same instants arrive ``forces_late_by_s`` of wall time later."""
    times = np.arange(100) * 1e-3
    for t in times:
        buf.add_imu(t, [0, 0, 0, 1], [0, 0, 0], [0, 0, 9.81])
        buf.add_joint_state(t, JOINTS, [t, t, t])
    wins = buf.flush()
    clock.now += forces_late_by_s
    wins += buf.flush()
    for t in times:
        for foot in ('left', 'right'):
            buf.add_wrench(foot, t, [0, 0, 100, 0, 0, 0])
    return wins + buf.flush() + buf.flush(force=True, final=True)


def test_a_live_buffer_waits_wall_time_for_streams_behind_a_burst():
    """Joint states in a burst, the wrenches of the same instants 3 ms of wall time later: with
    a clock (a live node) every row waits for them and is ok; without one (offline) the rows
    more than max_delay_s of stamps old go out at once, without their wrenches."""
    clock = _Clock()
    live = np.vstack(_burst(Buffer(_cfg(), clock=clock), clock, 0.003))
    offline = np.vstack(_burst(Buffer(_cfg()), _Clock(), 0.003))
    ok = Buffer(_cfg()).schema.index('ok')
    assert np.all(live[:, ok] == 1)
    assert np.mean(offline[:, ok] == 0) > 0.5


def test_a_live_buffer_gives_up_on_a_stream_after_max_delay_of_wall_time():
    """A wrench stream that never comes: after max_delay_s of wall time the rows go out
    (ok = 0), they are not held for ever."""
    clock = _Clock()
    buf = Buffer(_cfg(), clock=clock)
    for k in range(60):
        t = k * 1e-3
        buf.add_imu(t, [0, 0, 0, 1], [0, 0, 0], [0, 0, 9.81])
        buf.add_joint_state(t, JOINTS, [t, t, t])
    assert buf.flush() == [] and buf.pending == 60
    clock.now += 0.001
    assert buf.pending == 60 and buf.flush() == []
    clock.now += 0.01
    wins = buf.flush()
    assert wins and buf.pending < 60
    rows = np.vstack(wins)
    assert np.all(rows[:, buf.schema.index('ok')] == 0)


def test_a_new_segment_waits_its_own_wall_time():
    """After a clock jump the new segment's head row waits max_delay_s of wall time from when
    it began to wait, not from when the old segment's head did."""
    clock = _Clock()
    buf = Buffer(_cfg(jump_back_s=0.02), clock=clock)
    for k in range(60):  # no wrenches: the head row waits from wall time 0
        buf.add_imu(k * 1e-3, [0, 0, 0, 1], [0, 0, 0], [0, 0, 9.81])
        buf.add_joint_state(k * 1e-3, JOINTS, [0, 0, 0])
    assert buf.flush() == [] and buf.pending == 60
    clock.now = 0.004
    for k in range(60):  # the bag loops: a new segment from stamp 0
        buf.add_imu(k * 1e-3, [0, 0, 0, 1], [0, 0, 0], [0, 0, 9.81])
        buf.add_joint_state(k * 1e-3, JOINTS, [0, 0, 0])
    assert buf.events['clock_jump_back'] == 1
    buf.flush()
    clock.now = 0.006  # 6 ms after the old head began to wait, 2 ms after the new one
    assert buf.flush() == [] and buf.pending == 60
    clock.now = 0.0095
    assert buf.flush() and buf.pending < 60


@pytest.mark.parametrize('imu_stamp, expected', [(lambda t: 0.0, float('inf')),
                                                 (lambda t: t + 1e9, 1e9),
                                                 (lambda t: t - 3.0, -3.0)])
def test_a_live_buffer_names_a_stream_on_another_clock(imu_stamp, expected):
    """An IMU stamped 0, 1e9 s ahead or 3 s behind the joint states (arriving with them) is
    named in stamp_offsets with its offset and counted (stamps_apart_imu); the wrenches, on
    the joint states' clock, are not."""
    clock = _Clock()
    buf = Buffer(_cfg(), clock=clock)
    for k in range(300):
        t = 100.0 + k * 1e-3
        clock.now = t - 100.0 + 5e-4
        buf.add_imu(imu_stamp(t), [0, 0, 0, 1], [0, 0, 0], [0, 0, 9.81])
        for foot in ('left', 'right'):
            buf.add_wrench(foot, t, [0, 0, 100, 0, 0, 0])
        buf.add_joint_state(t, JOINTS, [0, 0, 0])
        buf.flush()
    assert set(buf.stamp_offsets) == {'imu'}
    assert buf.stamp_offsets['imu'] == pytest.approx(expected, rel=1e-6)
    assert buf.events['stamps_apart_imu'] >= 250


def test_late_or_silent_streams_are_not_another_clock():
    """Wrenches arriving 0.4 s late (their stamps 0.4 s behind the joint states' on arrival)
    and an IMU that falls silent are not taken for another clock."""
    clock = _Clock()
    buf = Buffer(_cfg(), clock=clock)
    for k in range(1000):
        t = k * 1e-3
        clock.now = t
        if k < 200:
            buf.add_imu(t, [0, 0, 0, 1], [0, 0, 0], [0, 0, 9.81])
        if k >= 400:
            for foot in ('left', 'right'):
                buf.add_wrench(foot, t - 0.4, [0, 0, 100, 0, 0, 0])
        buf.add_joint_state(t, JOINTS, [0, 0, 0])
        buf.flush()
    assert buf.stamp_offsets == {}
    assert not any(k.startswith('stamps_apart') for k in buf.events)
