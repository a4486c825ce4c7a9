"""Force topics of a description as live ROS 2 names: valid ones pass, others name their key."""

import pytest

from legid_ros.core.buffer.topics import check_live_topics, topic_problem, valid_topic
from legid_ros.core.description.errors import DescriptionKeyError
from legid_ros.core.robot import load_robot

from described_bipeds import biped_description, renamed_sensors, write


@pytest.mark.parametrize('topic,ok', [
    ('left_foot/fsr/c0', True), ('/left_foot/fsr/sensor_0', True), ('left_foot/fsr/0', False),
    ('left-foot/fsr', False), ('left_foot//fsr', False), ('', False)])
def test_topic_problem(topic, ok):
    """Digit-led tokens, other characters and empty tokens are refused, the rest pass."""
    assert (topic_problem(topic) == '') == ok
    assert topic_problem(valid_topic(topic) or 'x') == ''


def test_renamed_sensors_pass_and_keep_their_names(tmp_path):
    """force_sensors with any valid names: accepted, and the accessors give those names."""
    robot = load_robot(write(renamed_sensors(), tmp_path))
    check_live_topics(robot, 'both', robot.feet)
    assert robot.force_sensor_topics()['left'] == [f'left_foot/fsr/c{k}' for k in range(4)]


def test_digit_topic_is_refused_naming_the_key(tmp_path):
    """left_foot/fsr/0 fails in one line naming feet.left.force_sensors[0].topic and a fix."""
    robot = load_robot(write(renamed_sensors('{foot}_foot/fsr/{k}'), tmp_path))
    check_live_topics(robot, 'wrench')  # the sensors are not used in wrench mode
    with pytest.raises(DescriptionKeyError) as err:
        check_live_topics(robot, 'fsr')
    assert err.value.key == 'feet.left.force_sensors[0].topic'
    assert "'left_foot/fsr/sensor_0'" in err.value.fix
    assert '\n' not in str(err.value)


def test_old_form_prefix_is_the_key(tmp_path):
    """Without force_sensors a bad topic is blamed on fsr_topic_prefix."""
    desc = biped_description()
    desc['feet']['right']['fsr_topic_prefix'] = 'right_foot/9fsr'
    robot = load_robot(write(desc, tmp_path))
    with pytest.raises(DescriptionKeyError) as err:
        check_live_topics(robot, 'fsr')
    assert err.value.key == 'feet.right.fsr_topic_prefix'


def test_imu_topic_from_the_description(tmp_path):
    """The default IMU topic stays the relative 'imu'; another is used as written; one a node
    cannot use is refused in one line naming imu.topic."""
    from legid_ros.core.buffer.topics import imu_topic

    assert imu_topic(load_robot('biped')) == 'imu'
    robot = load_robot(write(biped_description(imu={'topic': '/imu/data'}), tmp_path, 'a.yaml'))
    assert imu_topic(robot) == '/imu/data'
    check_live_topics(robot, 'wrench')
    robot = load_robot(write(biped_description(imu={'topic': '/imu/0'}), tmp_path, 'b.yaml'))
    with pytest.raises(DescriptionKeyError) as err:
        check_live_topics(robot, 'wrench')
    assert err.value.key == 'imu.topic' and '\n' not in str(err.value)
