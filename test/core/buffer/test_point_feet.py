"""Point feet on flat ground: the buffer's ZMP, contact flags and support foot from the forces."""

import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial.transform import Rotation

from legid_ros.core.buffer.kinematics import StreamKinematics
from legid_ros.core.robot import load_robot

from described_bipeds import point_feet, write

FEET = ('left', 'right')


@pytest.fixture(scope='module')
def robots(tmp_path_factory):
    """The biped with point feet: 3-axis force per foot (wrench) and normal force only (fsr)."""
    folder = tmp_path_factory.mktemp('point_feet')
    return (load_robot(write(point_feet(), folder, 'force.yaml')),
            load_robot(write(point_feet(normal_only=True), folder, 'normal.yaml')))


def _bent_rows(robot, n, rng):
    """n random leg configurations (rad) and IMU quaternions with a few degrees of tilt."""
    q = rng.uniform(-0.3, 0.3, (n, robot.model.nv - 6))
    imu = Rotation.from_euler('xyz', rng.uniform(-0.08, 0.08, (n, 3))).as_quat()
    return q, imu


def _world_points(robot, q_row, base_row, frames):
    """World placements of ``frames`` with the buffer's base pose, by full pinocchio FK."""
    data = robot.new_data()
    pin.framesForwardKinematics(robot.model, data, np.concatenate([base_row, q_row]))
    return [data.oMf[robot.frame_id(f)] for f in frames]


def test_point_force_zmp_is_force_weighted_contact_points(robots):
    """ZMP = sum f_z p / sum f_z over the sole points, f_z the world-vertical 3-axis force."""
    robot = robots[0]
    kin = StreamKinematics(robot, 'wrench')
    rng = np.random.default_rng(7)
    n = 40
    q, imu = _bent_rows(robot, n, rng)
    # above the contact rule's touch-down force (15 % of the 33 kg biped's weight: 49 N)
    forces = {f: np.hstack([rng.uniform(-30, 30, (n, 2)), rng.uniform(60, 300, (n, 1)),
                            rng.uniform(-20, 20, (n, 3))]) for f in FEET}
    zmp, contact, base = kin.rows(q, imu, forces)
    for k in range(n):
        soles = _world_points(robot, q[k], base[k], [robot.feet[f].sole_frame for f in FEET])
        fts = _world_points(robot, q[k], base[k], [robot.feet[f].ft_frame for f in FEET])
        fz = np.array([(ft.rotation @ forces[f][k, :3])[2] for ft, f in zip(fts, FEET)])
        p = np.array([s.translation[:2] for s in soles])
        np.testing.assert_allclose(zmp[k], fz @ p / fz.sum(), atol=1e-9)
    np.testing.assert_allclose(contact, 1.0)


def test_a_rolling_point_foot_s_force_acts_at_its_sphere_s_lowest_point(tmp_path):
    """With ``radius_m`` r the buffer places each point force at p_sole + r (z_sole - z_world)
    (the sphere's lowest point as the leg tilts), by full pinocchio FK at its base pose."""
    desc = point_feet()
    for f in desc['feet'].values():
        f['radius_m'] = 0.02  # [m]
    robot = load_robot(write(desc, tmp_path, 'rolling.yaml'))
    kin = StreamKinematics(robot, 'wrench')
    rng = np.random.default_rng(8)
    n = 40
    q, imu = _bent_rows(robot, n, rng)
    forces = {f: np.hstack([rng.uniform(-30, 30, (n, 2)), rng.uniform(60, 300, (n, 1)),
                            np.zeros((n, 3))]) for f in FEET}
    zmp, _, base = kin.rows(q, imu, forces)
    moved = 0.0
    for k in range(n):
        soles = _world_points(robot, q[k], base[k], [robot.feet[f].sole_frame for f in FEET])
        fts = _world_points(robot, q[k], base[k], [robot.feet[f].ft_frame for f in FEET])
        fz = np.array([(ft.rotation @ forces[f][k, :3])[2] for ft, f in zip(fts, FEET)])
        p = np.array([(s.translation + 0.02 * (s.rotation[:, 2] - [0, 0, 1]))[:2]
                      for s in soles])
        np.testing.assert_allclose(zmp[k], fz @ p / fz.sum(), atol=1e-9)
        moved = max(moved, float(np.linalg.norm(p - [s.translation[:2] for s in soles])))
    assert moved > 1e-3  # the legs tilt enough for the rolling to matter


