"""Tests of the MuJoCo spec builder (legid_ros.core.sim.mjcf)."""

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.inertial import get_parameters
from legid_ros.core.robot import load_robot
from legid_ros.core.sim.mjcf import SimOptions, build_spec, parameters_from_mujoco
from legid_ros.core.synthetic import TABLE2_TRUTH, perturbed_truth


@pytest.fixture(scope='module')
def biped():
    return load_robot('biped')


def test_inertials_round_trip_truth(biped):
    """The compiled MuJoCo bodies carry exactly the standard parameters given to the builder."""
    pi_true = perturbed_truth(biped, TABLE2_TRUTH)
    spec, _ = build_spec(biped, pi_true)
    model = spec.compile()
    assert np.allclose(parameters_from_mujoco(biped, model), pi_true, atol=1e-10)
    assert not np.allclose(pi_true, get_parameters(biped.model), atol=1e-3)
    assert model.body_subtreemass[1] == pytest.approx(sum(pi_true[0::10]), rel=1e-12)


def test_tree_joints_actuators_and_limits(biped):
    """Joints, axes, limits (radians) and servos match the pinocchio model."""
    opt = SimOptions(kp=1234.0, kv=5.0, friction={'r_knee': 2.5}, armature=0.03)
    spec, info = build_spec(biped, options=opt)
    model = spec.compile()
    assert info.joint_names == biped.actuated_joint_names
    assert model.nq == biped.model.nq and model.nv == biped.model.nv
    assert model.nu == 12
    for name in info.joint_names:
        j = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
        jp = biped.model.getJointId(name)
        iq = biped.model.idx_qs[jp]
        assert model.jnt_range[j] == pytest.approx(
            [biped.model.lowerPositionLimit[iq], biped.model.upperPositionLimit[iq]])
    knee = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, 'r_knee')
    hip = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, 'l_hip_roll')
    assert model.dof_frictionloss[model.jnt_dofadr[knee]] == pytest.approx(2.5)
    assert model.dof_frictionloss[model.jnt_dofadr[hip]] == pytest.approx(0.0)
    assert model.dof_armature[model.jnt_dofadr[hip]] == pytest.approx(0.03)
    assert np.allclose(model.jnt_axis[hip], [1.0, 0.0, 0.0])
    assert model.actuator_gainprm[0, 0] == pytest.approx(1234.0)
    assert model.actuator_biasprm[0, 2] == pytest.approx(-5.0)


def test_frames_and_contacts_match_pinocchio(biped):
    """Sites sit where pinocchio puts the URDF frames; contact spheres touch the sole plane."""
    spec, info = build_spec(biped, options=SimOptions(contact_radius_m=0.006))
    model = spec.compile()
    data = mujoco.MjData(model)
    q = pin.neutral(biped.model)
    q[9] = -0.3
    q[10] = 0.6
    data.qpos[:3] = q[:3]
    data.qpos[3:7] = [q[6], *q[3:6]]
    data.qpos[7:] = q[7:]
    mujoco.mj_kinematics(model, data)
    pdata = biped.new_data()
    pin.framesForwardKinematics(biped.model, pdata, q)
    for site in ('l_sole', 'l_sole_fr', 'r_ankle_ft', 'imu_link'):
        sid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, site)
        assert np.allclose(data.site_xpos[sid], pdata.oMf[biped.frame_id(site)].translation,
                           atol=1e-12)
    for foot, geoms in info.contact_geoms.items():
        assert len(geoms) == 4
        for g, frame in zip(geoms, biped.feet[foot].sensor_frames):
            gid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, g)
            bottom = data.geom_xpos[gid] - 0.006 * data.geom_xmat[gid].reshape(3, 3)[:, 2]
            assert np.allclose(bottom, pdata.oMf[biped.frame_id(frame)].translation, atol=1e-12)
    assert mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, 'floor') >= 0
    assert info.imu_sensors == ('imu_quat', 'imu_gyro', 'imu_acc')


def test_bad_parameter_vector_rejected(biped):
    """A parameter vector of the wrong size raises BadInputError."""
    with pytest.raises(BadInputError):
        build_spec(biped, np.ones(7))


def test_fixed_base_robot_builds(biped):
    """A fixed-base robot (leg3) builds with no floor and no free joint."""
    leg = load_robot('leg3', floating_base=False)
    spec, info = build_spec(leg)
    model = spec.compile()
    assert not info.floating
    assert model.nq == leg.model.nq
    assert mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, 'floor') < 0
    assert all(model.jnt_type[j] != mujoco.mjtJoint.mjJNT_FREE for j in range(model.njnt))


def test_a_point_foot_s_radius_sizes_its_contact_sphere(solo12, tmp_path):
    """A described ``radius_m`` is the simulated foot sphere's radius, its centre that far
    along the sole frame's z axis (without one: ``SimOptions.point_radius_m``)."""
    import copy

    import yaml

    desc = copy.deepcopy(solo12.description)
    desc['urdf'] = str(solo12.urdf_path)
    robots = []
    for name, radius in (('r', 0.012), ('none', None)):
        for f in desc['feet'].values():
            f.pop('radius_m', None)
            if radius is not None:
                f['radius_m'] = radius  # [m]
        path = tmp_path / f'solo12_{name}.yaml'
        path.write_text(yaml.safe_dump(desc))
        robots.append((load_robot(str(path)), radius or SimOptions().point_radius_m))
    for robot, radius in robots:
        spec, info = build_spec(robot, get_parameters(robot.model))
        model = spec.compile()
        data = mujoco.MjData(model)
        mujoco.mj_kinematics(model, data)
        pdata = robot.new_data()
        pin.framesForwardKinematics(robot.model, pdata, pin.neutral(robot.model))
        for foot, geoms in info.contact_geoms.items():
            gid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, geoms[0])
            assert model.geom_size[gid][0] == pytest.approx(radius)
            sole = pdata.oMf[robot.frame_id(robot.feet[foot].sole_frame)]
            centre = sole.translation + radius * sole.rotation[:, 2]
            # MuJoCo's free joint starts at the origin as pinocchio's neutral base does
            assert np.allclose(data.geom_xpos[gid], centre, atol=1e-9)
