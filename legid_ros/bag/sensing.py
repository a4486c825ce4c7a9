"""What a bag carries, from its ``metadata.yaml`` alone (no message read): the topics that hold
messages and the sensing they give a described robot
(:class:`~legid_ros.core.identification.prerequisites.Sensing`), so that ``legid identify``
refuses a method whose inputs are missing before any bag is read."""

from __future__ import annotations

from pathlib import Path

import yaml

from legid_ros.bag.discover import locate_bag
from legid_ros.bag.recording_io import foot_topics
from legid_ros.core.identification.prerequisites import Sensing


def bag_topics(path: str):
    """Topics of the bag at ``path`` that hold messages, from its ``metadata.yaml`` alone
    (no message is read); None when there is none to read (a bare storage file, a recorder's
    directory without it) or it is unreadable: the read then says what is wrong."""
    meta = locate_bag(path).path / 'metadata.yaml'
    try:
        loader = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)  # libyaml: 20x faster
        info = yaml.load(meta.read_text(), Loader=loader)['rosbag2_bagfile_information']
        return {t['topic_metadata']['name'] for t in info['topics_with_message_count']
                if t.get('message_count', 1)}
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        return None


def sensing_of_bag(path: str, robot):
    """What the bag at ``path`` carries
    (:class:`~legid_ros.core.identification.prerequisites.Sensing`), from its topic list; None
    when its topic list cannot be known without reading it."""
    if Path(path).suffix == '.npz':
        return None
    topics = bag_topics(path)
    if topics is None:
        return None
    bare = {t.lstrip('/') for t in topics}

    def fsr_ok(topic):  # older bags named <prefix>/sensor_<k> as <prefix>/<k>
        name = topic.lstrip('/')
        return name in bare or name.replace('/sensor_', '/') in bare

    feet = foot_topics(robot)
    return Sensing(
        foot_wrench=frozenset(f for f, tp in feet.items() if tp['wrench'] in topics),
        fsr=frozenset(f for f, tp in feet.items() if tp['fsr'] and all(map(fsr_ok, tp['fsr']))),
        ankle_ft=frozenset(f for f, tp in feet.items() if tp['ankle_ft'] in topics),
        imu=robot.imu.topic in topics, efforts=None if '/joint_states' in topics else False,
        source=f'bag {path}')
