"""Tests of ``legid describe`` and ``legid check`` (in process, through legid_ros.cli.main)."""

import sys
from pathlib import Path

import pytest
import yaml

from legid_ros.cli import main
from legid_ros.core import paths
from legid_ros.core.description.hand_edits import hand_edited_lines
from legid_ros.core.description.resources import package_dir
from legid_ros.core.robot import load_robot

sys.path.insert(0, str(Path(__file__).resolve().parent / 'bag'))
from bag_edits import restamp  # noqa: E402

UPPER = ['torso_*=0', 'arm_*=0', 'head_*=0', 'gripper_*=0']


@pytest.fixture(scope='module')
def erd():
    """example-robot-data's robots directory."""
    root = package_dir('example-robot-data')
    if root is None:
        pytest.skip('example-robot-data is not installed')
    return root / 'robots'


@pytest.fixture(scope='module')
def sim_bag(tmp_path_factory):
    """A 2-s biped recording of ``legid simulate``."""
    out = tmp_path_factory.mktemp('bag') / 'run.mcap'
    assert main(['simulate', '--robot', 'biped', '--duration', '2', '--rate', '200',
                 '--out', str(out)]) == 0
    return out.with_suffix('')


@pytest.mark.parametrize('urdf, feet, locks, leg_joints', [
    ('talos_data/robots/talos_reduced_box.urdf', 'leg_left_6_link,leg_right_6_link', UPPER,
     12),
    ('solo_description/robots/solo12.urdf', 'FL_FOOT,FR_FOOT,HL_FOOT,HR_FOOT', [], 12),
])
def test_describe_writes_a_description_that_loads_without_edits(erd, tmp_path, capsys, urdf,
                                                                 feet, locks, leg_joints):
    """legid describe on Talos (upper body locked) and Solo12 writes a description that
    load_robot accepts as written (0 hand-edited lines, URDF untouched), with the leg joints
    and mirrored groups."""
    out = tmp_path / 'robot.yaml'
    args = ['describe', '--urdf', str(erd / urdf), '--feet', feet, '--out', str(out)]
    for lock in locks:
        args += ['--lock', lock]
    before = (erd / urdf).read_bytes()
    assert main(args) == 0
    assert (erd / urdf).read_bytes() == before
    assert 'wrote' in capsys.readouterr().out
    text = out.read_text()
    robot = load_robot(out)
    assert hand_edited_lines(text, out.read_text()) == 0
    assert len(robot.actuated_joint_names) == leg_joints
    assert len(robot.locked_joints) == (20 if locks else 0)
    assert any(len(g.links) >= 2 for g in robot.link_groups.values())


def test_describe_foot_radius_goes_to_every_point_foot_and_its_command(erd, tmp_path, capsys):
    """--foot-radius 0.016 gives each Solo12 point foot radius_m 0.016 (recorded in the
    command line the file starts with); a negative radius is refused in one line."""
    out = tmp_path / 'solo.yaml'
    urdf = str(erd / 'solo_description/robots/solo12.urdf')
    feet = 'FL_FOOT,FR_FOOT,HL_FOOT,HR_FOOT'
    assert main(['describe', '--urdf', urdf, '--feet', feet, '--foot-radius', '0.016',
                 '--out', str(out)]) == 0
    robot = load_robot(out)
    assert [f.radius for f in robot.feet.values()] == [0.016] * 4
    assert '--foot-radius 0.016' in out.read_text().splitlines()[0]
    capsys.readouterr()
    assert main(['describe', '--urdf', urdf, '--feet', feet, '--foot-radius', '-1']) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and '--foot-radius' in err[0]


def test_describe_lock_errors_are_one_line(erd, capsys):
    """A --lock matching no joint, or without a value, ends in one error line (exit 2)."""
    urdf = str(erd / 'solo_description/robots/solo12.urdf')
    assert main(['describe', '--urdf', urdf, '--feet', 'FL_FOOT', '--lock', 'nope=0']) == 2
    assert main(['describe', '--urdf', urdf, '--feet', 'FL_FOOT', '--lock', 'FL_HAA']) == 2
    assert main(['describe', '--urdf', urdf, '--feet', 'NO_FOOT']) == 2
    err = capsys.readouterr().err
    assert 'no URDF joint matches' in err and 'JOINT=VALUE' in err and 'NO_FOOT' in err


