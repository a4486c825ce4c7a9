"""Force topics of a robot description, checked as ROS 2 topic names for live nodes.

A bag may hold any topic name (``left_foot/fsr/0``), but a ROS 2 node can only subscribe or
publish a valid name: every token (between slashes) is letters, digits and underscores and
does not start with a digit. Plain Python (no ROS import), so the check is testable anywhere.
"""

from __future__ import annotations

import re
from typing import Iterable

from legid_ros.core.conventions.spec import DEFAULT_IMU_TOPIC
from legid_ros.core.description.errors import DescriptionKeyError
from legid_ros.core.robot import Robot

_TOKEN = re.compile(r'[A-Za-z_][A-Za-z0-9_]*\Z')


def topic_problem(topic: str) -> str:
    """Why ``topic`` is not a valid ROS 2 topic name ('' when it is)."""
    body = topic[1:] if topic.startswith('/') else topic
    if body.startswith('~'):
        body = body[1:].lstrip('/')
    if not body:
        return 'is empty'
    for token in body.split('/'):
        if not token:
            return 'has an empty token (two slashes or a trailing slash)'
        if token[:1].isdigit():
            return f'has the token {token!r}, which starts with a digit'
        if not _TOKEN.match(token):
            return f'has the token {token!r}, with a character other than letters, digits, _'
    return ''


def valid_topic(topic: str) -> str:
    """A valid name close to ``topic``: digit-led tokens get ``sensor_``, other characters
    become ``_``."""
    parts = [re.sub(r'[^A-Za-z0-9_]', '_', p) for p in topic.strip('/').split('/') if p]
    return '/'.join(f'sensor_{p}' if p[:1].isdigit() else p for p in parts)


def imu_topic(robot: Robot) -> str:
    """The IMU topic a live node subscribes: the description's ``imu.topic``, the default
    (``/imu``) as the relative ``imu`` (so a namespaced node keeps using its own)."""
    return 'imu' if robot.imu.topic == DEFAULT_IMU_TOPIC else robot.imu.topic


def _force_key(robot: Robot, foot: str, k: int) -> str:
    """Description key that names the topic of force sensor ``k`` of ``foot``."""
    if 'force_sensors' in (robot.description.get('feet', {}).get(foot) or {}):
        return f'feet.{foot}.force_sensors[{k}].topic'
    return f'feet.{foot}.fsr_topic_prefix'


def check_live_topics(robot: Robot, mode: str, ankle_feet: Iterable[str] = ()) -> None:
    """Check that the IMU and force topics a live node uses are valid ROS 2 names.

    Args:
        robot: Robot with feet.
        mode: 'wrench' (each foot's ``wrench_topic``), 'fsr' (its force-sensor topics,
            :meth:`Robot.force_sensor_topics`) or 'both'.
        ankle_feet: Feet whose ``ankle_ft_topic`` is used too.

    Raises:
        DescriptionKeyError: A topic is not a valid ROS 2 name; the message is one line
            naming the key and a valid name to write instead.
    """
    ankle_feet = set(ankle_feet)
    problem = topic_problem(robot.imu.topic)
    if problem:
        raise DescriptionKeyError('imu.topic', f'topic {robot.imu.topic!r} {problem}: a ROS 2 '
                                  'node cannot use it', f'rename it, e.g. '
                                  f'{valid_topic(robot.imu.topic)!r} (a bag may keep any name)')
    for name, foot in robot.feet.items():
        named = []
        if mode in ('wrench', 'both'):
            named.append((f'feet.{name}.wrench_topic', foot.wrench_topic))
        if mode in ('fsr', 'both'):
            named += [(_force_key(robot, name, k), t) for k, t in enumerate(foot.fsr_topics)]
        if name in ankle_feet and foot.ankle_ft_topic:
            named.append((f'feet.{name}.ankle_ft_topic', foot.ankle_ft_topic))
        for key, topic in named:
            problem = topic_problem(topic)
            if problem:
                raise DescriptionKeyError(
                    key, f'topic {topic!r} {problem}: a ROS 2 node cannot use it',
                    f'rename it, e.g. {valid_topic(topic)!r} (a bag may keep any name)')
