"""Tests of legid describe's generator on robots we did not design (example-robot-data) and
on small URDFs: the result loads, with the leg joints, mirrored groups and soles."""

import numpy as np
import pinocchio as pin
import pytest
import yaml

from legid_ros.core.description.generate import describe_urdf
from legid_ros.core.description.mirror import find_groups, mirrored
from legid_ros.core.description.writer import description_yaml
from legid_ros.core.robot import load_robot

TALOS = 'talos_data/robots/talos_reduced_box.urdf'
TALOS_UPPER = ('torso_1_joint', 'torso_2_joint', 'head_1_joint', 'head_2_joint',
               'gripper_left_joint', 'gripper_right_joint',
               *[f'arm_{s}_{k}_joint' for s in ('left', 'right') for k in range(1, 8)])


def _load(tmp_path, result):
    path = tmp_path / 'desc.yaml'
    path.write_text(description_yaml(result, 'test'))
    return load_robot(path), yaml.safe_load(path.read_text())


def test_talos_with_locked_upper_body_loads_with_twelve_leg_joints(erd, tmp_path):
    """Talos with its 20 upper-body joints locked: 12 leg joints, the whole mass kept, soles
    0.21 x 0.13 m from the foot collision boxes, every leg link in a left/right group."""
    result = describe_urdf(erd / TALOS, ['leg_left_6_link', 'leg_right_6_link'],
                           {j: 0.0 for j in TALOS_UPPER})
    robot, desc = _load(tmp_path, result)
    full = pin.buildModelFromUrdf(str(erd / TALOS))
    assert len(robot.actuated_joint_names) == 12
    assert all(n.startswith('leg_') for n in robot.actuated_joint_names)
    assert robot.total_mass == pytest.approx(sum(i.mass for i in full.inertias))
    assert set(robot.feet) == {'left', 'right'}
    for foot in robot.feet.values():
        assert foot.contact == 'flat' and foot.sole_size == pytest.approx([0.21, 0.13])
    data = robot.new_data()
    pin.framesForwardKinematics(robot.model, data, robot.neutral())
    ankle = data.oMf[robot.frame_id('leg_left_6_link')].translation
    assert data.oMf[robot.frame_id('left_sole')].translation == pytest.approx(
        ankle + [0.0, 0.0, -0.11])
    leg_groups = [g for g in robot.link_groups.values() if g.name != 'trunk']
    assert len(leg_groups) == 6
    assert all(len(g.links) == 2 and {mirrored(x).side for x in g.links} == {'left', 'right'}
               for g in leg_groups)
    assert desc['legs']['left']['joints'] == [f'leg_left_{k}_joint' for k in range(1, 7)]
    assert robot.imu_frame == 'imu_link'


def test_solo12_point_feet_and_four_leg_groups(erd, tmp_path):
    """Solo12: 12 joints, four point feet at the bottom of the foot meshes, and groups of the
    four legs' shoulder, upper and lower legs."""
    result = describe_urdf(erd / 'solo_description/robots/solo12.urdf',
                           ['FL_FOOT', 'FR_FOOT', 'HL_FOOT', 'HR_FOOT'])
    robot, desc = _load(tmp_path, result)
    assert len(robot.actuated_joint_names) == 12
    assert set(robot.feet) == {'lf', 'rf', 'lh', 'rh'}
    assert all(f.contact == 'point' for f in robot.feet.values())
    sole = desc['frames']['lf_sole']['xyz']
    assert sole[:2] == pytest.approx([0.0, 0.0]) and -0.03 < sole[2] < -0.005
    groups = {g.name: g.links for g in robot.link_groups.values()}
    assert groups['upper_leg'] == ['FL_UPPER_LEG', 'FR_UPPER_LEG', 'HL_UPPER_LEG',
                                   'HR_UPPER_LEG']
    assert {'trunk', 'shoulder', 'lower_leg'} <= set(groups)


@pytest.mark.parametrize('names, groups', [
    (['l_thigh', 'r_thigh', 'trunk'], {'thigh': {'left': 'l_thigh', 'right': 'r_thigh'}}),
    (['LF_SHANK', 'RF_SHANK', 'LH_SHANK', 'RH_SHANK'],
     {'shank': {'lf': 'LF_SHANK', 'rf': 'RF_SHANK', 'lh': 'LH_SHANK', 'rh': 'RH_SHANK'}}),
    (['left_knee_link', 'right_knee_link'],
     {'knee': {'left': 'left_knee_link', 'right': 'right_knee_link'}}),
    (['leftKnee', 'rightKnee'], {'knee': {'left': 'leftKnee', 'right': 'rightKnee'}}),
    (['l_thigh', 'x_thigh'], {}),
])
def test_mirrored_names_make_groups(names, groups):
    """Mirrored names (left/right, l_/r_, LF/RF/LH/RH, camelCase) group; unpaired do not."""
    assert find_groups(names)[0] == groups


PRIMS = """<robot name="p">
  <link name="base"><inertial><mass value="5"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1"
    iyz="0" izz="0.1"/></inertial></link>
  <joint name="l_hip" type="revolute"><parent link="base"/><child link="l_leg"/>
    <origin xyz="0 0.1 0"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <link name="l_leg"><inertial><origin xyz="0 0 {com}"/><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.001"/></inertial>
    <collision><origin xyz="0 0 -0.2"/><geometry><cylinder radius="0.03" length="0.4"/>
    </geometry></collision></link>
  <joint name="r_hip" type="revolute"><parent link="base"/><child link="r_leg"/>
    <origin xyz="0 -0.1 0"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <link name="r_leg"><inertial><origin xyz="0 0 {com}"/><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.001"/></inertial>
    <collision><origin xyz="0 0 -0.2"/><geometry><cylinder radius="0.03" length="0.4"/>
    </geometry></collision></link>
</robot>
"""


