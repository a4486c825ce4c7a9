"""Tests of the window folding: each row once, margins, clock jumps, the node's path."""

import numpy as np
import pytest

from legid_ros.core.identification.online import OnlineEstimator
from legid_ros.core.pipeline.online_folding import (FoldSettings, WindowFolder, fold_stride,
                                                    near_uniform)
from legid_ros.core.pipeline.replay import recording_windows, replay_online
from legid_ros.core.robot import load_robot
from legid_ros.core.synthetic import NoiseModel, SyntheticConfig, simulate_biped


@pytest.fixture(scope='module')
def biped():
    """The built-in biped."""
    return load_robot('biped')


@pytest.fixture(scope='module')
def rec():
    """A short exact synthetic run at 1 kHz."""
    return simulate_biped(SyntheticConfig(duration_s=6.0, seed=2, noise=NoiseModel.none()))


def test_every_row_is_folded_once_across_overlapping_windows(biped, rec):
    """Overlapping windows fold each row exactly once (fold_rate_hz 0: every row), all but
    the first half filter window (one-sided fits) and the last window's margin."""
    wins = list(recording_windows(rec, biped))
    assert sum(w.n for w in wins) > rec.n  # windows overlap
    est, folder, calls = _fold_all(biped, wins, FoldSettings(fold_rate_hz=0.0, margin_rows=50,
                                                             transition_s=0.0))
    stamps = np.concatenate([c[0] for c in calls])
    assert stamps.size == np.unique(stamps).size
    assert est.normal.n == pytest.approx(stamps.size, abs=0.5)
    half = folder.context_s(biped)  # 0.15 s: the gyro's 0.3 s window ('auto' may take it)
    assert stamps.min() >= rec.t[0] + half - 1e-9
    assert stamps.size >= rec.n - 2 * round(half * rec.rate) - 10


@pytest.mark.parametrize('length', [200, 600])
def test_folded_rows_do_not_depend_on_the_window_length(biped, rec, length):
    """The buffer's windows in rows (200 rows: 0.2 s at 1 kHz, shorter than the gyro's 0.3 s
    filter) fold the same rows with the same smoothed states as long windows: the folder's
    filters run over the stitched stream, not over one window."""
    settings = dict(base='contacts', fold_rate_hz=100.0)
    folded = {}
    for n in (length, 1500):
        _, _, calls = _fold_all(biped, recording_windows(rec, biped, length=n, hop=100),
                                FoldSettings(**settings))
        t = np.concatenate([c[0] for c in calls])
        acc = np.concatenate([c[1]['a'] for c in calls])
        folded[n] = (t, acc)
    (t_a, a_a), (t_b, a_b) = folded[length], folded[1500]
    common, ia, ib = np.intersect1d(t_a, t_b, return_indices=True)
    assert common.size >= 0.95 * max(t_a.size, t_b.size)
    assert np.abs(a_a[ia] - a_b[ib]).max() <= 1e-9 * max(np.abs(a_b).max(), 1.0)


def test_a_window_shorter_than_its_margin_and_hop_loses_no_row(biped, rec):
    """With 200-row windows, a 100-row hop and the gyro's 0.15 s (150 rows) held at a window's
    end, the rows between the windows' folds come from the stitched stream: none is lost."""
    _, _, calls = _fold_all(biped, recording_windows(rec, biped, length=200, hop=100),
                            FoldSettings(base='contacts', fold_rate_hz=0.0))
    t = np.concatenate([c[0] for c in calls])
    steps = np.diff(t)
    assert t.size == np.unique(t).size
    assert steps.max() <= 1.5 * np.median(steps)  # no hole between two windows' folds


@pytest.mark.parametrize('step', [1, 5])
def test_rows_are_folded_at_the_same_rate_whatever_the_stream_rate(biped, rec, step):
    """The default folds about 100 rows per second of a 1 kHz and of a 200 Hz stream (a fixed
    every-10th-row folded 20 a second of the 200 Hz one)."""
    sub = rec.slice(0, rec.n, step)
    est = OnlineEstimator(biped, min_samples=10)
    folder = WindowFolder()
    folded = sum(folder.fold(est, w).folded for w in recording_windows(sub, biped))
    span = sub.t[-1] - sub.t[0]
    assert 85.0 < folded / span < 105.0, folded / span


