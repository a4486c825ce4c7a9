"""Tests of legid_ros.core.excitation.collision with a robot described by an MJCF."""

from legid_ros.core import paths
from legid_ros.core.description.resources import package_dir
from legid_ros.core.excitation.collision import SelfCollision
from legid_ros.core.robot import load_robot

TALOS = 'example-robot-data/robots/talos_data/robots/talos_reduced_box.urdf'


def test_mjcf_collision_model_matches_the_urdf(mjcf_of, tmp_path):
    """Talos described by MuJoCo's MJCF of its URDF: the collision model comes from the MJCF
    with the URDF's number of shapes and of checked pairs."""
    urdf_robot = load_robot('talos')
    mjcf = mjcf_of(package_dir('example-robot-data') / TALOS.split('/', 1)[1])
    desc = tmp_path / 'talos_mjcf.yaml'
    desc.write_text(paths.config_path('robots/talos.yaml').read_text().replace(
        f'urdf: package://{TALOS}', f'urdf: {mjcf}'))
    robot = load_robot(desc)
    assert robot.urdf_path == mjcf
    want = SelfCollision.build(urdf_robot, urdf_robot.neutral())
    got = SelfCollision.build(robot, robot.neutral())
    assert (want.source, got.source) == ('urdf', 'mjcf')
    assert got.geom.ngeoms == want.geom.ngeoms > 0
    assert len(got.pairs) == len(want.pairs)