@pytest.mark.parametrize('com, written', [(-0.2, True), (-0.05, False)])
def test_primitives_from_collision_shapes_only_when_they_match_the_cad_com(tmp_path, com,
                                                                           written):
    """Collision cylinders become primitive bodies when they put the COM where the CAD has
    it, and are left out (with a warning) when they would move it by 15 cm."""
    urdf = tmp_path / 'p.urdf'
    urdf.write_text(PRIMS.format(com=com))
    result = describe_urdf(urdf, ['l_leg', 'r_leg'])
    prims = result.description.get('primitives', {})
    assert ('l_leg' in prims) == written
    if written:
        assert prims['l_leg'] == [{'type': 'cylinder', 'radius': 0.03, 'length': 0.4,
                                   'xyz': [0.0, 0.0, -0.2]}]
    else:
        assert any('l_leg' in w and 'not written' in w for w in result.warnings)
    group = result.description['link_groups']['leg']
    assert group['links'] == ['l_leg', 'r_leg']
    assert group['lc_cad_m'] == pytest.approx(-com) and group['mass_cad_kg'] == 1.0
    assert np.allclose(group['axis'], [0, 0, -1])


def test_sphere_feet_are_point_feet_at_their_lowest_point(erd):
    """ANYmal's spherical feet (r = 31 mm, centre 23.25 mm above the foot frame) are point
    feet whose contact frame is at the sphere's bottom; legs group as LF/RF/LH/RH."""
    result = describe_urdf(erd / 'anymal_b_simple_description/robots/anymal.urdf',
                           ['LF_FOOT', 'RF_FOOT', 'LH_FOOT', 'RH_FOOT'])
    desc = result.description
    assert {f['contact'] for f in desc['feet'].values()} == {'point'}
    assert desc['frames']['lf_sole']['xyz'] == pytest.approx([0.0, 0.0, 0.02325 - 0.031])
    assert desc['link_groups']['thigh']['links'] == ['LF_THIGH', 'RF_THIGH', 'LH_THIGH',
                                                     'RH_THIGH']


@pytest.mark.parametrize('urdf, feet, lock', [
    (TALOS, ['leg_left_6_link', 'leg_right_6_link'], TALOS_UPPER),
    ('solo_description/robots/solo12.urdf', ['FL_FOOT', 'FR_FOOT', 'HL_FOOT', 'HR_FOOT'], ()),
])
def test_mjcf_of_a_robot_is_described_like_its_urdf(erd, mjcf_of, tmp_path, urdf, feet, lock):
    """MuJoCo's MJCF of Talos (box soles) and Solo12 (mesh feet) gives the URDF's
    description: feet, contact kind, sole frames to 1 um, link groups, CAD masses to MuJoCo's
    printed digits, and a robot of the same total mass that loads from the MJCF."""
    mjcf = mjcf_of(erd / urdf)
    want = describe_urdf(erd / urdf, feet, {j: 0.0 for j in lock}).description
    result = describe_urdf(mjcf, feet, {j: 0.0 for j in lock})
    got = result.description
    assert got['feet'] == want['feet']
    for name, frame in want['frames'].items():
        assert got['frames'][name]['parent'] == frame['parent']
        assert got['frames'][name]['xyz'] == pytest.approx(frame['xyz'], abs=1e-6)
    assert got['link_groups'].keys() == want['link_groups'].keys()
    for name, group in want['link_groups'].items():
        assert got['link_groups'][name]['links'] == group['links']
        assert got['link_groups'][name]['mass_cad_kg'] == pytest.approx(group['mass_cad_kg'],
                                                                         abs=2e-5)
    robot, desc = _load(tmp_path, result)
    assert desc['urdf'] == str(mjcf.resolve())
    assert robot.total_mass == pytest.approx(
        sum(i.mass for i in pin.buildModelFromUrdf(str(erd / urdf)).inertias), abs=1e-4)


def test_mjcf_sphere_feet_are_point_contacts_at_the_sphere_bottom(tmp_path):
    """A two-legged MJCF with 2 cm sphere feet 1 cm below the foot bodies: point feet whose
    contact frame is at the sphere's bottom, 3 cm below the foot body."""
    legs = ''.join(f"""<body name="{s}_leg" pos="0 {y} -0.1"><joint name="{s}_hip" axis="0 1 0"/>
      <inertial pos="0 0 -0.1" mass="1" diaginertia="0.01 0.01 0.001"/>
      <body name="{s}_foot" pos="0 0 -0.2"><joint name="{s}_knee" axis="0 1 0"/>
        <inertial pos="0 0 0" mass="0.2" diaginertia="0.001 0.001 0.001"/>
        <geom type="sphere" size="0.02" pos="0 0 -0.01"/></body></body>"""
                   for s, y in (('l', 0.1), ('r', -0.1)))
    path = tmp_path / 'walker.xml'
    path.write_text(f"""<mujoco><worldbody><body name="trunk"><freejoint/>
      <inertial pos="0 0 0" mass="5" diaginertia="0.1 0.1 0.1"/>{legs}</body></worldbody>
      </mujoco>""")
    result = describe_urdf(path, ['l_foot', 'r_foot'])
    desc = result.description
    assert {f['contact'] for f in desc['feet'].values()} == {'point'}
    assert desc['frames']['left_sole'] == {'parent': 'l_foot', 'xyz': [0.0, 0.0, -0.03]}
    robot, _ = _load(tmp_path, result)
    assert robot.total_mass == pytest.approx(7.4)
    assert robot.actuated_joint_names == ['l_hip', 'l_knee', 'r_hip', 'r_knee']