def test_fold_stride_follows_the_stamps():
    """Every 10th row of a 1 kHz stream, every 2nd of 200 Hz, every row of 50 Hz or rate 0."""
    t = np.arange(0.0, 1.0, 0.001)
    assert fold_stride(t, 100.0) == 10 and fold_stride(t[::5], 100.0) == 2
    assert fold_stride(t[::20], 100.0) == 1 and fold_stride(t, 0.0) == 1
    assert fold_stride(t[:1], 100.0) == 1


def test_clock_jump_back_starts_a_new_segment(biped, rec):
    """A window far older than the last folded row is reported and folded again."""
    wins = list(recording_windows(rec, biped))
    est = OnlineEstimator(biped, min_samples=10)
    folder = WindowFolder()
    for w in wins[:20]:  # 2 s: past the contact margin's 0.5 s wait
        folder.fold(est, w)
    out = folder.fold(est, wins[0])
    assert 'clock_jump_back' in [k for k, _ in out.events]
    # the new segment's rows are folded once the contact margin (0.5 s) lies after them
    assert out.folded + sum(folder.fold(est, w).folded for w in wins[1:10]) > 0


def test_gaps_mark_rows_near_them():
    """Rows within half a derivative window of a sampling gap are not usable."""
    t = np.r_[np.arange(0, 0.1, 0.001), np.arange(0.2, 0.3, 0.001)]
    ok = near_uniform(t, 0.02)
    assert not ok[95:105].all() and ok[:80].all() and ok[-80:].all()


def test_replay_updates_once_per_period_and_stays_consistent(biped, rec):
    """replay_online solves once per second of data and once after the last window (the
    result covers every folded row); every solution is consistent."""
    est = OnlineEstimator(biped, param_set='reduced', min_samples=100)
    run = replay_online(recording_windows(rec, biped), est, WindowFolder(), 1.0,
                        keep_history=True)
    assert 3 <= run.updates <= 7
    assert run.consistent_updates == run.updates
    times = [t for t, _ in run.history]
    assert np.all(np.diff(times[:-1]) >= 1.0 - 1e-6)
    assert run.result.n_samples == round(est.normal.n)


def test_absolute_stamps_fold_and_update_as_stamps_from_zero(biped, rec):
    """A 500 Hz stream stamped from 1.7e9 s (ROS time) folds the same rows into the same
    updates as the same stream stamped from 0: boundaries on a row's stamp do not depend on
    the stamps' round-off (they moved a hop of rows to the next update)."""
    import dataclasses
    half_rate = rec.slice(0, rec.n)
    keep = np.arange(0, rec.n, 2)
    for name in ('t', 'q', 'qd', 'tau', 'imu_quat', 'imu_gyro', 'imu_acc'):
        setattr(half_rate, name, getattr(rec, name)[keep])
    half_rate.foot_wrench = {f: w[keep] for f, w in rec.foot_wrench.items()}
    half_rate.fsr = {f: w[keep] for f, w in rec.fsr.items()}
    half_rate.ankle_ft = {f: w[keep] for f, w in rec.ankle_ft.items()}
    wins = list(recording_windows(half_rate, biped))
    counts = []
    for offset in (0.0, 1.7e9):
        est = OnlineEstimator(biped, param_set='reduced', min_samples=100)
        run = replay_online((dataclasses.replace(w, t=w.t + offset) for w in wins), est,
                            WindowFolder(), 1.0, keep_history=True)
        counts.append([r.n_samples for _, r in run.history])
    assert counts[0] == counts[1] and len(counts[0]) >= 3


