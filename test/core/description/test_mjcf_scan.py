"""Tests of legid_ros.core.description.mjcf_scan: an MJCF's geoms as the URDF's shapes."""

import numpy as np
import pytest

from legid_ros.core.description.mjcf_scan import scan_mjcf
from legid_ros.core.description.urdf_scan import root_link, scan_model, scan_urdf
from legid_ros.core.errors import RobotDescriptionError

TALOS = 'talos_data/robots/talos_reduced_box.urdf'
SOLO = 'solo_description/robots/solo12.urdf'


def test_links_and_tree_of_talos_match_the_urdf(erd, mjcf_of):
    """Every URDF link is a body with the same parent link and the same root."""
    urdf = scan_urdf(erd / TALOS)
    mjcf = scan_model(mjcf_of(erd / TALOS))
    assert set(mjcf) == set(urdf)
    assert root_link(mjcf) == root_link(urdf) == 'base_link'
    assert all(mjcf[n].parent_link == urdf[n].parent_link for n in urdf)
    assert mjcf['left_sole_link'].joint_type == 'fixed'
    assert mjcf['leg_left_6_link'].parent_joint == 'leg_left_6_joint'


def test_talos_sole_box_keeps_its_size_and_pose(erd, mjcf_of):
    """The foot's collision box: 0.21 x 0.13 x 0.02 m, 0.1 m below the ankle, as in the URDF
    (MuJoCo stores half sizes)."""
    box = scan_mjcf(mjcf_of(erd / TALOS))['leg_left_6_link'].collisions
    assert [s.kind for s in box] == ['box']
    assert box[0].size == pytest.approx([0.21, 0.13, 0.02])
    assert box[0].pose.translation == pytest.approx([0.0, 0.0, -0.1])


def test_mesh_bounds_of_solo12_foot_match_the_stl(erd, mjcf_of):
    """Solo12's foot mesh (which MuJoCo moves to its principal axes) bounds the same box in the
    link frame as the STL file the URDF names, to 0.1 mm."""
    links = scan_urdf(erd / SOLO)
    mjcf = scan_mjcf(mjcf_of(erd / SOLO))
    for name in ('FL_FOOT', 'FL_LOWER_LEG'):
        want = links[name].collisions[0].corners(erd / 'solo_description/robots')
        got = mjcf[name].collisions[0].corners()
        assert got.min(axis=0) == pytest.approx(want.min(axis=0), abs=1e-4)
        assert got.max(axis=0) == pytest.approx(want.max(axis=0), abs=1e-4)


def test_sphere_capsule_and_visual_geoms(tmp_path):
    """A sphere keeps its radius, a capsule its radius and cylinder length (bounds include
    the caps), a geom that collides with nothing is a visual shape."""
    path = tmp_path / 'leg.xml'
    path.write_text("""<mujoco><worldbody><body name="base">
      <geom type="capsule" fromto="0 0 0 0 0 -0.2" size="0.02"/>
      <body name="foot" pos="0 0 -0.3"><joint name="knee" axis="0 1 0"/>
        <geom type="sphere" size="0.03" pos="0 0 -0.01"/>
        <geom type="box" size="0.1 0.1 0.1" contype="0" conaffinity="0"/>
      </body></body></worldbody></mujoco>""")
    links = scan_mjcf(path)
    capsule, = links['base'].collisions
    assert capsule.kind == 'capsule' and capsule.size == pytest.approx([0.02, 0.2])
    assert np.ptp(capsule.corners()[:, 2]) == pytest.approx(0.24)
    sphere, = links['foot'].collisions
    assert sphere.kind == 'sphere' and sphere.size == pytest.approx([0.03])
    assert sphere.corners()[:, 2].min() == pytest.approx(-0.04)
    assert [s.kind for s in links['foot'].visuals] == ['box']
    assert links['foot'].parent_joint == 'knee' and links['foot'].parent_link == 'base'


def test_mjcf_mujoco_cannot_compile_is_a_description_error(tmp_path):
    """A geom naming a missing mesh raises RobotDescriptionError naming the file."""
    path = tmp_path / 'bad.xml'
    path.write_text('<mujoco><asset><mesh name="m" file="missing.stl"/></asset><worldbody>'
                    '<body name="b"><geom type="mesh" mesh="m"/></body></worldbody></mujoco>')
    with pytest.raises(RobotDescriptionError, match='bad.xml'):
        scan_mjcf(path)
