"""Bags of a description with its own force-sensor topic names: written and read under them."""

import numpy as np
import pytest
import yaml
from rosbags.rosbag2 import Reader

from legid_ros.bag.recording_io import foot_topics, read_bag, write_bag
from legid_ros.core import paths
from legid_ros.core.robot import load_robot
from legid_ros.core.synthetic import NoiseModel, SyntheticConfig, simulate_biped


def _renamed(folder, pattern):
    """The biped with its sole sensors under force_sensors, topics from ``pattern``."""
    desc = yaml.safe_load(paths.config_path('biped.yaml').read_text())
    desc['urdf'] = str(paths.urdf_path('biped.urdf'))
    for foot, s in (('left', 'l'), ('right', 'r')):
        f = desc['feet'][foot]
        del f['sensor_frames'], f['fsr_topic_prefix']
        f['force_sensors'] = [{'topic': pattern.format(foot=foot, k=k), 'frame': f'{s}_sole_{c}'}
                              for k, c in enumerate(('fl', 'fr', 'rl', 'rr'))]
    path = folder / 'robot.yaml'
    path.write_text(yaml.safe_dump(desc))
    return load_robot(path)


@pytest.fixture(scope='module')
def rec():
    return simulate_biped(SyntheticConfig(duration_s=0.2, rate_hz=500.0, seed=5,
                                          noise=NoiseModel.none()))


@pytest.mark.parametrize('pattern', ['{foot}_foot/fsr/c{k}', '{foot}_foot/fsr/{k}'])
def test_bag_uses_the_description_topic_names(tmp_path, rec, pattern):
    """foot_topics, the written bag and read_bag all use the description's names (even ones a
    live node refuses, such as left_foot/fsr/0)."""
    robot = _renamed(tmp_path, pattern)
    names = [f'/{pattern.format(foot=foot, k=k)}' for foot in ('left', 'right') for k in range(4)]
    assert foot_topics(robot)['left']['fsr'] == names[:4]
    path = write_bag(rec, tmp_path / 'run', robot=robot)
    with Reader(path) as reader:
        topics = {c.topic for c in reader.connections}
    assert set(names) <= topics
    assert not any('/sensor_' in t for t in topics)
    back = read_bag(path, robot)
    for foot in ('left', 'right'):
        np.testing.assert_array_equal(back.fsr[foot], rec.fsr[foot])


def test_old_names_read_with_a_renamed_description_fail_softly(tmp_path, rec):
    """A bag under the old names read with renamed sensors has no fsr (not wrong columns)."""
    path = write_bag(rec, tmp_path / 'run', robot=load_robot('biped'))
    back = read_bag(path, _renamed(tmp_path, '{foot}_foot/fsr/c{k}'))
    assert back.fsr == {}
    np.testing.assert_array_equal(back.foot_wrench['left'], rec.foot_wrench['left'])
