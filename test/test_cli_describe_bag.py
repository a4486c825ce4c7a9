"""legid describe --bag on a Solo12 bag recorded with world-axes forces on other topics and an
IMU on /imu/data mounted rotated, its reference yawed: described without rewriting the bag,
identified as the canonical bag is."""

import argparse
import copy

import numpy as np
import pytest
import yaml

from legid_ros.bag.recording_io import read_bag, write_bag
from legid_ros.commands import describe
from legid_ros.core.identification.api import identify
from legid_ros.core.robot import load_robot
from legid_ros.core.sim.conventions import Readout, read_out

PATHS = {}  # the bag and the description the module fixture wrote


def _describe(robot, bag, out, imu_rpy=None):
    feet = ','.join(f.link for f in robot.feet.values())
    args = argparse.Namespace(urdf=str(robot.urdf_path), feet=feet, lock=[], name='solo12',
                              corner_sensors=False, fsr_topic=None, bag=bag, frame=[],
                              sensor_xyz=None, sensor_name=None,
                              imu_rpy=imu_rpy, out=str(out),
                              foot_radius=next((f.radius for f in robot.feet.values()
                                                if f.radius), None))  # the user's feet
    assert describe.run(args) == 0
    return load_robot(out)


@pytest.fixture(scope='module')
def bags(solo12, solo12_run, tmp_path_factory):
    """(canonical robot, canonical recording read back, described robot, its recording)."""
    root = tmp_path_factory.mktemp('describe_bag')
    desc = copy.deepcopy(solo12.description)
    desc['urdf'] = str(solo12.urdf_path)
    for f in desc['feet'].values():
        f['ft_frame'] = f['link']
    (root / 'canon.yaml').write_text(yaml.safe_dump(desc))
    canon = load_robot(root / 'canon.yaml')
    ro = Readout(imu_topic='/imu/data', imu_frame_id='imu_link', imu_rpy=(0.1, -0.2, 1.5),
                 imu_heading_rad=0.7, force_topic='feet/{foot}/force',
                 force_expressed_in='world')
    (root / 'setup.yaml').write_text(yaml.safe_dump({**ro.description(canon),
                                                     'urdf': str(solo12.urdf_path)}))
    setup = load_robot(root / 'setup.yaml')
    bag = write_bag(read_out(solo12_run, canon, ro), root / 'setup_bag', robot=setup)
    ref = write_bag(solo12_run, root / 'canon_bag', robot=canon)
    robot = _describe(solo12, str(bag), root / 'described.yaml', '0.1,-0.2,1.5')
    PATHS.update(bag=str(bag), description=str(root / 'described.yaml'))
    return canon, read_bag(ref, canon), robot, read_bag(bag, robot)


def test_describe_bag_maps_the_streams(bags):
    """The description names /imu/data with its mounting and the IMU reference's heading
    (estimated from the moment balance at rest, within 1 deg of the setup's 0.7 rad), each
    foot's /feet/<foot>/force in world axes, and declares force_sensing: wrench."""
    _, _, robot, _ = bags
    assert robot.imu.topic == '/imu/data'
    assert np.allclose(robot.imu.rpy, (0.1, -0.2, 1.5))
    assert abs(robot.imu.heading_rad - 0.7) < np.radians(1.0)
    for name, foot in robot.feet.items():
        assert foot.wrench_topic == f'/feet/{name}/force'
        assert foot.expressed_in == 'world'
    assert robot.description['force_sensing'] == 'wrench'


def test_describe_bag_estimates_an_unnamed_imu_mounting_from_the_trunk_s_tilts(bags, tmp_path,
                                                                             capsys):
    """Without --imu-rpy the same bag's IMU mounting (0.1, -0.2, 1.5 rad) is estimated from
    how its up follows the feet's ground normal as the trunk tilts: within 0.5 deg, said in a
    warning; the heading then within 1 deg of 0.7 rad, and `legid check` finds nothing."""
    from scipy.spatial.transform import Rotation

    from legid_ros.commands import check

    solo12 = bags[0]
    robot = _describe(solo12, PATHS['bag'], tmp_path / 'd.yaml')
    assert 'imu.rpy' in capsys.readouterr().err
    off = Rotation.from_euler('xyz', robot.imu.rpy).inv() * Rotation.from_euler(
        'xyz', (0.1, -0.2, 1.5))
    assert np.degrees(off.magnitude()) < 0.5
    assert abs(robot.imu.heading_rad - 0.7) < np.radians(1.0)
    assert check.run(argparse.Namespace(robot=str(tmp_path / 'd.yaml'), bag=PATHS['bag'],
                                        zmp_source='auto')) == 0, capsys.readouterr().out