def test_describe_mjcf_writes_a_description_of_the_mjcf(erd, mjcf_of, tmp_path, capsys):
    """legid describe --mjcf on MuJoCo's MJCF of Solo12: the description names the MJCF, its
    command line says --mjcf, and it loads with 12 joints and four point feet."""
    mjcf = mjcf_of(erd / 'solo_description/robots/solo12.urdf')
    out = tmp_path / 'solo.yaml'
    assert main(['describe', '--mjcf', str(mjcf), '--feet', 'FL_FOOT,FR_FOOT,HL_FOOT,HR_FOOT',
                 '--out', str(out)]) == 0
    robot = load_robot(out)
    assert robot.urdf_path == mjcf.resolve()
    assert f'legid describe --mjcf {mjcf.name}' in out.read_text()
    assert len(robot.actuated_joint_names) == 12
    assert [f.contact for f in robot.feet.values()] == ['point'] * 4


def test_describe_model_flag_must_match_the_file(erd, mjcf_of, capsys):
    """An MJCF given as --urdf (or a URDF as --mjcf) ends in one line naming the right flag
    (exit 2); --urdf and --mjcf together are refused by the parser."""
    urdf = erd / 'solo_description/robots/solo12.urdf'
    mjcf = str(mjcf_of(urdf))
    assert main(['describe', '--urdf', mjcf, '--feet', 'FL_FOOT']) == 2
    assert 'give it with --mjcf' in capsys.readouterr().err
    assert main(['describe', '--mjcf', str(urdf), '--feet', 'FL_FOOT']) == 2
    assert 'give it with --urdf' in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(['describe', '--urdf', str(urdf), '--mjcf', mjcf, '--feet', 'FL_FOOT'])


def test_check_passes_on_the_matching_description(sim_bag, capsys):
    """legid check on a simulated biped bag and the biped description: no problem, exit 0."""
    assert main(['check', '--robot', 'biped', '--bag', str(sim_bag)]) == 0
    assert capsys.readouterr().out.startswith('ok:')


def test_check_passes_on_a_described_biped(sim_bag, tmp_path, capsys):
    """A description written by legid describe from the biped URDF matches the biped bag."""
    out = tmp_path / 'biped.yaml'
    assert main(['describe', '--urdf', str(paths.urdf_path('biped.urdf')), '--feet',
                 'l_foot,r_foot', '--out', str(out)]) == 0
    assert main(['check', '--robot', str(out), '--bag', str(sim_bag)]) == 0, \
        capsys.readouterr().out


