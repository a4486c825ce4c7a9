"""Tests of legid_ros.core.pipeline.scene: support polygon, CoM, link COMs."""

import numpy as np
import pinocchio as pin

from legid_ros.core.inertial import get_parameters
from legid_ros.core.pipeline.scene import SceneBuilder, convex_hull_2d
from legid_ros.core.robot import load_robot


def test_convex_hull_drops_inner_points():
    """The hull of a square plus its centre is the four corners, counter-clockwise."""
    pts = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5]], float)
    hull = convex_hull_2d(pts)
    assert len(hull) == 4
    x, y = hull[:, 0], hull[:, 1]
    assert 0.5 * np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y) > 0  # counter-clockwise


def test_scene_matches_pinocchio_and_sole_size():
    """CoM equals pinocchio's; one foot's polygon is its 125 x 100 mm sole; masses sum up."""
    robot = load_robot('biped')
    q = pin.neutral(robot.model)
    q[2] = 0.7
    sb = SceneBuilder(robot)
    sb.set_parameters(get_parameters(robot.model))
    scene = sb.scene(q, ['left'])
    np.testing.assert_allclose(scene.com, pin.centerOfMass(robot.model, robot.new_data(), q))
    span = scene.polygon.max(axis=0) - scene.polygon.min(axis=0)
    np.testing.assert_allclose(span[:2], [0.125, 0.100], atol=1e-9)
    assert np.isclose(scene.link_masses.sum(), robot.total_mass)
    both = sb.scene(q, ['left', 'right'])
    assert len(both.polygon) == 4 and both.polygon[:, 1].max() > scene.polygon[:, 1].max() - 1e-9


def test_group_com_std_reaches_every_link_of_the_group():
    """lc_<group> standard deviations are given to both legs' links; others stay unknown."""
    robot = load_robot('biped')
    q = pin.neutral(robot.model)
    sb = SceneBuilder(robot)
    assert sb.scene(q, []).link_com_std is None
    sb.set_uncertainty({'lc_thigh': 0.004, 'lc_trunk': float('inf'), 'm_thigh': 0.3})
    std = sb.scene(q, []).link_com_std
    thighs = [robot.body_names.index(link) for link in robot.link_groups['thigh'].links]
    assert len(thighs) == 2 and np.allclose(std[thighs], 0.004)
    assert np.isnan(np.delete(std, thighs)).all()


def test_scene_to_world_turns_by_the_support_heading():
    """A support-frame point (1, 0) with heading 90 deg lands at anchor + (0, 1); z is kept."""
    from legid_ros.core.pipeline.scene import Scene, scene_to_world
    scene = Scene(polygon=np.array([[1.0, 0.0, 0.0]]), com=np.array([1.0, 0.0, 0.7]),
                  link_coms=np.array([[0.0, 2.0, 0.3]]), link_masses=np.ones(1),
                  link_names=['x'])
    out = scene_to_world(scene, np.array([10.0, 20.0]), np.pi / 2)
    np.testing.assert_allclose(out.com, [10.0, 21.0, 0.7], atol=1e-12)
    np.testing.assert_allclose(out.polygon, [[10.0, 21.0, 0.0]], atol=1e-12)
    np.testing.assert_allclose(out.link_coms, [[8.0, 20.0, 0.3]], atol=1e-12)
