"""Tests of legid check's decisions (legid_ros.commands.check and
legid_ros.core.conventions.consistency) on bags of setups we did not write."""

import argparse
import copy

import pytest

from legid_ros.commands import check
from legid_ros.core.robot import load_robot


def _check(robot_path, bag, capsys):
    """(exit code, printed lines) of ``legid check``."""
    code = check.run(argparse.Namespace(robot=robot_path, bag=bag, zmp_source='auto'))
    return code, capsys.readouterr().out.strip().splitlines()


def _mistake(name, variant_bags, solo12_ft):
    """(description, bag) of one description mistake against a Solo12 bag."""
    bag, desc, _ = variant_bags[{'wrong frame': 'world', 'wrong sensing': 'world',
                                 'imu mounting': 'imu', 'sign flipped': 'flipped',
                                 'feet swapped': 'world', 'wrong total mass': 'heavy'}[name]]
    desc = copy.deepcopy(desc)
    if name == 'wrong frame':
        for f in desc['feet'].values():
            del f['expressed_in']
    elif name == 'wrong sensing':
        desc['force_sensing'] = 'fsr'
    elif name == 'imu mounting':
        del desc['imu']['rpy']
    elif name == 'feet swapped':
        feet = desc['feet']
        feet['lf']['wrench_topic'], feet['rh']['wrench_topic'] = \
            feet['rh']['wrench_topic'], feet['lf']['wrench_topic']
    return desc, bag


@pytest.mark.parametrize('name', ['canonical', 'world', 'foot', 'imu', 'imu_world',
                                  'imu_drift_world'])
def test_no_false_alarm_on_the_right_description(variant_bags, name, capsys):
    """Each setup's own description passes legid check (exit 0, one 'ok' line)."""
    bag, desc, robot = variant_bags[name]
    code, lines = _check(bag.replace('_bag', '.yaml'), bag, capsys)
    assert code == 0, lines
    assert lines[-1].startswith('ok:')


@pytest.mark.parametrize('name, words', [
    ('wrong frame', 'expressed_in'), ('wrong sensing', 'force_sensing'),
    ('imu mounting', 'imu.rpy'), ('sign flipped', 'on the ground'),
    ('feet swapped', 'swapped'), ('wrong total mass', 'weighs')])
def test_a_description_mistake_is_flagged_with_its_key(variant_bags, solo12_ft, name, words,
                                                       tmp_path, capsys, write_description):
    """A wrong description of a Solo12 bag fails legid check with a line naming the key."""
    desc, bag = _mistake(name, variant_bags, solo12_ft)
    code, lines = _check(write_description(desc, solo12_ft, tmp_path / 'm.yaml'), bag, capsys)
    assert code == 1
    assert any(words in line for line in lines), lines


def test_a_missing_imu_topic_names_the_bag_s_imu_topic(variant_bags, solo12_ft, tmp_path,
                                                       capsys, write_description):
    """Described on /imu, a bag with its IMU on /imu/data gets 'set imu.topic: /imu/data'."""
    bag, desc, _ = variant_bags['imu']
    desc = copy.deepcopy(desc)
    desc['imu']['topic'] = '/imu'
    code, lines = _check(write_description(desc, solo12_ft, tmp_path / 'i.yaml'), bag, capsys)
    assert code == 1
    assert any('set imu.topic: /imu/data' in line for line in lines), lines


def test_a_wrong_imu_heading_with_world_forces_is_flagged_with_the_right_value(
        variant_bags, solo12_ft, tmp_path, capsys, write_description):
    """World-axes forces with an IMU whose reference is yawed 0.7 rad, described with
    heading 0: check names imu.heading_rad and a value within 1 deg of 0.7."""
    import re

    bag, desc, _ = variant_bags['imu_world']
    desc = copy.deepcopy(desc)
    desc['imu']['heading_rad'] = 0.0
    code, lines = _check(write_description(desc, solo12_ft, tmp_path / 'h.yaml'), bag, capsys)
    assert code == 1
    line = next(x for x in lines if x.startswith('imu.heading_rad'))
    assert abs(float(re.search(r'set imu.heading_rad: (\S+)', line).group(1)) - 0.7) < 0.0175


def test_an_imu_yawed_90_deg_described_unrotated_is_flagged_with_its_rpy(
        variant_bags, solo12_ft, tmp_path, capsys, write_description):
    """An IMU mounted turned 90 deg about z (gravity at rest unchanged) described without
    its rpy: check names imu.rpy with a yaw within 2 deg of 90 deg."""
    import math
    import re

    bag, desc, _ = variant_bags['imu_drift_world']
    desc = copy.deepcopy(desc)
    assert desc['imu']['rpy'][2] == pytest.approx(math.pi / 2)
    del desc['imu']['rpy']
    code, lines = _check(write_description(desc, solo12_ft, tmp_path / 'y.yaml'), bag, capsys)
    assert code == 1
    line = next(x for x in lines if x.startswith('imu.rpy'))
    rpy = [float(x) for x in re.search(r'imu.rpy: \[(\S+), (\S+), (\S+)\]', line).groups()]
    assert abs(rpy[2] - math.pi / 2) < math.radians(2) and max(map(abs, rpy[:2])) < 0.02


