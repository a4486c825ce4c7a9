"""The buffer's world-frame outputs do not depend on the IMU's heading (only on its tilt)."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from legid_ros.core.buffer.kinematics import StreamKinematics
from legid_ros.core.buffer.sensor_buffer import Buffer, BufferConfig
from legid_ros.core.buffer.window import unpack_window
from legid_ros.core.robot import load_robot
from legid_ros.core.synthetic import NoiseModel, SyntheticConfig, simulate_biped


@pytest.fixture(scope='module')
def run():
    """A short synthetic biped run with the default sensor noise (1 s at 1 kHz)."""
    return load_robot('biped'), simulate_biped(SyntheticConfig(duration_s=1.0, seed=5,
                                                               noise=NoiseModel()))


def yawed(quat: np.ndarray, t: np.ndarray, offset_deg: float, drift_deg_s: float) -> np.ndarray:
    """IMU orientations seen through a heading error ``offset + drift t`` [deg]."""
    yaw = np.radians(offset_deg + drift_deg_s * (t - t[0]))
    return (Rotation.from_euler('z', yaw[:, None]) * Rotation.from_quat(quat)).as_quat()


def rows_of(robot, rec, imu_quat, mode='wrench'):
    """Every row the buffer emits for the recording (first copy of each stamp) and schema."""
    cfg = BufferConfig(joint_names=rec.joint_names, feet=list(robot.feet), force_mode=mode,
                       fsr_count={f: len(robot.feet[f].sensor_frames) for f in robot.feet})
    buf = Buffer(cfg, StreamKinematics(robot, mode))
    wins = []
    for c in range(0, rec.n, 200):  # as a node would: a chunk at a time, flushed
        k = slice(c, c + 200)
        t = 100.0 + rec.t[k]
        buf.add_imus(t, imu_quat[k], rec.imu_gyro[k], rec.imu_acc[k])
        for foot in robot.feet:
            if mode == 'wrench':
                buf.add_wrenches(foot, t, rec.foot_wrench[foot][k])
            else:
                for j in range(rec.fsr[foot].shape[1]):
                    buf.add_fsrs(foot, j, t, rec.fsr[foot][k, j])
        buf.add_joint_states(t, rec.joint_names, rec.q[k], rec.qd[k], rec.tau[k])
        wins += buf.flush()
    wins += buf.flush(force=True, final=True)
    full = np.vstack(wins)
    _, first = np.unique(full[:, 0], return_index=True)
    return full[first], buf.schema


@pytest.mark.parametrize('mode', ['wrench', 'fsr'])
def test_zmp_rows_ignore_imu_yaw_offset_and_drift(run, mode):
    """A 30 deg IMU yaw offset and a 0.5 deg/s drift leave every ZMP and base row unchanged."""
    robot, rec = run
    clean, schema = rows_of(robot, rec, rec.imu_quat, mode)
    bad, _ = rows_of(robot, rec, yawed(rec.imu_quat, rec.t, 30.0, 0.5), mode)
    assert len(clean) == rec.n == len(bad)
    for name in ('zmp_raw.x', 'zmp_raw.y', 'zmp.x', 'zmp.y', 'anchor.x', 'anchor.y',
                 'anchor.yaw', 'base.x', 'base.y', 'base.z', 'fz'):
        col = schema.index(name)
        np.testing.assert_allclose(bad[:, col], clean[:, col], atol=1e-9, err_msg=name)
    quat = [schema.index(f'base.q{a}') for a in 'xyzw']
    dot = np.abs(np.sum(bad[:, quat] * clean[:, quat], axis=1))
    assert dot.min() > 1 - 1e-12


def test_support_frame_zmp_is_the_true_zmp_under_imu_yaw(run):
    """With the IMU heading corrupted, the support-frame ZMP still matches the true one."""
    robot, rec = run
    rows, schema = rows_of(robot, rec, yawed(rec.imu_quat, rec.t, 30.0, 0.5))
    data = unpack_window(rows, schema)
    err = np.linalg.norm(data.zmp_support - rec.zmp_true, axis=1) * 1e3
    assert np.nanmedian(err) < 1.0 and np.nanmax(err) < 5.0  # [mm], F/T noise only


def test_tilt_still_comes_from_the_imu(run):
    """A pitched IMU (not a heading error) does move the base orientation: tilt is used."""
    robot, rec = run
    clean, schema = rows_of(robot, rec, rec.imu_quat)
    pitched = (Rotation.from_euler('y', np.radians(5.0)) * Rotation.from_quat(rec.imu_quat))
    tilted, _ = rows_of(robot, rec, pitched.as_quat())
    quat = [schema.index(f'base.q{a}') for a in 'xyzw']
    angle = (Rotation.from_quat(tilted[:, quat]) * Rotation.from_quat(clean[:, quat]).inv())
    assert np.degrees(angle.magnitude()) == pytest.approx(5.0, abs=0.01)


def test_support_frame_round_trips_to_the_world():
    """support_to_world maps the support-frame ZMP back to the world ZMP for any heading."""
    from legid_ros.core.buffer.window import support_to_world

    rng = np.random.default_rng(0)
    anchor = rng.normal(size=(50, 2))
    heading = rng.uniform(-np.pi, np.pi, 50)
    world = rng.normal(size=(50, 2))
    d = world - anchor
    c, s = np.cos(heading), np.sin(heading)
    local = np.column_stack([c * d[:, 0] + s * d[:, 1], -s * d[:, 0] + c * d[:, 1]])
    np.testing.assert_allclose(support_to_world(local, anchor, heading), world, atol=1e-12)
