"""The buffer converts a setup's sensor conventions as the offline path does (issue 24)."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from convention_readouts import READOUTS, assert_same_windows, make_setups, rows


@pytest.fixture(scope='module')
def setups(solo12, solo12_run, tmp_path_factory):
    """Canonical robot and run, and per readout (robot of that setup, its raw readout)."""
    return make_setups(solo12, solo12_run, tmp_path_factory.mktemp('buffer_conv'))


@pytest.mark.parametrize('name', list(READOUTS))
def test_a_setup_s_streams_give_the_canonical_windows(setups, name):
    """The buffer fed a setup's raw readout (IMU on another topic, mounted rotated with a
    yawed reference; forces in world or foot axes) with that setup's description cuts the
    canonical recording's windows: q, IMU and contacts exactly, F/T-axes wrenches exactly or,
    from world axes, within the IMU tilt error's rotation of each wrench (theta |f|), and the
    measured CoP within what those force errors can move it."""
    canon, run, variants = setups
    robot, raw = variants[name]
    assert_same_windows(rows(raw, robot, conventions=True), rows(run, canon, conventions=False),
                        run, canon, READOUTS[name].force_expressed_in == 'world')


def test_mapped_joint_names_in_a_shuffled_order_give_the_canonical_windows(setups, tmp_path):
    """Joint states under the bag's own names (the description's joint_name_map), listing
    the joints in another order in every message: the canonical windows."""
    from convention_readouts import _robot

    from legid_ros.core.sim.conventions import Readout, message_plan, read_out
    canon, run, _ = setups
    ro = Readout(joint_name_format='robot/{lower}_joint', shuffle_joints=True)
    robot = _robot(ro.description(canon), canon.urdf_path, tmp_path / 'names.yaml')
    raw = read_out(run, canon, ro)
    order = message_plan(ro, raw.n, len(raw.joint_names))['joint_order']
    assert robot.actuated_joint_names == raw.joint_names != run.joint_names
    assert_same_windows(rows(raw, robot, True, order), rows(run, canon, conventions=False),
                        run, canon, False)


def test_without_conversion_the_windows_differ(setups):
    """The check has teeth: the same readout taken as canonical gives other IMU channels."""
    canon, run, variants = setups
    robot, raw = variants['imu_world']
    with pytest.raises(AssertionError):
        assert_same_windows(rows(raw, robot, conventions=False),
                            rows(run, canon, conventions=False), run, canon, True)


def test_converted_imu_interpolates_through_a_half_turn():
    """IMU samples between the joint stamps, converted (mounting, heading) while the internal
    yaw passes 180 deg (w = 0): the interpolated rows stay unit quaternions of the true
    orientation (a w >= 0 sign flip between two samples would average to a near-zero one)."""
    from legid_ros.core.buffer.sensor_buffer import IMU_CHANNELS, Buffer, BufferConfig
    from legid_ros.core.conventions.spec import ImuSpec

    imu = ImuSpec(rpy=(0.1, -0.2, 1.5), heading_rad=0.7)
    t = np.arange(400) * 1e-3  # joint stamps [s]
    t_imu = t + 0.5e-3  # IMU stamps half a step later [s]

    def internal(times):  # true IMU-frame orientation in the force world
        return Rotation.from_euler('zyx', np.column_stack(
            [np.radians(170 + 50 * times), 0.05 * np.sin(9 * times), np.full_like(times, 0.03)]))
    r_fs = Rotation.from_matrix(imu.rotation)
    raw = (Rotation.from_euler('z', -imu.heading_rad) * internal(t_imu) * r_fs).as_quat()
    flips = np.sign(np.sum(raw[1:] * raw[:-1], axis=1))  # a sign-continuous sensor stream
    raw[1:] *= np.cumprod(flips)[:, None]
    buf = Buffer(BufferConfig(joint_names=['a'], feet=[], length=100, hop=100), None, imu=imu)
    buf.add_imus(t_imu, raw, np.zeros((len(t), 3)), np.zeros((len(t), 3)))
    buf.add_joint_states(t, ['a'], np.zeros((len(t), 1)), np.zeros((len(t), 1)),
                         np.zeros((len(t), 1)))
    cols = [buf.schema.index(c) for c in IMU_CHANNELS[:4]]
    rows = np.vstack(buf.flush(force=True, final=True))
    quat = rows[1:, cols]  # the first row holds the first sample
    truth = internal(t[1:len(quat) + 1])
    canon = truth.as_quat(canonical=True)
    assert np.min(np.sum(canon[1:] * canon[:-1], axis=1)) < 0  # w >= 0 flips in this run
    assert np.all(np.abs(np.linalg.norm(quat, axis=1) - 1) < 1e-4)
    angle = (Rotation.from_quat(quat) * truth.inv()).magnitude()
    assert np.max(angle) < 1e-3