def test_rows_near_any_contact_change_are_not_folded(biped):
    """transition_s leaves out exactly the folded rows near a change of any foot's contact
    state (the buffer's rule, over the whole run): a row waits until transition_s of the
    stream lies after it, so a change just past a window's end is seen too."""
    from legid_ros.core.contact import near_transitions
    swap = simulate_biped(SyntheticConfig(duration_s=11.0, seed=6, noise=NoiseModel.none(),
                                          protocol='swap'))  # a foot lifts and touches down
    wins = list(recording_windows(swap, biped))
    t = np.concatenate([w.t for w in wins])
    contact = np.concatenate([w.contact for w in wins]) > 0.5
    order = np.argsort(t, kind='stable')
    t, idx = np.unique(t[order], return_index=True)
    near = near_transitions(t, contact[order][idx], 0.2)
    assert 0 < near.sum() < 0.5 * t.size
    _, _, calls = _fold_all(biped, wins, FoldSettings(fold_rate_hz=0.0, transition_s=0.2))
    stamps = np.concatenate([c[0] for c in calls])
    dropped = ~np.isfinite(np.concatenate([c[2] for c in calls]))
    rows = np.searchsorted(t, stamps)
    assert near[rows].sum() > 0
    np.testing.assert_array_equal(dropped, near[rows])


def _folded(robot, rec, key: str, **est_kw) -> np.ndarray:
    """Every row of the ``add_window`` keyword ``key`` the folding passes an estimator, for
    ``rec`` in windows (every row folded, no transition margin)."""
    est = OnlineEstimator(robot, min_samples=10, **est_kw)
    rows, inner = [], est.add_window

    def add_window(t, *a, **kw):
        rows.append(np.array(kw[key]))
        return inner(t, *a, **kw)
    est.add_window = add_window
    folder = WindowFolder(FoldSettings(fold_rate_hz=0.0, transition_s=0.0))
    for w in recording_windows(rec, robot):
        folder.fold(est, w)
    return np.concatenate(rows)


def test_efforts_are_folded_through_the_positions_smoothing(biped, rec):
    """The efforts a torque-row estimator folds are smoothed as the positions are: a 1 N.m,
    60 Hz ripple on them moves the folded efforts by under 0.05 N.m."""
    import dataclasses
    ripple = dataclasses.replace(rec, tau=rec.tau + np.sin(2 * np.pi * 60.0 * rec.t)[:, None])
    clean = _folded(biped, rec, 'tau', method='torque')
    rippled = _folded(biped, ripple, 'tau', method='torque')
    assert clean.shape[0] > 0.5 * rec.n
    assert np.nanmax(np.abs(rippled - clean)) < 0.05  # of a 1 N.m ripple


def test_imu_orientation_is_folded_through_the_positions_smoothing(biped, rec):
    """The IMU orientation folded is smoothed as the joint positions are: a 2 mrad, 60 Hz
    wobble on it moves the folded orientation by under 0.1 mrad (the raw wobble reaches
    1.9 mrad)."""
    import dataclasses
    from scipy.spatial.transform import Rotation
    wobble = Rotation.from_rotvec(np.outer(2e-3 * np.sin(2 * np.pi * 60.0 * rec.t), [1, 0, 0]))
    shaken = dataclasses.replace(rec, imu_quat=(Rotation.from_quat(rec.imu_quat)
                                                * wobble).as_quat())
    clean, moved = _folded(biped, rec, 'imu_quat'), _folded(biped, shaken, 'imu_quat')
    assert clean.shape[0] > 0.5 * rec.n
    angle = (Rotation.from_quat(clean).inv() * Rotation.from_quat(moved)).magnitude()
    assert np.max(angle) < 1e-4


def _fold_all(robot, windows, settings):
    """(estimator, folder, its add_window calls) after folding every window."""
    est = OnlineEstimator(robot, min_samples=10)
    calls = _spy(est)
    folder = WindowFolder(settings)
    for w in windows:
        folder.fold(est, w)
    return est, folder, calls


def _spy(est):
    """Record the (t, base_state, fz, contact) of every add_window call of ``est``."""
    calls, inner = [], est.add_window

    def add_window(t, *a, **kw):
        calls.append((np.array(t), kw.get('base_state'), np.array(kw['fz']), kw.get('contact')))
        return inner(t, *a, **kw)
    est.add_window = add_window
    return calls


