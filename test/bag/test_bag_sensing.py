"""What a bag carries is read from its metadata alone: the sensing identify checks before any
message is read."""

import dataclasses
import shutil

import numpy as np
import pytest

from legid_ros.bag.recording_io import write_bag
from legid_ros.bag.sensing import bag_topics, sensing_of_bag
from legid_ros.core.robot import load_robot
from legid_ros.core.synthetic import NoiseModel, SyntheticConfig, simulate_biped


@pytest.fixture(scope='module')
def biped_bag(tmp_path_factory):
    rec = simulate_biped(SyntheticConfig(duration_s=0.2, rate_hz=200.0, seed=3,
                                         noise=NoiseModel.none()))
    path = tmp_path_factory.mktemp('sensing') / 'run'
    write_bag(rec, path, robot=load_robot('biped'), progress=False)
    return path


def test_sensing_follows_the_topics_in_the_metadata(biped_bag):
    """The biped's bag gives sole sensors, IMU and efforts on both feet; the same robot read
    against a description whose IMU topic the bag lacks says so."""
    robot = load_robot('biped')
    topics = bag_topics(str(biped_bag))
    assert robot.imu.topic in topics and '/joint_states' in topics
    sensing = sensing_of_bag(str(biped_bag), robot)
    assert sensing.imu and sensing.fsr == frozenset(robot.feet)
    assert sensing.efforts is None  # joint_states present: efforts decided by the data
    robot.imu = dataclasses.replace(robot.imu, topic='/imu_elsewhere')
    assert not sensing_of_bag(str(biped_bag), robot).imu


def test_no_metadata_means_unknown(biped_bag, tmp_path):
    """A bag directory without metadata.yaml and a Recording .npz: None (the read decides)."""
    bare = tmp_path / 'bare'
    shutil.copytree(biped_bag, bare)
    (bare / 'metadata.yaml').unlink()
    assert bag_topics(str(bare)) is None
    assert sensing_of_bag(str(bare), load_robot('biped')) is None
    npz = tmp_path / 'rec.npz'
    np.savez(npz, t=np.zeros(1))
    assert sensing_of_bag(str(npz), load_robot('biped')) is None
