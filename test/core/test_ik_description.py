"""The IK reads its legs from the robot description: renamed legs, legs without a spring
(locked), wrong leg structures (Chen et al. 2021's redundant leg on robots other than the
built-in quadruped)."""

import numpy as np
import pytest
import yaml

from legid_ros.core import paths
from legid_ros.core.description.errors import DescriptionKeyError
from legid_ros.core.errors import BadInputError
from legid_ros.core.gait.trot import TrotParams
from legid_ros.core.ik.batch import LegIk
from legid_ros.core.ik.leg import LEGS, LegKinematics, leg_names
from legid_ros.core.robot import load_robot

QUAD = yaml.safe_load(paths.config_path('quadruped.yaml').read_text())
NAMES = {'lf': 'front_left', 'rf': 'front_right', 'lh': 'back_left', 'rh': 'back_right'}


def _robot(tmp_path, legs, **extra):
    desc = dict(QUAD, urdf=str(paths.urdf_path('quadruped.urdf')), legs=legs, **extra)
    path = tmp_path / 'quad.yaml'
    path.write_text(yaml.safe_dump(desc, sort_keys=False))
    return load_robot(path, floating_base=False)


def _renamed(gait_roles=True):
    return {NAMES[leg]: dict(QUAD['legs'][leg], **({'gait_role': leg} if gait_roles else {}))
            for leg in LEGS}


def test_default_robot_keeps_the_quadruped_legs():
    """Without a robot, the IK solves the built-in quadruped's legs lf, rf, lh, rh."""
    ik = LegIk()
    assert ik.legs == LEGS and ik.robot.name == 'quadruped'
    assert ik.kin['lf'].joint_names == QUAD['legs']['lf']['joints']


def test_renamed_legs_give_the_same_gait_as_the_built_in_quadruped(tmp_path):
    """Legs renamed in the description, placed in the trot by gait_role, give the same joint
    trajectory as the built-in quadruped's trot, under the new leg names."""
    ref = LegIk(TrotParams()).gait_cycle(0.02)
    ik = LegIk(TrotParams(), _robot(tmp_path, _renamed()))
    assert leg_names(ik.robot) == tuple(NAMES[leg] for leg in LEGS)
    out = ik.gait_cycle(0.02)
    assert out.joint_names == ref.joint_names
    assert np.array_equal(out.q, ref.q) and np.array_equal(out.qd, ref.qd)
    rng = np.random.default_rng(4)
    q = np.array([0.05, -0.9, 1.2, 0.0]) + rng.normal(0, 0.02, (5, 4))
    q[:, 3] = np.radians(30.0) - q[:, 1] - q[:, 2]
    target = np.array([ik.kin['back_right'].fk(row) for row in q])
    sol = ik.solve(['back_right'], np.arange(5) * 0.01, {'back_right': target})
    assert sol.joint_names == QUAD['legs']['rh']['joints']
    assert sol.q.shape == (5, 4)
    fk = np.array([ik.kin['back_right'].fk(row) for row in sol.q])
    assert np.max(np.abs(fk - target)) < 1e-9


def test_trot_needs_four_placed_legs(tmp_path):
    """Renamed legs without gait_role still solve requests, but the trot is refused with
    the key to set."""
    ik = LegIk(TrotParams(), _robot(tmp_path, _renamed(gait_roles=False)))
    with pytest.raises(BadInputError, match='gait_role'):
        ik.gait_cycle(0.02)
    with pytest.raises(BadInputError, match='front_left'):
        ik.solve(['lf'], np.zeros(1), {'lf': np.zeros((1, 3))})


def test_legs_without_spring_from_locked_spring_joints(tmp_path):
    """With the passive springs locked at 0 (the leg then ends at its foot frame), the
    IK's link lengths and joint solutions equal those of the sprung legs at 0 compression."""
    legs = {leg: {k: v for k, v in QUAD['legs'][leg].items() if k != 'spring'} for leg in LEGS}
    robot = _robot(tmp_path, legs, locked_joints={f'{leg}_spring': 0.0 for leg in LEGS})
    assert not any('spring' in j for j in robot.actuated_joint_names)
    ref, ik = LegIk(TrotParams()), LegIk(TrotParams(), robot)
    assert ik.kin['lh'].geometry.l3 == pytest.approx(ref.kin['lh'].geometry.l3, abs=1e-12)
    a, b = ref.gait_cycle(0.02), ik.gait_cycle(0.02)
    assert np.max(np.abs(a.q - b.q)) < 1e-12


@pytest.mark.parametrize('change, key', [
    ({'joints': ['lf_hip_pitch', 'lf_hip_roll', 'lf_knee', 'lf_ankle_pitch']}, 'legs.lf'),
    ({'joints': ['lf_hip_roll', 'lf_hip_pitch', 'lf_knee']}, 'legs.lf.joints'),
    ({'joints': ['lf_hip_roll', 'lf_hip_pitch', 'lf_knee', 'lf_ankle']}, 'legs.lf.joints'),
    ({'gait_role': 'front'}, 'legs.lf.gait_role'),
])
def test_leg_description_errors_name_the_key(tmp_path, change, key):
    """A leg whose joints are not the IK's roll + three pitch joints, or with an unknown trot
    place, is refused naming its description key."""
    legs = dict(QUAD['legs'], lf=dict(QUAD['legs']['lf'], **change))
    robot = _robot(tmp_path, legs)
    with pytest.raises(DescriptionKeyError) as info:
        LegIk(TrotParams(), robot)
    assert info.value.key == key


def test_robot_without_legs_is_refused_with_the_key():
    """A description without legs: the IK says which key to add."""
    with pytest.raises(DescriptionKeyError, match='legs'):
        LegKinematics('lf', load_robot('biped', floating_base=False))
    with pytest.raises(DescriptionKeyError) as info:
        LegIk(robot=load_robot('biped', floating_base=False))
    assert info.value.key == 'legs'
