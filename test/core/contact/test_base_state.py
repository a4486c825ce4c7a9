"""Tests of legid_ros.core.contact.base_state (base state from stance contacts)."""

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.contact.base_state import stance_base_state


def test_base_twist_of_a_quadruped_on_point_feet_matches_mujoco(solo12, solo12_run):
    """From the joint states, the feet in stance and the IMU, the base twist equals MuJoCo's
    free-joint twist (exact joint rates given; mm/s)."""
    rec = solo12_run
    k = np.arange(400, rec.n - 400, 50)
    loaded = np.stack([np.linalg.norm(rec.foot_wrench[f][k, :3], axis=1) > 1.0
                       for f in solo12.feet], axis=1)
    st = stance_base_state(solo12, rec.q[k], rec.qd[k], rec.qdd_true[k], loaded,
                           rec.imu_quat[k], rec.imu_gyro[k])
    err = np.abs(st['v'][:, :6] - rec.base_vel_true[k])
    assert err[:, :3].mean() < 3e-3 and err[:, 3:].mean() < 3e-2


def test_no_stance_foot_gives_nan_and_bad_shapes_are_refused(solo12, solo12_run):
    """A sample without stance feet has no base state; a wrong stance shape is refused."""
    rec = solo12_run
    stance = np.zeros((2, 4), bool)
    st = stance_base_state(solo12, rec.q[:2], rec.qd[:2], rec.qdd_true[:2], stance,
                           rec.imu_quat[:2])
    assert np.isnan(st['q']).all()
    with pytest.raises(BadInputError):
        stance_base_state(solo12, rec.q[:2], rec.qd[:2], rec.qdd_true[:2], stance[:, :3],
                          rec.imu_quat[:2])


def _still_feet_sample(robot, n=3, seed=0):
    """Joint states near the neutral posture with random rates, all feet in stance."""
    import pinocchio as pin
    rng = np.random.default_rng(seed)
    nj = robot.model.nv - 6
    q_j = pin.neutral(robot.model)[7:] + rng.normal(0, 0.1, (n, nj))
    return (q_j, rng.normal(0, 0.5, (n, nj)), rng.normal(0, 2.0, (n, nj)),
            np.ones((n, len(robot.feet)), bool), np.tile([0.0, 0.0, 0.0, 1.0], (n, 1)))


def test_rates_from_imu_take_the_gyro_and_keep_the_stance_feet_still_on_average(solo12):
    """rates_from_imu: the base angular rate is the gyro's (in the base frame) and the linear
    velocity makes the stance contact points' mean velocity zero."""
    import pinocchio as pin
    model = solo12.model
    q_j, qd_j, qdd_j, stance, quat = _still_feet_sample(solo12)
    gyro = np.tile([0.5, -0.2, 0.3], (3, 1))
    gyro_dot = np.tile([1.0, 2.0, -0.5], (3, 1))
    st = stance_base_state(solo12, q_j, qd_j, qdd_j, stance, quat, gyro, gyro_dot,
                           rates_from_imu=True)
    data = model.createData()
    pin.framesForwardKinematics(model, data, pin.neutral(model))
    r_bi = data.oMf[solo12.frame_id(solo12.imu_frame)].rotation
    assert st['v'][:, 3:6] == pytest.approx(gyro @ r_bi.T, abs=1e-12)
    assert st['a'][:, 3:6] == pytest.approx(gyro_dot @ r_bi.T, abs=1e-12)
    for k in range(3):
        pin.forwardKinematics(model, data, st['q'][k], st['v'][k])
        pin.updateFramePlacements(model, data)
        vel = [pin.getFrameVelocity(model, data, solo12.frame_id(f.sole_frame),
                                    pin.LOCAL_WORLD_ALIGNED).linear for f in solo12.feet.values()]
        assert np.abs(np.mean(vel, axis=0)).max() < 1e-9


def test_one_flat_sole_keeps_its_frame_at_the_origin_flat_and_still(talos):
    """'sole' orientation on one flat sole (support_base_state): the sole frame is the world
    origin with identity rotation and zero spatial velocity and acceleration (pinocchio FK)."""
    import pinocchio as pin
    from legid_ros.core.contact.base_state import support_base_state
    model = talos.model
    rng = np.random.default_rng(3)
    nj = model.nv - 6
    q_j = pin.neutral(model)[7:] + rng.normal(0, 0.1, (3, nj))
    qd_j, qdd_j = rng.normal(0, 0.5, (3, nj)), rng.normal(0, 2.0, (3, nj))
    st = support_base_state(talos, q_j, qd_j, qdd_j, 'left')
    data = model.createData()
    fid = talos.frame_id(talos.feet['left'].sole_frame)
    for k in range(3):
        pin.forwardKinematics(model, data, st['q'][k], st['v'][k], st['a'][k])
        m = pin.updateFramePlacement(model, data, fid)
        assert np.allclose(m.translation, 0, atol=1e-12) and np.allclose(m.rotation, np.eye(3))
        assert np.abs(pin.getFrameVelocity(model, data, fid, pin.LOCAL).vector).max() < 1e-9
        assert np.abs(pin.getFrameAcceleration(model, data, fid, pin.LOCAL).vector).max() < 1e-9


def test_imu_linear_acceleration_matches_mujoco_and_is_zero_at_rest(solo12, solo12_run):
    """The accelerometer's specific force plus gravity, with the true orientation and rates,
    gives MuJoCo's base linear acceleration (within the sensor's noise), and zero for a base
    at rest whose accelerometer reads gravity's reaction."""
    from legid_ros.core.contact.base_state import imu_linear_acceleration

    rec = solo12_run
    k = np.arange(400, rec.n - 400, 10)
    q = np.hstack([rec.base_pose_true[k], rec.q[k]])
    v = np.hstack([rec.base_vel_true[k], rec.qd[k]])
    a = np.hstack([rec.base_acc_true[k], rec.qdd_true[k]])
    got = imu_linear_acceleration(solo12, q, v, a, rec.imu_acc[k])
    err = got - rec.base_acc_true[k, :3]
    assert np.abs(err.mean(axis=0)).max() < 0.01 and err.std(axis=0).max() < 0.08
    rest = np.zeros_like(q[:2])
    rest[:, 6] = 1.0  # identity quaternion [x, y, z, w]
    still = imu_linear_acceleration(solo12, rest, np.zeros((2, v.shape[1])),
                                    np.zeros((2, v.shape[1])), np.tile([0.0, 0.0, 9.81], (2, 1)))
    assert np.abs(still).max() < 1e-12


def test_imu_linear_acceleration_moves_the_reading_from_an_offset_imu(talos, talos_run):
    """Talos's IMU sits 0.16 m from the base origin: moved to the base (lever arm with the
    true rates) the accelerometer gives MuJoCo's base linear acceleration within its noise."""
    from legid_ros.core.contact.base_state import imu_linear_acceleration

    rec = talos_run
    k = np.arange(400, rec.n - 400, 10)
    q = np.hstack([rec.base_pose_true[k], rec.q[k]])
    v = np.hstack([rec.base_vel_true[k], rec.qd[k]])
    a = np.hstack([rec.base_acc_true[k], rec.qdd_true[k]])
    err = imu_linear_acceleration(talos, q, v, a, rec.imu_acc[k]) - rec.base_acc_true[k, :3]
    assert np.abs(err.mean(axis=0)).max() < 0.01 and err.std(axis=0).max() < 0.08