def test_check_reports_each_mismatch_on_its_own_line(sim_bag, tmp_path, capsys):
    """A description that disagrees with the bag (IMU frame, a joint locked that moves, a
    renamed joint, sole-sensor topics, masses) gets one line per problem and exit 1."""
    desc = yaml.safe_load(paths.config_path('biped.yaml').read_text())
    desc['urdf'] = str(paths.urdf_path('biped.urdf'))
    desc['imu_frame'] = 'trunk'
    desc['joint_name_map'] = {'LKNEE': 'l_knee'}
    desc['frames'] = {'payload': {'parent': 'trunk', 'xyz': [0, 0, 0]}}
    right = {k: v for k, v in desc['feet']['right'].items() if k != 'sensor_frames'}
    right['force_sensors'] = [{'topic': f'right_foot/fsr/{k}', 'frame': f}
                              for k, f in enumerate(['r_sole_fl', 'r_sole_fr', 'r_sole_rl',
                                                     'r_sole_rr'])]
    desc['feet']['right'] = right
    path = tmp_path / 'wrong.yaml'
    path.write_text(yaml.safe_dump(desc))
    assert main(['check', '--robot', str(path), '--bag', str(sim_bag)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert any("joint 'LKNEE'" in x and 'drop its joint_name_map entry' in x for x in lines)
    assert any("joint 'l_knee' in /joint_states" in x for x in lines)
    assert any("/imu has frame_id 'imu_link'" in x for x in lines)
    assert any('/right_foot/fsr/0 is not in the bag' in x for x in lines)
    assert not any('left_foot' in x for x in lines)


def test_check_reports_a_weight_the_contact_forces_do_not_carry(sim_bag, tmp_path, capsys):
    """A description whose trunk is 20 kg heavier than the robot the contact forces carry
    gets one line saying so."""
    desc = yaml.safe_load(paths.config_path('biped.yaml').read_text())
    urdf = paths.urdf_path('biped.urdf').read_text().replace(
        '<mass value="13.87"/>', '<mass value="33.87"/>')
    (tmp_path / 'heavy.urdf').write_text(urdf)
    desc['urdf'] = 'heavy.urdf'
    (tmp_path / 'heavy.yaml').write_text(yaml.safe_dump(desc))
    assert main(['check', '--robot', str(tmp_path / 'heavy.yaml'), '--bag', str(sim_bag)]) == 1
    out = capsys.readouterr().out
    assert 'the description weighs' in out and len(out.splitlines()) == 1


@pytest.mark.parametrize('name, joints, feet', [('talos', 12, {'left', 'right'}),
                                                ('solo12', 12, {'lf', 'rf', 'lh', 'rh'})])
def test_shipped_descriptions_are_describe_output_within_ten_hand_edits(erd, tmp_path, name,
                                                                         joints, feet):
    """config/robots/<robot>.yaml is what the command in its header writes, up to at most 10
    hand-edited lines (description_hand_edited_lines), and loads with its leg joints."""
    import shlex

    path = paths.share_dir() / 'config' / 'robots' / f'{name}.yaml'
    shipped = path.read_text()
    command = shlex.split(shipped.splitlines()[0].split('`')[1])
    assert command[:2] == ['legid', 'describe']
    args = command[1:]
    i = args.index('--urdf') + 1
    args[i] = str(next(erd.rglob(args[i])))
    out = tmp_path / 'fresh.yaml'
    assert main(args + ['--out', str(out)]) == 0
    assert hand_edited_lines(out.read_text(), shipped) <= 10
    robot = load_robot(path)
    assert len(robot.actuated_joint_names) == joints and set(robot.feet) == feet


def test_check_names_streams_stamped_from_another_clock(sim_bag, tmp_path, capsys):
    """An IMU stamped 0 and a foot wrench stamped 1000 s ahead of the joint states (checked
    with the wrenches as the force sensing): one line each naming the topic, the offset and
    the fix; identify reads them by receive time."""
    out = tmp_path / 'other_clock'
    restamp(sim_bag, out, {'/imu': None, '/left_foot/wrench': 1000 * 10 ** 9})
    assert main(['check', '--robot', 'biped', '--bag', str(out), '--zmp-source', 'wrench']) == 1
    lines = capsys.readouterr().out.splitlines()
    assert any(x.startswith('/imu: header stamps are all 0') for x in lines), lines
    assert any(x.startswith("/left_foot/wrench: header stamps are +1e+03 s from the joint "
                            "states' clock") and 'fix: stamp it' in x for x in lines), lines
    assert not any('right_foot' in x for x in lines)
    from legid_ros.bag.recording_io import read_bag
    from legid_ros.core.robot import load_robot
    back, ref = read_bag(out, load_robot('biped')), read_bag(sim_bag, load_robot('biped'))
    assert back.meta['stamps_from_receive_time'] == ['/imu', '/left_foot/wrench']
    assert abs(back.imu_acc - ref.imu_acc).max() < 1e-9


def test_check_names_joint_states_without_stamps(sim_bag, tmp_path, capsys):
    """Joint states stamped 0: one line saying so (the live buffer drops them); the other
    streams, stamped, are not judged against them."""
    out = tmp_path / 'no_js_stamps'
    restamp(sim_bag, out, {'/joint_states': None})
    assert main(['check', '--robot', 'biped', '--bag', str(out)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert [x for x in lines if 'header stamps' in x] == [next(
        x for x in lines if x.startswith('/joint_states: header stamps are all 0'))]