def test_legid_identify_reads_the_bag_as_described(bags, tmp_path, capsys):
    """legid identify on the bag as recorded (IMU on /imu/data, no rewrite) with the written
    description: exit 0, no sample dropped for a missing IMU, and the preparation the contacts
    chose said and written (point feet: the base from the contacts; --transition-s auto: 0.5 s
    around changes)."""
    from legid_ros.cli import main

    assert bags
    code = main(['identify', '--robot', PATHS['description'], '--bag', PATHS['bag'],
                 '--out', str(tmp_path / 'out'), '--quiet', '--transition-s', 'auto'])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    assert 'non-finite imu' not in out.out + out.err
    assert 'samples: base state from every stance contact and the IMU (point feet)' in out.out
    import yaml
    doc = yaml.safe_load((tmp_path / 'out' / 'parameters.yaml').read_text())
    assert doc['prepare']['base'] == 'contacts' and doc['prepare']['transition_s'] == 0.5
    assert doc['preparation_choice']['kept_share'] > 0.5


@pytest.mark.parametrize('method, opts', [('floating_qp', {}), ('sdp', {'rows': 'floating'})])
def test_floating_rows_identify_as_the_canonical_bag(bags, method, opts):
    """Floating-base rows give the trunk mass within 0.5 % of the canonical bag's, and every
    link mass within 0.5 % of it or 1 % of the robot's leg-link scale (0.5 g on 50 g
    links, where 2 mrad of heading estimate moves a few tenths of a gram)."""
    canon, ref, robot, rec = bags
    a = identify(ref, canon, method, **opts)
    b = identify(rec, robot, method, **opts)
    ma, mb = a.pi[0::10], b.pi[0::10]
    assert abs(mb[0] / ma[0] - 1) < 0.005
    assert np.all(np.abs(mb - ma) < np.maximum(0.005 * ma, 5e-4))


def test_zmp_rows_identify_as_the_canonical_bag(bags):
    """zmp_newton's reduced parameters match the canonical bag's within 0.5 % (of the value,
    or of the parameter's scale in the uncertainty core when smaller: 2 cm for an axial COM)."""
    canon, ref, robot, rec = bags
    a = identify(ref, canon, 'zmp_newton')
    b = identify(rec, robot, 'zmp_newton')
    xa, xb = dict(zip(a.names, a.x)), dict(zip(b.names, b.x))
    scales = dict(zip(a.uncertainty.names, a.uncertainty.scales))  # the core's own scales
    assert set(xa) == set(xb)
    for name in xa:
        assert abs(xa[name] - xb[name]) < 0.005 * max(abs(xa[name]), scales[name]), name


def test_a_topic_pattern_a_live_node_refuses_is_refused(solo12, tmp_path):
    """--fsr-topic '{foot}_foot/fsr/{k}' (a token starting with a digit) is refused."""
    from legid_ros.core.errors import BadInputError

    args = argparse.Namespace(urdf=str(solo12.urdf_path), feet='FL_FOOT', lock=[], name=None,
                              corner_sensors=True, fsr_topic='{foot}_foot/fsr/{k}', bag=None,
                              frame=[], sensor_xyz=None, sensor_name=None,
                              imu_rpy=None, out=str(tmp_path / 'x.yaml'))
    with pytest.raises(BadInputError, match='digit'):
        describe.run(args)


def test_force_topics_that_name_no_foot_are_mapped_by_which_foot_is_loaded_when(
        solo12, solo12_run, tmp_path):
    """Force topics named contact/wrench_<k> (no foot in the name, k not in the feet's order
    of describe) are mapped to the feet by which foot is lifted when: as the setup's."""
    import yaml as _yaml

    desc = copy.deepcopy(solo12.description)
    desc['urdf'] = str(solo12.urdf_path)
    for f in desc['feet'].values():
        f['ft_frame'] = f['link']
    order = ['rh', 'lf', 'lh', 'rf']  # the setup's own numbering
    desc['feet'] = {name: desc['feet'][name] for name in order}
    (tmp_path / 'setup.yaml').write_text(_yaml.safe_dump(desc, sort_keys=False))
    setup = load_robot(tmp_path / 'setup.yaml')
    ro = Readout(force_topic='contact/wrench_{index}')
    (tmp_path / 'named.yaml').write_text(_yaml.safe_dump({**ro.description(setup),
                                                         'urdf': str(solo12.urdf_path)},
                                                        sort_keys=False))
    named = load_robot(tmp_path / 'named.yaml')
    bag = write_bag(read_out(solo12_run, setup, ro), tmp_path / 'bag', robot=named)
    robot = _describe(solo12, str(bag), tmp_path / 'described.yaml')
    assert list(named.feet) == order and list(robot.feet) != order  # numberings differ
    for name, foot in robot.feet.items():
        assert foot.wrench_topic == '/' + named.feet[name].wrench_topic, name


