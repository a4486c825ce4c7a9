"""Tests of legid_ros.core.description.build and spec through load_robot: locked joints,
joint-name map, frames, force sensors, nq != nv joints, errors naming key and fix."""

import numpy as np
import pinocchio as pin
import pytest
import yaml

from legid_ros.core import paths
from legid_ros.core.description.errors import DescriptionKeyError
from legid_ros.core.robot import load_robot

BIPED = yaml.safe_load(paths.config_path('biped.yaml').read_text())
URDF = str(paths.urdf_path('biped.urdf'))


def _write(tmp_path, **changes):
    desc = dict(BIPED, urdf=URDF, **changes)
    for key in [k for k, v in changes.items() if v is None]:
        desc.pop(key)
    path = tmp_path / 'robot.yaml'
    path.write_text(yaml.safe_dump(desc))
    return path


def test_locked_joints_fold_into_parent_and_keep_whole_body_com(tmp_path):
    """Locking two joints removes them, keeps the total mass and gives the whole-body COM
    of the full model at the locked values (bodies folded into their parents)."""
    lock = {'l_knee': 0.7, 'l_ankle_pitch': -0.3}
    full = load_robot('biped')
    robot = load_robot(_write(tmp_path, locked_joints=lock))
    assert len(robot.actuated_joint_names) == 10
    assert not set(lock) & set(robot.actuated_joint_names)
    assert robot.total_mass == pytest.approx(full.total_mass)
    q_full = full.neutral()
    for name, value in lock.items():
        q_full[full.model.joints[full.model.getJointId(name)].idx_q] = value
    com_full = pin.centerOfMass(full.model, full.new_data(), q_full)
    com = pin.centerOfMass(robot.model, robot.new_data(), robot.neutral())
    assert np.allclose(com, com_full, atol=1e-12)
    assert robot.locked_joints['l_knee'] == pytest.approx([0.7])
    robot.frame_id('l_sole')  # frames of locked bodies stay


def test_joint_name_map_renames_joints_and_their_frames(tmp_path):
    """Mapped joints appear in the model under the robot's names, at the URDF's place."""
    robot = load_robot(_write(tmp_path, joint_name_map={'LKnee': 'l_knee',
                                                        'LHipP': 'l_hip_pitch'}))
    names = robot.actuated_joint_names
    full = load_robot('biped').actuated_joint_names
    assert names == [{'l_knee': 'LKnee', 'l_hip_pitch': 'LHipP'}.get(n, n) for n in full]
    assert robot.model.existFrame('LKnee') and not robot.model.existFrame('l_knee')
    assert robot.joint_name_map == {'LKnee': 'l_knee', 'LHipP': 'l_hip_pitch'}


def test_locked_joint_may_use_its_robot_name(tmp_path):
    """A locked joint may be named by its joint_name_map name."""
    robot = load_robot(_write(tmp_path, joint_name_map={'LKnee': 'l_knee'},
                              locked_joints={'LKnee': 0.5}))
    assert 'LKnee' not in robot.actuated_joint_names and len(robot.actuated_joint_names) == 11


def test_frames_from_the_description_sit_where_they_say(tmp_path):
    """A frame defined by parent + xyz + rpy has that pose relative to its parent, and a
    frame may sit on an earlier description frame."""
    frames = {'imu2': {'parent': 'trunk', 'xyz': [0.1, -0.02, 0.3], 'rpy': [0.0, 0.0, 0.5]},
              'imu2_tip': {'parent': 'imu2', 'xyz': [0.1, 0.0, 0.0]}}
    robot = load_robot(_write(tmp_path, frames=frames, imu_frame='imu2'))
    data = robot.new_data()
    pin.framesForwardKinematics(robot.model, data, robot.neutral())
    trunk = data.oMf[robot.frame_id('trunk')]
    rel = trunk.actInv(data.oMf[robot.frame_id('imu2_tip')]).translation
    assert np.allclose(rel, [0.1 + 0.1 * np.cos(0.5), -0.02 + 0.1 * np.sin(0.5), 0.3])


def test_force_sensors_any_topic_names_and_positions(tmp_path):
    """Force sensors listed per foot keep their topics, and xyz sensors land at their place in
    the sole frame; the default topics stay <prefix>/sensor_<k>."""
    feet = dict(BIPED['feet'])
    left = {k: v for k, v in feet['left'].items() if k != 'sensor_frames'}
    left['force_sensors'] = [{'topic': 'left_foot/fsr/0', 'frame': 'l_sole_fl'},
                             {'topic': 'lf/cell_b', 'xyz': [-0.05, 0.04, 0.0]}]
    feet['left'] = left
    robot = load_robot(_write(tmp_path, feet=feet))
    assert robot.force_sensor_topics()['left'] == ['left_foot/fsr/0', 'lf/cell_b']
    assert np.allclose(robot.force_sensor_positions('left'),
                       [[0.0625, 0.05, 0.0], [-0.05, 0.04, 0.0]])
    assert robot.feet['right'].fsr_topics == [f'right_foot/fsr/sensor_{k}' for k in range(4)]
    assert robot.feet['left'].sensor_frames == ['l_sole_fl', 'left_force_1']


