"""Tests of legid_ros.core.sim.conventions: a run read out as other setups record it."""

import numpy as np
import pinocchio as pin
import pytest
import yaml
from scipy.spatial.transform import Rotation

from legid_ros.core.conventions.convert import imu_to_internal
from legid_ros.core.conventions.spec import parse_imu
from legid_ros.core.robot import load_robot
from legid_ros.core.signals import butter_zero_phase, smooth_quaternions
from legid_ros.core.sim.conventions import (Readout, message_plan, move_wrench, read_out,
                                            readout_window, sole_sensor_forces)


@pytest.fixture(scope='module')
def run(solo12_run):
    """The first 3000 samples (15 s) of the Solo12 run."""
    return solo12_run.slice(0, 3000)


def test_a_lower_rate_keeps_every_kth_sample(run, solo12):
    """rate_hz at half the run's rate keeps every other sample of the positions and says its
    rate; the measured signals are their averages over the readout period."""
    out = read_out(run, solo12, Readout(rate_hz=run.rate / 2))
    np.testing.assert_array_equal(out.t, run.t[::2])
    np.testing.assert_array_equal(out.q, run.q[::2])
    k = 10  # an inner sample: weights 1/4, 1/2, 1/4 around it
    np.testing.assert_allclose(out.imu_gyro[k], run.imu_gyro[2 * k - 1:2 * k + 2].T
                               @ [0.25, 0.5, 0.25], atol=1e-12)
    assert out.meta['rate_hz'] == pytest.approx(run.rate / 2)
    with pytest.raises(ValueError, match='does not divide'):
        read_out(run, solo12, Readout(rate_hz=run.rate / 2.5))


@pytest.mark.parametrize('step', [1, 2, 3, 5, 8])
def test_the_readout_window_is_a_centred_average_of_one_period(step):
    """The sensor's averaging window sums to 1, is symmetric (no delay) and spans one
    readout period (its second moment is a width-``step`` box's, up to the half ends)."""
    w = readout_window(step)
    assert w.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(w, w[::-1])
    lags = np.arange(w.size) - (w.size - 1) / 2
    assert abs(w @ lags) < 1e-12
    assert w.size == step + 1 - step % 2


def test_two_rates_of_one_run_carry_the_same_slow_noise(solo12_run, solo12):
    """The same 1 kHz run read at 200 and 500 Hz: below 6 Hz their force noise agrees to a small
    part of what two plain decimations (independent noise samples) give."""
    rng = np.random.default_rng(7)
    noisy = solo12_run.slice(0, 6000)
    noisy.t = np.arange(noisy.n) * 1e-3  # a 1 kHz run (the noise is all that is read)
    foot = next(iter(noisy.foot_wrench))
    noisy.foot_wrench = {foot: rng.normal(size=(noisy.n, 6))}  # white, unit std
    t = noisy.t[::10]  # times both readouts sample

    def slow(rate, average):
        rec = read_out(noisy, solo12, Readout(rate_hz=rate)) if average else \
            noisy.slice(0, noisy.n, int(round(noisy.rate / rate)))
        x = butter_zero_phase(rec.foot_wrench[foot][:, 2], 6.0, rate)
        return np.interp(t, rec.t, x)[20:-20]
    plain = np.std(slow(200.0, False) - slow(500.0, False))
    averaged = np.std(slow(200.0, True) - slow(500.0, True))
    assert averaged < 0.1 * plain


def test_two_rates_of_one_run_carry_the_same_slow_orientation_noise(solo12_run, solo12):
    """The IMU orientation is read out as the other measured signals are: with white 1 mrad
    jitter on a 1 kHz run, its 200 and 500 Hz readouts agree below 6 Hz to a small part of
    what two plain decimations give."""
    rng = np.random.default_rng(8)
    noisy = solo12_run.slice(0, 6000)
    noisy.t = np.arange(noisy.n) * 1e-3
    noisy.imu_quat = Rotation.from_rotvec(1e-3 * rng.normal(size=(noisy.n, 3))).as_quat()
    t = noisy.t[::10]

    def slow(rate, average):
        rec = read_out(noisy, solo12, Readout(rate_hz=rate)) if average else \
            noisy.slice(0, noisy.n, int(round(noisy.rate / rate)))
        q = smooth_quaternions(rec.imu_quat, lambda x: butter_zero_phase(x, 6.0, rate))
        return np.column_stack([np.interp(t, rec.t, c) for c in q.T])[20:-20]

    def spread(a, b):
        return np.std((Rotation.from_quat(a).inv() * Rotation.from_quat(b)).magnitude())
    plain = spread(slow(200.0, False), slow(500.0, False))
    averaged = spread(slow(200.0, True), slow(500.0, True))
    assert averaged < 0.2 * plain