def test_describe_bag_maps_joint_names_the_bag_gives_otherwise(solo12, solo12_run, tmp_path):
    """A bag naming the joints solo/<urdf name, lower case>_joint, in another order in every
    message: describe --bag maps each to its URDF joint (joint_name_map), one given by
    --joint-map where no name matches; the described robot reads the bag."""
    from legid_ros.core.sim.conventions import message_plan

    run = solo12_run.slice(0, 400)
    ro = Readout(joint_name_format='solo/{lower}_joint', shuffle_joints=True)
    rec = read_out(run, solo12, ro)
    rec.joint_names[0] = 'front_left_abduction'
    (tmp_path / 'setup.yaml').write_text(yaml.safe_dump({**ro.description(solo12),
                                                         'urdf': str(solo12.urdf_path)}))
    bag = write_bag(rec, tmp_path / 'bag', robot=solo12,
                    **message_plan(ro, rec.n, len(rec.joint_names)))
    args = argparse.Namespace(urdf=str(solo12.urdf_path), feet=','.join(
        f.link for f in solo12.feet.values()), lock=[], name='solo12', corner_sensors=False,
        fsr_topic=None, bag=str(bag), frame=[], sensor_xyz=None, sensor_name=None,
        imu_rpy=None, joint_map=[f'front_left_abduction={run.joint_names[0]}'],
        out=str(tmp_path / 'd.yaml'))
    assert describe.run(args) == 0
    robot = load_robot(tmp_path / 'd.yaml')
    assert sorted(robot.actuated_joint_names) == sorted(rec.joint_names)
    np.testing.assert_array_equal(read_bag(bag, robot).q, rec.q)


def test_describe_bag_estimates_a_humanoid_s_imu_yaw(talos, talos_run, tmp_path, capsys):
    """Talos's IMU read out turned 0.35 rad about z, described from the bag without --imu-rpy
    (flat feet: the soles give the ground normal): yaw within 1 deg, roll and pitch within
    0.5 deg, and `legid check` finds nothing."""
    import math

    from scipy.spatial.transform import Rotation

    from legid_ros.commands import check

    ro = Readout(imu_rpy=(0.0, 0.0, 0.35))
    (tmp_path / 'setup.yaml').write_text(yaml.safe_dump({**ro.description(talos),
                                                         'urdf': str(talos.urdf_path)}))
    bag = str(write_bag(read_out(talos_run, talos, ro), tmp_path / 'bag',
                        robot=load_robot(tmp_path / 'setup.yaml')))
    args = argparse.Namespace(
        urdf=str(talos.urdf_path), feet=','.join(f.link for f in talos.feet.values()),
        lock=[f'{j}={float(np.ravel(v)[0]):g}' for j, v in talos.locked_joints.items()],
        name='talos', corner_sensors=True, fsr_topic=None, sensor_xyz=None, sensor_name=None,
        frame=[], bag=bag, imu_rpy=None, joint_map=[], out=str(tmp_path / 'd.yaml'),
        foot_radius=None)
    assert describe.run(args) == 0
    rpy = load_robot(tmp_path / 'd.yaml').imu.rpy
    assert abs(rpy[2] - 0.35) < math.radians(1)
    off = Rotation.from_euler('xyz', rpy).inv() * Rotation.from_euler('xyz', (0, 0, rpy[2]))
    assert np.degrees(off.magnitude()) < 0.5
    capsys.readouterr()
    assert check.run(argparse.Namespace(robot=str(tmp_path / 'd.yaml'), bag=bag,
                                        zmp_source='auto')) == 0, capsys.readouterr().out


def test_an_estimated_mounting_near_right_angles_is_taken_at_right_angles(solo12, solo12_run,
                                                                          tmp_path, capsys):
    """An IMU turned 90 deg about z, described from the bag without --imu-rpy: the estimate
    from the trunk's tilts (a few tenths of a degree off) is written as the right-angle
    mounting it is nearest, to 1e-5 rad, and the warning says so."""
    ro = Readout(imu_rpy=(0.0, 0.0, np.pi / 2))
    (tmp_path / 'setup.yaml').write_text(yaml.safe_dump({**ro.description(solo12),
                                                         'urdf': str(solo12.urdf_path)}))
    bag = write_bag(read_out(solo12_run, solo12, ro), tmp_path / 'bag',
                    robot=load_robot(tmp_path / 'setup.yaml'))
    robot = _describe(solo12, str(bag), tmp_path / 'd.yaml')
    assert np.allclose(robot.imu.rpy, (0.0, 0.0, np.pi / 2), atol=1e-5)
    assert 'right angles' in capsys.readouterr().err
