"""Tests of the sample preparation (measured ZMP, base state from the support foot)."""

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.identification.prepare import PrepareOptions, prepare


def test_measured_zmp_from_sensors_and_wrench_match_truth(biped, run_a, samples_a):
    """Sole-sensor and 6-axis ZMPs agree with the true ZMP to about a millimetre."""
    err_fsr = np.linalg.norm(samples_a.zmp - samples_a.zmp_true, axis=1)
    assert np.mean(err_fsr) < 1e-3
    wr = prepare(run_a, biped, PrepareOptions(zmp_source='wrench'))
    assert np.mean(np.linalg.norm(wr.zmp - wr.zmp_true, axis=1)) < 1e-3
    assert np.all(samples_a.support == 'right') and not samples_a.double_support.any()


def test_base_state_from_support_foot_matches_truth(biped, run_a, samples_a):
    """The kinematic base pose and twist equal the simulator's (sole flat, not slipping)."""
    idx = np.searchsorted(run_a.t, samples_a.t)  # the filter edges are not in the samples
    assert run_a.t[idx] == pytest.approx(samples_a.t)
    assert samples_a.q[:, :3] == pytest.approx(run_a.base_pose_true[idx, :3], abs=2e-3)
    assert samples_a.v[:, :6] == pytest.approx(run_a.base_vel_true[idx], abs=5e-3)


def test_decimation_keeps_every_step_th_sample(biped, run_a):
    """step=5 keeps every 5th sample of the filtered, differentiated signals."""
    full = prepare(run_a, biped, PrepareOptions(use_imu=False))
    dec = prepare(run_a, biped, PrepareOptions(use_imu=False, step=5))
    assert dec.t == pytest.approx(full.t[::5])
    assert dec.zmp == pytest.approx(full.zmp[::5], abs=1e-12)


def test_filter_edges_dropped_and_counted(biped, run_a):
    """The zero-phase filter's end transients (3 / cut-off at each end) are dropped and counted.

    On noise-free data the kept samples' measured ZMP matches the true model's to micrometres,
    while the dropped last 0.2 s carry millimetres of filter transient.
    """
    from legid_ros.core.identification.rows.linear import regressors_for
    from legid_ros.core.synthetic import SyntheticConfig, simulate_biped
    from legid_ros.core.synthetic.config import NoiseModel
    from legid_ros.core.identification.rows.zmp import model_zmp
    rec = simulate_biped(SyntheticConfig(duration_s=8.0, rate_hz=200.0, seed=3,
                                         noise=NoiseModel.none()))
    kept = prepare(rec, biped, PrepareOptions(cutoff_hz=6.0))
    assert kept.dropped == {'filter edges (0.5 s each end)': 200}
    assert kept.t[0] == pytest.approx(rec.t[0] + 0.5) and kept.t[-1] == pytest.approx(
        rec.t[-1] - 0.5)
    every = prepare(rec, biped, PrepareOptions(cutoff_hz=6.0, edge_s=0.0))
    err = {name: np.linalg.norm(model_zmp(regressors_for(s, biped, []).wrench, rec.pi_true)[0]
                                - s.zmp, axis=1) for name, s in (('kept', kept), ('all', every))}
    assert err['kept'].max() < 1e-4
    assert err['all'][-40:].max() > 10 * err['kept'].max()
    with pytest.raises(Exception, match='edge_s'):
        prepare(rec, biped, PrepareOptions(edge_s=-1.0))


def test_efforts_pass_the_positions_filter(biped):
    """The efforts go through the positions' and forces' low-pass (parallel filtering).

    A 40 Hz ripple on the efforts (beyond a 6 Hz cut-off) leaves the prepared efforts; with
    the filter off it stays whole.
    """
    import dataclasses
    from legid_ros.core.synthetic import SyntheticConfig, simulate_biped
    from legid_ros.core.synthetic.config import NoiseModel
    rec = simulate_biped(SyntheticConfig(duration_s=6.0, rate_hz=200.0, seed=5,
                                         noise=NoiseModel.none()))
    ripple = dataclasses.replace(rec, tau=rec.tau + np.sin(2 * np.pi * 40.0 * rec.t)[:, None])
    for cutoff, least, most in ((6.0, 0.0, 1e-3), (None, 0.5, 1.0 + 1e-9)):
        clean = prepare(rec, biped, PrepareOptions(cutoff_hz=cutoff, edge_s=0.5))
        rippled = prepare(ripple, biped, PrepareOptions(cutoff_hz=cutoff, edge_s=0.5))
        diff = np.abs(rippled.tau - clean.tau).max()
        assert least <= diff <= most, (cutoff, diff)


