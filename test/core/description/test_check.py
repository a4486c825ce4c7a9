"""Tests of legid_ros.core.description.check: a description against a recording's facts."""

import copy

import yaml

from legid_ros.core.description.check import (JOINT_STATES, RecordingFacts, TopicFacts,
                                              _joints, check_recording)
from legid_ros.core.robot import load_robot


def test_a_locked_joint_that_moves_is_one_line_with_its_key_and_fix(talos, tmp_path):
    """A joint the description locks but the bag shows moving 20 deg: one line naming
    locked_joints.<joint> and its removal; a locked joint still within 1 deg is no line."""
    desc = copy.deepcopy(talos.description)
    desc['urdf'] = str(talos.urdf_path)
    desc['locked_joints']['leg_left_4_joint'] = 0.0
    (tmp_path / 'd.yaml').write_text(yaml.safe_dump(desc))
    robot = load_robot(str(tmp_path / 'd.yaml'))
    names = talos.actuated_joint_names + ['arm_left_1_joint']
    motion = {n: 0.3 for n in talos.actuated_joint_names}
    motion['leg_left_4_joint'] = 0.35  # [rad]
    motion['arm_left_1_joint'] = 0.01  # [rad] servo jitter of a locked arm
    facts = RecordingFacts(topics={JOINT_STATES: TopicFacts('sensor_msgs/msg/JointState', 10,
                                                            200.0)},
                           joint_names=names, joint_motion=motion)
    lines = _joints(robot, facts)
    assert len(lines) == 1
    assert lines[0].startswith('locked_joints.leg_left_4_joint: the joint moves by 20.1 deg')
    assert 'fix: remove leg_left_4_joint from locked_joints' in lines[0]
    assert _joints(talos, facts) == []


def test_a_bag_of_another_robot_is_one_line_not_a_fix_per_joint_and_topic(talos):
    """Joint states that name none of the description's joints: one line saying the bag is of
    another robot (naming its joints and the way to a description), not 12 joint lines and
    another robot's topics proposed as fixes; one shared joint: the per-joint lines again."""
    solo = ['FL_HAA', 'FL_HFE', 'FL_KFE', 'FR_HAA', 'FR_HFE', 'FR_KFE', 'HL_HAA', 'HL_HFE']
    topics = {JOINT_STATES: TopicFacts('sensor_msgs/msg/JointState', 10, 200.0),
              '/lf_foot/wrench': TopicFacts('geometry_msgs/msg/WrenchStamped', 10, 200.0)}
    lines = check_recording(talos, RecordingFacts(topics=topics, joint_names=solo))
    assert len(lines) == 1
    assert lines[0].startswith(f"{JOINT_STATES} names none of the 12 joints of 'talos' "
                               '(its 8: FL_HAA')
    assert 'and 2 more' in lines[0] and 'legid describe --bag' in lines[0]
    mixed = solo + [talos.actuated_joint_names[0]]
    lines = check_recording(talos, RecordingFacts(topics=topics, joint_names=mixed))
    assert sum('of the description is not in' in line for line in lines) == 11


def test_a_bag_with_the_urdf_names_of_a_renamed_description_is_not_another_robot(talos,
                                                                                   tmp_path):
    """Every joint renamed by joint_name_map but the bag kept the URDF names: a line per joint
    saying to drop its entry, not the other-robot line."""
    desc = copy.deepcopy(talos.description)
    desc['urdf'] = str(talos.urdf_path)
    desc['joint_name_map'] = {f'J{k}': name for k, name in enumerate(talos.actuated_joint_names)}
    (tmp_path / 'd.yaml').write_text(yaml.safe_dump(desc))
    robot = load_robot(str(tmp_path / 'd.yaml'))
    topics = {JOINT_STATES: TopicFacts('sensor_msgs/msg/JointState', 10, 200.0)}
    lines = check_recording(robot, RecordingFacts(topics=topics,
                                                  joint_names=talos.actuated_joint_names))
    assert not any('names none of' in line for line in lines)
    assert sum('drop its joint_name_map entry' in line for line in lines) == 12
