"""Buffer node's start-up frame rule (:mod:`legid_ros.ros.buffer_parameters`)."""

import copy

import pytest

from legid_ros.ros.buffer_parameters import PARAMETERS, expected_frames
from legid_ros.ros.parameters import ParameterRefusedError


def test_every_wrench_foot_accepts_its_frame_or_an_empty_one(talos):
    """Each foot's wrench queue accepts '' and its frame_id (else its F/T frame), nothing else."""
    frames = expected_frames(talos, 'wrench', ankle=())
    for name, foot in talos.feet.items():
        assert frames[name] == {'', foot.frame_id or foot.wrench_frame}
    assert frames['imu'] == {'', talos.imu.frame_id}


def test_sole_sensor_queues_accept_their_sensor_frames(talos):
    """In fsr mode each sole sensor's queue accepts its own frame only."""
    frames = expected_frames(talos, 'fsr', ankle=tuple(talos.feet))
    for name, foot in talos.feet.items():
        assert foot.sensor_frames, 'the shipped Talos has sole sensors'
        for k, frame in enumerate(foot.sensor_frames):
            assert frames[(name, k)] == {'', frame}
        assert frames[('ankle_ft', name)] == {'', foot.wrench_frame}


def test_a_frame_the_model_lacks_is_refused_naming_it(talos):
    """A description frame that is not in the model is refused at start-up, naming the frame."""
    robot = copy.copy(talos)
    foot = next(iter(robot.feet.values()))
    robot.feet = dict(robot.feet)
    robot.feet[next(iter(robot.feet))] = copy.copy(foot)
    object.__setattr__(robot.feet[next(iter(robot.feet))], 'ft_frame', 'no_such_frame')
    with pytest.raises(ParameterRefusedError, match='no_such_frame'):
        expected_frames(robot, 'wrench', ankle=())


def test_parameter_names_are_unique():
    """The node's parameter table declares each name once."""
    names = [p.name for p in PARAMETERS]
    assert len(names) == len(set(names))