CONTINUOUS = """<robot name="wheel">
  <link name="base"><inertial><mass value="2.0"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01"
    iyz="0" izz="0.01"/></inertial></link>
  <joint name="spin" type="{kind}"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>{limit}</joint>
  <link name="arm"><inertial><origin xyz="0.2 0 0"/><mass value="1.0"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
  <joint name="tip_joint" type="fixed"><parent link="arm"/><child link="tip"/>
    <origin xyz="0.3 0 0"/></joint>
  <link name="tip"/>
</robot>
"""


def _wheel(tmp_path, kind, **extra):
    limit = '<limit lower="-10" upper="10" effort="1" velocity="1"/>' if kind == 'revolute' else ''
    urdf = tmp_path / f'{kind}.urdf'
    urdf.write_text(CONTINUOUS.format(kind=kind, limit=limit))
    desc = tmp_path / f'{kind}.yaml'
    desc.write_text(yaml.safe_dump(dict(robot='wheel', urdf=str(urdf), base_link='base',
                                        **extra)))
    return load_robot(desc)


def test_continuous_joint_values_map_through_nq_not_nv(tmp_path):
    """A continuous joint (nq 2, nv 1) takes its angle through configuration(), giving the
    same tip position as the revolute version of the robot, and joint_values() inverts it."""
    cont, rev = _wheel(tmp_path, 'continuous'), _wheel(tmp_path, 'revolute')
    assert cont.model.nq == cont.model.nv + 1 + 1  # free flyer quaternion + continuous
    assert cont.dof_names == ['spin'] and not cont.has_only_scalar_joints
    for angle in (0.3, 2.5, -3.0):
        tips = []
        for robot in (cont, rev):
            data = robot.new_data()
            pin.framesForwardKinematics(robot.model, data, robot.configuration([angle]))
            tips.append(data.oMf[robot.frame_id('tip')].translation)
        assert np.allclose(tips[0], tips[1])
        assert cont.joint_values(cont.configuration([angle])) == pytest.approx([angle])


def test_locking_a_continuous_joint_uses_its_angle(tmp_path):
    """A locked continuous joint folds its body at the given angle (whole-body COM)."""
    robot = _wheel(tmp_path, 'continuous', locked_joints={'spin': np.pi / 2})
    assert robot.actuated_joint_names == []
    com = pin.centerOfMass(robot.model, robot.new_data(), robot.neutral())
    assert np.allclose(com, [0.0, 0.2 / 3.0, 0.1 / 3.0])


@pytest.mark.parametrize('changes, key, fix', [
    ({'locked_joints': {'l_kne': 0.1}}, 'locked_joints.l_kne', "did you mean 'l_knee'"),
    ({'locked_joints': {'l_knee': 9.0}}, 'locked_joints.l_knee', 'within'),
    ({'locked_joints': {'l_knee': 'x'}}, 'locked_joints.l_knee', 'one number'),
    ({'joint_name_map': {'LK': 'no_joint'}}, 'joint_name_map.LK', 'URDF joints'),
    ({'frames': {'x': {'xyz': [0, 0, 0]}}}, 'frames.x', 'parent'),
    ({'frames': {'x': {'parent': 'trnk'}}}, 'frames.x.parent', "did you mean 'trunk'"),
    ({'frames': {'l_sole': {'parent': 'trunk'}}}, 'frames.l_sole', 'remove this entry'),
    ({'frames': {'x': {'parent': 'trunk', 'xyz': [0, 0]}}}, 'frames.x.xyz', 'write'),
    ({'frames': {'x': {'parent': 'trunk', 'rot': [0, 0, 0]}}}, 'frames.x.rot', 'rpy'),
    ({'imu_frame': 'imu'}, 'imu_frame', 'define it under frames'),
    ({'link_groups': {'g': {'links': ['l_thigh']}}}, 'link_groups.g.axis', 'give links'),
])
def test_every_description_error_names_the_key_and_the_fix(tmp_path, changes, key, fix):
    """A wrong entry raises DescriptionKeyError naming its key, with a fix in the message."""
    with pytest.raises(DescriptionKeyError) as info:
        load_robot(_write(tmp_path, **changes))
    assert info.value.key == key
    assert fix in info.value.fix
    assert str(info.value).startswith(f'{key}: ') and 'fix: ' in str(info.value)


@pytest.mark.parametrize('foot_change, key', [
    ({'lnk': 'l_foot'}, 'feet.left.lnk'),
    ({'sole_frame': 'l_sol'}, 'feet.left.sole_frame'),
    ({'contact': 'soft'}, 'feet.left.contact'),
    ({'radius_m': 0.01}, 'feet.left.radius_m'),
    ({'contact': 'point', 'radius_m': -0.01}, 'feet.left.radius_m'),
    ({'force_sensors': [{'topic': 't'}]}, 'feet.left.force_sensors[0]'),
    ({'force_sensors': [{'topic': 't', 'frame': 'nowhere'}], 'sensor_frames': None},
     'feet.left.force_sensors[0].frame'),
])
def test_foot_errors_name_the_key(tmp_path, foot_change, key):
    """A wrong foot entry names its key (typos get the closest known key)."""
    feet = dict(BIPED['feet'])
    left = dict(feet['left'], **foot_change)
    feet['left'] = {k: v for k, v in left.items() if v is not None}
    with pytest.raises(DescriptionKeyError) as info:
        load_robot(_write(tmp_path, feet=feet))
    assert info.value.key == key