def test_a_sole_sensor_2_cm_off_is_flagged(talos, talos_run, tmp_path, capsys,
                                           write_description):
    """On Talos's run (6-axis wrench and sole sensors), a sensor described 2 cm inwards makes
    the sole sensors' CoP leave the wrench's: flagged; the shipped description passes."""
    from legid_ros.bag.recording_io import write_bag

    bag = str(write_bag(talos_run, tmp_path / 'talos_bag', robot=talos))
    good = write_description(talos.description, talos, tmp_path / 'good.yaml')
    code, lines = _check(good, bag, capsys)
    assert code == 0, lines
    desc = copy.deepcopy(talos.description)
    desc['feet']['left']['force_sensors'][0]['xyz'][0] -= 0.02
    code, lines = _check(write_description(desc, talos, tmp_path / 'off.yaml'), bag, capsys)
    assert code == 1
    assert any('feet.left.force_sensors' in line for line in lines), lines


def test_a_humanoid_s_imu_yawed_20_deg_is_flagged_with_its_rpy(talos, talos_run, tmp_path,
                                                            capsys, write_description):
    """Talos's IMU read out turned 0.35 rad about z: its own description passes, the one
    without the rpy is flagged with a yaw within 1 deg of 0.35 rad (flat feet's normal)."""
    import math
    import re

    from legid_ros.bag.recording_io import write_bag
    from legid_ros.core.sim.conventions import Readout, read_out

    ro = Readout(imu_rpy=(0.0, 0.0, 0.35))
    desc = ro.description(talos)
    right = write_description(desc, talos, tmp_path / 'right.yaml')
    bag = str(write_bag(read_out(talos_run, talos, ro), tmp_path / 'yaw_bag',
                        robot=load_robot(right)))
    code, lines = _check(right, bag, capsys)
    assert code == 0, lines
    desc = copy.deepcopy(desc)
    del desc['imu']['rpy']
    code, lines = _check(write_description(desc, talos, tmp_path / 'y.yaml'), bag, capsys)
    assert code == 1
    line = next(x for x in lines if x.startswith('imu.rpy'))
    yaw = float(re.search(r'imu.rpy: \[\S+, \S+, (\S+)\]', line).group(1))
    assert abs(yaw - 0.35) < math.radians(1)


def test_a_moving_joint_declared_locked_is_one_line(talos, talos_run, tmp_path, capsys,
                                                    write_description):
    """Talos's knee declared locked while it moves in the bag: one line naming
    locked_joints.leg_left_4_joint and its removal, no physical line from the wrong posture."""
    from legid_ros.bag.recording_io import write_bag

    bag = str(write_bag(talos_run, tmp_path / 'talos_bag', robot=talos))
    desc = copy.deepcopy(talos.description)
    desc['locked_joints']['leg_left_4_joint'] = 0.0
    code, lines = _check(write_description(desc, talos, tmp_path / 'locked.yaml'), bag, capsys)
    assert code == 1
    assert len(lines) == 1 and lines[0].startswith('locked_joints.leg_left_4_joint: the joint '
                                                   'moves by'), lines
    assert lines[0].endswith('fix: remove leg_left_4_joint from locked_joints')


def test_a_force_frame_hung_from_the_world_is_refused(solo12_ft, tmp_path, write_description):
    """ft_frame on a frame fixed to the world (zero Jacobian) is refused naming the key."""
    from legid_ros.core.description.errors import DescriptionKeyError

    desc = copy.deepcopy(solo12_ft.description)
    desc['frames']['world_ft'] = {'parent': 'universe'}
    desc['feet']['lf']['ft_frame'] = 'world_ft'
    with pytest.raises(DescriptionKeyError, match='feet.lf.ft_frame.*expressed_in: world'):
        load_robot(write_description(desc, solo12_ft, tmp_path / 'w.yaml'))


def test_a_point_contact_at_the_sphere_centre_is_flagged(variant_bags, solo12_ft, tmp_path,
                                                        capsys, write_description):
    """Solo12's contact points put at the collision spheres' centres (16 mm up the shank)
    fail legid check naming feet.<foot>.sole_frame and the sphere's bottom."""
    bag, desc, _ = variant_bags['canonical']
    desc = copy.deepcopy(desc)
    for name in desc['frames']:
        desc['frames'][name]['xyz'] = [0.0, 0.0, 0.0]
    code, lines = _check(write_description(desc, solo12_ft, tmp_path / 'c.yaml'), bag, capsys)
    assert code == 1
    assert sum('sole_frame' in line and '16 mm' in line for line in lines) == 4, lines