def test_imu_orientation_passes_the_positions_filter(biped):
    """The IMU orientation goes through the positions' low-pass: a 2 mrad, 40 Hz wobble on
    it moves the prepared base orientation by under 0.1 mrad at a 6 Hz cut-off, by over
    1 mrad with the filter off."""
    import dataclasses
    from scipy.spatial.transform import Rotation
    from legid_ros.core.synthetic import SyntheticConfig, simulate_biped
    from legid_ros.core.synthetic.config import NoiseModel
    rec = simulate_biped(SyntheticConfig(duration_s=6.0, rate_hz=200.0, seed=5,
                                         noise=NoiseModel.none()))
    wobble = Rotation.from_rotvec(np.outer(2e-3 * np.sin(2 * np.pi * 40.0 * rec.t), [1, 0, 0]))
    shaken = dataclasses.replace(rec, imu_quat=(Rotation.from_quat(rec.imu_quat)
                                                * wobble).as_quat())
    for cutoff, least, most in ((6.0, 0.0, 1e-4), (None, 1e-3, 2.1e-3)):
        clean = prepare(rec, biped, PrepareOptions(cutoff_hz=cutoff, edge_s=0.5))
        moved = prepare(shaken, biped, PrepareOptions(cutoff_hz=cutoff, edge_s=0.5))
        angle = (Rotation.from_quat(clean.q[:, 3:7]).inv()
                 * Rotation.from_quat(moved.q[:, 3:7])).magnitude()
        assert least <= np.max(angle) <= most, (cutoff, np.max(angle))


def test_single_support_only_and_transitions_drop_the_contact_changes(biped):
    """single_support_only drops every double-support sample and transition_s the samples
    near a touch-down or lift-off, each counted; the single-support samples stay."""
    from legid_ros.core.synthetic import SyntheticConfig, simulate_biped
    from legid_ros.core.synthetic.config import NoiseModel
    rec = simulate_biped(SyntheticConfig(duration_s=12.0, rate_hz=100.0, seed=1,
                                         noise=NoiseModel.none(), protocol='swap'))
    full = prepare(rec, biped, PrepareOptions(transition_s=0.0))
    assert full.double_support.any()
    only = prepare(rec, biped, PrepareOptions(single_support_only=True, transition_s=0.0))
    assert not only.double_support.any()
    assert only.dropped['double support'] == int(full.double_support.sum())
    assert only.n == full.n - int(full.double_support.sum())
    away = prepare(rec, biped, PrepareOptions(single_support_only=True, transition_s=0.3))
    changes = full.t[1:][(full.double_support[1:] != full.double_support[:-1])
                        | (full.support[1:] != full.support[:-1])]
    assert changes.size >= 2
    gap = np.min(np.abs(away.t[:, None] - changes[None, :]), axis=1)
    assert gap.min() >= 0.3 - 0.011
    assert away.dropped['contact change within 0.3 s'] == only.n - away.n


def test_a_lifted_foot_s_sensor_offset_is_no_ground_wrench(solo12, solo12_run):
    """Solo12 whose lifting feet keep 1.5 N (a light robot's sensor offset, under the contact
    rule's lift-off level): every foot the rule has in the air gets a zero wrench, so the
    floating-base rows see the clean run's wrenches (within 0.05 N away from contact
    changes)."""
    from legid_ros.core.sim.conventions import keep_air_force

    opts = PrepareOptions(transition_s=0.5, base='contacts')
    air = solo12_run.slice(0, solo12_run.n)
    keep_air_force(air.foot_wrench, 1.5)
    got, ref = prepare(air, solo12, opts), prepare(solo12_run, solo12, opts)
    _, a, b = np.intersect1d(got.t, ref.t, return_indices=True)
    assert len(a) > 0.9 * len(ref.t)
    for foot, w in got.foot_wrench.items():
        lifted = ~np.any(w[a], axis=1)
        assert lifted.sum() > 50, foot  # every foot lifts in the run
        assert np.abs(w[a] - ref.foot_wrench[foot][b]).max() < 0.05, foot


def test_min_contacts_and_imu_base_acceleration(solo12, solo12_run):
    """``min_contacts`` drops (and counts) the samples with fewer feet in contact; the base's
    linear acceleration from the accelerometer is MuJoCo's within the sensor's filtered noise
    (on this slow standing run the contacts' is as close); an unknown ``base_acc`` is
    refused."""
    opts = dict(base='contacts', cutoff_hz=14.0, transition_s=0.0)
    ref = prepare(solo12_run, solo12, PrepareOptions(**opts))
    four = prepare(solo12_run, solo12, PrepareOptions(min_contacts=4, **opts))
    n_on = np.sum([np.any(w, axis=1) for w in four.foot_wrench.values()], axis=0)
    assert (n_on == 4).all() and 0 < four.n < ref.n
    assert four.dropped['fewer than 4 feet in contact'] == ref.n - four.n
    imu = prepare(solo12_run, solo12, PrepareOptions(base_acc='imu', **opts))
    k = np.searchsorted(solo12_run.t, imu.t - 1e-9)
    truth = solo12_run.base_acc_true[k, :3]
    err_imu = np.sqrt(np.mean((imu.a[:, :3] - truth) ** 2))
    err_contacts = np.sqrt(np.mean((ref.a[:, :3] - truth) ** 2))
    assert err_imu < 0.03 and err_contacts < 0.03  # [m/s^2]
    with pytest.raises(BadInputError):
        prepare(solo12_run, solo12, PrepareOptions(base_acc='gyro', **opts))