def test_point_foot_torques_are_ignored(robots):
    """A point foot carries a force only: torques in its message leave the ZMP unchanged."""
    robot = robots[0]
    rng = np.random.default_rng(8)
    q, imu = _bent_rows(robot, 10, rng)
    force = {f: np.hstack([rng.uniform(-20, 20, (10, 2)), rng.uniform(50, 200, (10, 1)),
                           np.zeros((10, 3))]) for f in FEET}
    twisted = {f: w + np.hstack([np.zeros((10, 3)), rng.uniform(-50, 50, (10, 3))])
               for f, w in force.items()}
    z0, _, _ = StreamKinematics(robot, 'wrench').rows(q, imu, force)
    z1, _, _ = StreamKinematics(robot, 'wrench').rows(q, imu, twisted)
    np.testing.assert_allclose(z1, z0, atol=1e-12)
    assert np.all(np.isfinite(z0))


def test_normal_force_only_zmp(robots):
    """One normal-force sensor per point foot: ZMP = sum f_n p / sum f_n over the sole points."""
    robot = robots[1]
    kin = StreamKinematics(robot, 'fsr')
    rng = np.random.default_rng(9)
    n = 20
    q, imu = _bent_rows(robot, n, rng)
    fn = rng.uniform(60, 300, (n, 2))  # every foot in contact by the contact rule
    zmp, _, base = kin.rows(q, imu, {f: fn[:, i:i + 1] for i, f in enumerate(FEET)})
    for k in range(n):
        soles = _world_points(robot, q[k], base[k], [robot.feet[f].sole_frame for f in FEET])
        p = np.array([s.translation[:2] for s in soles])
        np.testing.assert_allclose(zmp[k], fn[k] @ p / fn[k].sum(), atol=1e-9)


def test_support_sole_point_is_the_world_origin_and_base_tilt_is_the_imu(robots):
    """The first support foot's contact point is the world origin; roll/pitch are the IMU's."""
    robot = robots[0]
    kin = StreamKinematics(robot, 'wrench')
    rng = np.random.default_rng(10)
    q, imu = _bent_rows(robot, 1, rng)
    forces = {'left': np.array([[0, 0, 50.0, 0, 0, 0]]),
              'right': np.array([[0, 0, 400.0, 0, 0, 0]])}
    _, _, base = kin.rows(q, imu, forces)
    sole = _world_points(robot, q[0], base[0], [robot.feet['right'].sole_frame])[0]
    np.testing.assert_allclose(sole.translation, 0.0, atol=1e-9)
    tilt = Rotation.from_quat(base[0, 3:]).as_euler('ZYX')[1:]
    r_imu = Rotation.from_quat(imu[0]).as_matrix() @ kin._r_bi.T
    np.testing.assert_allclose(tilt, Rotation.from_matrix(r_imu).as_euler('ZYX')[1:],
                               atol=1e-9)


def test_contacts_and_support_follow_the_forces_without_a_default_foot(robots):
    """No support foot before a force; then the loaded foot, a swap, and contact flags."""
    robot = robots[1]
    kin = StreamKinematics(robot, 'fsr', contact_force_n=20.0)  # lift-off below 10.7 N
    q = np.zeros((5, robot.model.nv - 6))
    imu = np.tile([0, 0, 0, 1.0], (5, 1))
    left = np.array([[np.nan], [5.0], [5.0], [300.0], [300.0]])
    right = np.array([[np.nan], [200.0], [200.0], [10.0], [10.0]])
    zmp, contact, base = kin.rows(q, imu, {'left': left, 'right': right})
    support = kin.extra[:, 0]
    assert np.isnan(support[0]) and np.isnan(base[0]).all() and np.isnan(zmp[0]).all()
    np.testing.assert_array_equal(support[1:], [1, 1, 0, 0])  # right first: not foot 0
    np.testing.assert_array_equal(contact[1:], [[0, 1], [0, 1], [1, 0], [1, 0]])
    assert np.all(np.isfinite(base[1:]))
