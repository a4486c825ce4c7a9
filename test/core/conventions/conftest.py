"""Bags of one Solo12 MuJoCo run as setups we did not write record it."""

import copy

import pytest
import yaml

from legid_ros.bag.recording_io import write_bag
from legid_ros.core.robot import load_robot
from legid_ros.core.sim.conventions import OTHER_CONVENTIONS, Readout

READOUTS = {
    'canonical': Readout(),
    **OTHER_CONVENTIONS,
    'flipped': Readout(force_gain=-1.0),
    'heavy': Readout(force_gain=1.6),
}


def description_file(desc: dict, robot, path) -> str:
    """``desc`` written as a YAML at ``path`` (URDF by absolute path)."""
    desc = copy.deepcopy(desc)
    desc['urdf'] = str(robot.urdf_path)
    path.write_text(yaml.safe_dump(desc))
    return str(path)


@pytest.fixture(scope='session')
def write_description():
    """:func:`description_file` (for the tests)."""
    return description_file


@pytest.fixture(scope='session')
def solo12_ft(solo12, tmp_path_factory):
    """Solo12 with each foot's wrench about its link (floating rows need an F/T frame)."""
    desc = copy.deepcopy(solo12.description)
    for f in desc['feet'].values():
        f['ft_frame'] = f['link']
    return load_robot(description_file(desc, solo12, tmp_path_factory.mktemp('d') / 's.yaml'))


@pytest.fixture(scope='session')
def variant_bags(solo12_ft, solo12_run, tmp_path_factory):
    """Per readout: (bag path, the description of that setup, the robot of it)."""
    from legid_ros.core.sim.conventions import read_out

    root = tmp_path_factory.mktemp('variants')
    out = {}
    for name, ro in READOUTS.items():
        desc = ro.description(solo12_ft)
        path = description_file(desc, solo12_ft, root / f'{name}.yaml')
        robot = load_robot(path)
        bag = write_bag(read_out(solo12_run, solo12_ft, ro), root / f'{name}_bag', robot=robot)
        out[name] = (str(bag), desc, robot)
    return out