def test_a_drifting_heading_converts_back_with_the_description_s_drift(run, solo12):
    """An IMU mounted 90 deg about z with a heading offset and drift: the description's
    imu keys convert its readings back to the run's (orientation, rate, specific force)."""
    ro = Readout(imu_rpy=(0.0, 0.0, np.pi / 2), imu_heading_rad=0.4, imu_drift_rad_s=0.01)
    out = read_out(run, solo12, ro)
    spec = parse_imu(ro.description(solo12))
    assert spec.heading_drift_rad_s == 0.01
    yaw = (Rotation.from_quat(out.imu_quat[-1]) * Rotation.from_euler('z', np.pi / 2).inv()
           * Rotation.from_quat(run.imu_quat[-1]).inv()).as_rotvec()  # R_z(-heading)
    np.testing.assert_allclose(yaw, [0.0, 0.0, -(0.4 + 0.01 * (run.t[-1] - run.t[0]))],
                               atol=1e-9)
    quat, gyro, acc = imu_to_internal(out.imu_quat, out.imu_gyro, out.imu_acc, spec,
                                      t_s=out.t - out.t[0])
    assert np.abs(np.abs(np.sum(quat * run.imu_quat, axis=1)) - 1).max() < 1e-9
    np.testing.assert_allclose(gyro, run.imu_gyro, atol=1e-12)
    np.testing.assert_allclose(acc, run.imu_acc, atol=1e-12)


def test_a_wrench_moved_to_an_offset_sensor_is_pinocchio_s():
    """move_wrench gives the wrench about and in the axes of a frame placed in the first
    (pinocchio's Force action)."""
    rng = np.random.default_rng(2)
    w = rng.normal(size=(5, 6))
    m = pin.SE3(pin.rpy.rpyToMatrix(0.3, -0.2, 1.1), np.array([0.02, -0.01, -0.05]))
    expect = np.array([m.actInv(pin.Force(row[:3], row[3:])).vector for row in w])
    np.testing.assert_allclose(move_wrench(w, m), expect, atol=1e-12)


def test_sole_sensors_carry_the_foot_s_wrench(talos):
    """Three sole sensors' forces sum to the normal force and put their CoP at the wrench's
    CoP in the sole frame (4 cm below the ankle frame here)."""
    xy = np.array([[0.09, 0.05], [0.09, -0.05], [-0.08, 0.0]])  # [m]
    w = np.array([[5.0, -3.0, 400.0, 6.0, -8.0, 0.5]])  # at the ankle (wrench frame)
    f = sole_sensor_forces(talos, 'left', w, xy)
    data = talos.model.createData()
    pin.framesForwardKinematics(talos.model, data, talos.neutral())
    to_sole = data.oMf[talos.frame_id('leg_left_6_link')].actInv(
        data.oMf[talos.frame_id('left_sole')])
    ws = move_wrench(w, to_sole)[0]
    assert f.sum() == pytest.approx(ws[2])
    cop = f[0] @ xy / f.sum()
    np.testing.assert_allclose(cop, [-ws[4] / ws[2], ws[3] / ws[2]], atol=1e-12)


def test_normal_force_only_is_the_world_vertical_force(run, solo12):
    """normal_only: world axes, zero tangential force and moments, the true vertical force."""
    ro = Readout(normal_only=True)
    out = read_out(run, solo12, ro)
    world = read_out(run, solo12, Readout(force_expressed_in='world'))
    for foot, w in out.foot_wrench.items():
        assert not np.any(w[:, [0, 1, 3, 4, 5]])
        np.testing.assert_allclose(w[:, 2], world.foot_wrench[foot][:, 2], atol=1e-12)
    assert all(f['expressed_in'] == 'world' for f in ro.description(solo12)['feet'].values())


def test_a_foot_in_the_air_keeps_its_force(solo12_run, solo12):
    """air_force_n: every foot's normal reading is at least the force (each lifts once in
    the run), stance unchanged."""
    run = solo12_run
    out = read_out(run, solo12, Readout(air_force_n=1.5))
    for foot, w in out.foot_wrench.items():
        assert w[:, 2].min() >= 1.5
        big = run.foot_wrench[foot][:, 2] > 1.5
        np.testing.assert_array_equal(w[big], run.foot_wrench[foot][big])
        assert (w[:, 2] != run.foot_wrench[foot][:, 2]).any()


def test_mapped_joint_names_load_as_the_bag_s(run, solo12, tmp_path):
    """joint_name_format renames the recording's joints; the setup's description maps them
    (joint_name_map) so the robot takes the bag's names."""
    ro = Readout(joint_name_format='solo/{lower}_joint')
    out = read_out(run, solo12, ro)
    assert out.joint_names[0] == f'solo/{run.joint_names[0].lower()}_joint'
    desc = ro.description(solo12)
    desc['urdf'] = str(solo12.urdf_path)
    (tmp_path / 'd.yaml').write_text(yaml.safe_dump(desc))
    assert load_robot(str(tmp_path / 'd.yaml')).actuated_joint_names == out.joint_names


def test_the_message_plan_shuffles_every_message_and_delays_within_the_jitter():
    """message_plan: one permutation per message (not all alike), delays in [0, jitter]."""
    plan = message_plan(Readout(shuffle_joints=True, stamp_jitter_s=0.005), 200, 12)
    order = plan['joint_order']
    assert order.shape == (200, 12)
    assert all(sorted(row) == list(range(12)) for row in order)
    assert len({tuple(row) for row in order}) > 150
    assert 0.0 <= plan['log_delay_s'].min() and plan['log_delay_s'].max() <= 0.005
    assert message_plan(Readout(), 10, 12) == {'joint_order': None, 'log_delay_s': None}