def test_accelerometer_gives_the_base_linear_acceleration(biped, rec):
    """base_acc 'imu': the folded base state's linear acceleration is the accelerometer's,
    within 2 % RMS of the run's true base acceleration; 'contacts' leaves it to the estimator."""
    wins = list(recording_windows(rec, biped))
    for kind in ('imu', 'contacts'):
        est = OnlineEstimator(biped, min_samples=10)
        calls = _spy(est)
        folder = WindowFolder(FoldSettings(base_acc=kind))
        for w in wins:
            folder.fold(est, w)
        assert calls and est.normal.n > 0.8 * rec.n / 10
        if kind == 'contacts':
            assert all(c[1] is None for c in calls)  # support base: the estimator's own
            continue
        t = np.concatenate([c[0] for c in calls])
        acc = np.concatenate([c[1]['a'][:, :3] for c in calls])
        true = rec.base_acc_true[np.searchsorted(rec.t, t), :3]
        rms = np.sqrt(np.mean((acc - true) ** 2))
        assert rms < 0.02 * np.sqrt(np.mean(true ** 2))


def test_rows_without_an_accelerometer_are_not_folded(biped, rec):
    """A stretch of non-finite accelerometer samples costs those rows (and their smoothing
    neighbours) only: they are unloaded, the rest is folded, the statistics stay finite."""
    broken = rec.slice(0, rec.n)
    broken.imu_acc = np.array(broken.imu_acc, float)
    broken.imu_acc[2000:2500] = np.nan
    folded = {}
    for name, r in (('clean', rec), ('broken', broken)):
        est = OnlineEstimator(biped, min_samples=10)
        folder = WindowFolder(FoldSettings(base_acc='imu', fold_rate_hz=0.0))
        for w in recording_windows(r, biped):
            folder.fold(est, w)
        folded[name] = est.normal.n
        assert np.isfinite(est.normal.H).all() and np.isfinite(est.normal.h).all()
    # 500 rows, a few of them unusable anyway, plus half a 0.1 s smoothing window either side
    assert 400 <= folded['clean'] - folded['broken'] <= 500 + 2 * 50 + 50


def test_an_unknown_acceleration_source_is_refused():
    """base_acc other than 'contacts' or 'imu': refused when the folder is made."""
    from legid_ros.core.errors import BadInputError
    with pytest.raises(BadInputError, match="base_acc must be one of"):
        WindowFolder(FoldSettings(base_acc='gps'))


def test_rows_with_fewer_feet_in_contact_are_not_folded(biped):
    """min_contacts 2 on a run where a foot lifts: the rows folded are those of min_contacts 0
    less exactly its single-support rows (by the buffer's flags); min_contacts 1: all."""
    swap = simulate_biped(SyntheticConfig(duration_s=11.0, seed=6, noise=NoiseModel.none(),
                                          protocol='swap'))
    wins = list(recording_windows(swap, biped))
    folded, single = {}, 0
    for k in (0, 1, 2):
        est = OnlineEstimator(biped, min_samples=10)
        calls = _spy(est)
        folder = WindowFolder(FoldSettings(fold_rate_hz=0.0, min_contacts=k))
        for w in wins:
            folder.fold(est, w)
        folded[k] = est.normal.n
        if k == 0:
            single = sum(int((np.isfinite(fz) & (sum(c.astype(int) for c in contact.values())
                                                 < 2)).sum()) for _, _, fz, contact in calls)
    assert folded[1] == folded[0]
    assert single > 100 and folded[0] - folded[2] == pytest.approx(single, abs=0.5)


@pytest.mark.parametrize('bad', ['nan', 'reversed', 'repeated'])
def test_a_window_with_bad_stamps_costs_that_window_only(biped, rec, bad):
    """A window whose stamps are not finite and increasing is refused (BadInputError, the
    node's counted bad_window) before it enters the stream: the rows of the windows around it
    fold as without it."""
    from legid_ros.core.errors import BadInputError
    wins = list(recording_windows(rec, biped))
    clean = _fold_all(biped, wins, FoldSettings(base='contacts'))[0].normal.n
    broken = wins[8].take(np.arange(wins[8].n))
    if bad == 'nan':
        broken.t[5] = np.nan
    elif bad == 'reversed':
        broken.t = broken.t[::-1].copy()
    else:
        broken.t[10:20] = broken.t[10]
    est = OnlineEstimator(biped, min_samples=10)
    folder = WindowFolder(FoldSettings(base='contacts'))
    for i, w in enumerate(wins):
        if i == 8:
            with pytest.raises(BadInputError):
                folder.fold(est, broken)
        folder.fold(est, w)
    assert est.normal.n == pytest.approx(clean)
