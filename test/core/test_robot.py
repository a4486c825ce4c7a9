"""Tests of legid_ros.core.robot: loading the built-in robots."""

import shutil
import subprocess

import numpy as np
import pinocchio as pin
import pytest

from legid_ros.core import paths
from legid_ros.core.errors import RobotDescriptionError
from legid_ros.core.robot import load_robot

ROBOTS = ['biped', 'quadruped', 'leg3']


@pytest.mark.parametrize('name', ROBOTS)
@pytest.mark.parametrize('floating', [True, False])
def test_robots_load_with_and_without_free_flyer(name, floating):
    """Every built-in robot loads in pinocchio, with the expected root joint and DOF count."""
    robot = load_robot(name, floating_base=floating)
    nj = {'biped': 12, 'quadruped': 20, 'leg3': 3}[name]
    assert robot.model.nv == nj + (6 if floating else 0)
    assert len(robot.actuated_joint_names) == nj
    assert (robot.model.names[1] == 'root_joint') == floating
    data = robot.new_data()
    q = pin.randomConfiguration(robot.model) if not floating else robot.neutral()
    pin.forwardKinematics(robot.model, data, q)
    assert np.all(np.isfinite(data.oMi[-1].translation))


def test_biped_matches_gorobot_table1_dimensions():
    """The biped's thigh, shank, ankle height and sole match Wu & Gao 2021's Table 1."""
    robot = load_robot('biped')
    model, data = robot.model, robot.new_data()
    pin.framesForwardKinematics(model, data, robot.neutral())

    def pos(frame):
        return data.oMf[robot.frame_id(frame)].translation

    knee = data.oMi[model.getJointId('l_knee')].translation
    hip = data.oMi[model.getJointId('l_hip_pitch')].translation
    ankle = data.oMi[model.getJointId('l_ankle_pitch')].translation
    assert np.linalg.norm(knee - hip) == pytest.approx(0.220)
    assert np.linalg.norm(ankle - knee) == pytest.approx(0.189)
    assert ankle[2] - pos('l_sole')[2] == pytest.approx(0.104)
    corners = np.array([pos(f) for f in robot.feet['left'].sensor_frames])
    assert np.ptp(corners[:, 0]) == pytest.approx(0.125)
    assert np.ptp(corners[:, 1]) == pytest.approx(0.100)
    masses = {n: model.inertias[model.getJointId(j)].mass for n, j in
              (('trunk', 'root_joint'), ('thigh', 'l_hip_pitch'), ('shank', 'l_knee'),
               ('foot', 'l_ankle_roll'))}
    assert masses == pytest.approx({'trunk': 13.87, 'thigh': 3.67, 'shank': 3.19, 'foot': 2.41})
    com_thigh = model.inertias[model.getJointId('l_hip_pitch')].lever
    assert com_thigh == pytest.approx([0, 0, -0.1919])


def test_quadruped_knee_and_ankle_ranges_inside_zero_pi():
    """The quadruped's knee and ankle ranges lie inside (0, pi), as the EJM paper requires."""
    robot = load_robot('quadruped', floating_base=False)
    model = robot.model
    for leg in ('lf', 'rf', 'lh', 'rh'):
        for j in ('knee', 'ankle_pitch'):
            idx = model.joints[model.getJointId(f'{leg}_{j}')].idx_q
            assert 0 < model.lowerPositionLimit[idx] < model.upperPositionLimit[idx] < np.pi


def test_unknown_robot_gives_clear_error():
    """An unknown robot name raises RobotDescriptionError listing the built-in robots."""
    with pytest.raises(RobotDescriptionError, match='biped'):
        load_robot('no_such_robot')


def test_bad_description_yaml(tmp_path):
    """A description whose URDF is missing, or with a bad frame name, is rejected clearly."""
    bad = tmp_path / 'bad.yaml'
    bad.write_text('robot: bad\nurdf: nowhere.urdf\n')
    with pytest.raises(RobotDescriptionError, match='URDF not found'):
        load_robot(bad)
    wrong_frame = tmp_path / 'wrong.yaml'
    wrong_frame.write_text(f'robot: w\nurdf: {paths.urdf_path("biped.urdf")}\n'
                           'feet:\n  left: {link: l_foot, sole_frame: no_frame}\n')
    with pytest.raises(RobotDescriptionError, match='no_frame'):
        load_robot(wrong_frame)


def test_ankle_ft_topic_explicit_default_and_null(tmp_path):
    """ankle_ft_topic: the biped's explicit names, <wrench_topic>_raw by default, None if null."""
    biped = load_robot('biped')
    assert biped.feet['left'].ankle_ft_topic == 'left_foot/wrench_raw'
    assert biped.feet['right'].ankle_ft_topic == 'right_foot/wrench_raw'
    desc = tmp_path / 'feet.yaml'
    desc.write_text(f'robot: f\nurdf: {paths.urdf_path("biped.urdf")}\nfeet:\n'
                    '  left: {link: l_foot, wrench_topic: lf/ft}\n'
                    '  right: {link: r_foot, ankle_ft_topic: null}\n')
    feet = load_robot(desc).feet
    assert feet['left'].ankle_ft_topic == 'lf/ft_raw'
    assert feet['right'].wrench_topic == 'right_foot/wrench'
    assert feet['right'].ankle_ft_topic is None


@pytest.mark.parametrize('name', ROBOTS)
def test_check_urdf_accepts_every_urdf(name):
    """Debian's check_urdf (liburdfdom-tools, installed by the Makefile) parses each URDF."""
    exe = shutil.which('check_urdf', path='/usr/bin') or shutil.which('check_urdf')
    assert exe, 'check_urdf missing: run make (it installs liburdfdom-tools)'
    out = subprocess.run([exe, str(paths.urdf_path(f'{name}.urdf'))], capture_output=True,
                         text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert 'Successfully Parsed XML' in out.stdout


@pytest.mark.parametrize('name, feet', [('talos', 2), ('solo12', 4)])
def test_described_robots_load_by_name(name, feet):
    """The robots of config/robots/ (example-robot-data URDFs) load by name: 12 leg joints,
    their feet; an unknown name lists them."""
    from legid_ros.core.description.resources import package_dir
    if package_dir('example-robot-data') is None:
        pytest.skip('example-robot-data is not installed')
    robot = load_robot(name)
    assert len(robot.actuated_joint_names) == 12 and len(robot.feet) == feet
    with pytest.raises(RobotDescriptionError, match=name):
        load_robot('no_such_robot')
