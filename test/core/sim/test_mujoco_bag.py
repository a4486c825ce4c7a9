"""A MuJoCo physics run goes through the same rosbag2 topics as the synthetic generator."""

import numpy as np

from legid_ros.bagfile import bag_info, read_bag, write_bag
from legid_ros.core.robot import load_robot
from legid_ros.core.sim.mujoco_biped import simulate_biped_mujoco
from legid_ros.core.synthetic import SyntheticConfig, simulate_biped


def test_physics_bag_round_trip_and_same_topics(tmp_path):
    """Physics and synthetic bags have the same topics; reading back keeps the signals."""
    robot = load_robot('biped')
    cfg = SyntheticConfig(duration_s=0.5, rate_hz=200.0, seed=2)
    rec = simulate_biped_mujoco(cfg, robot=robot)
    write_bag(rec, tmp_path / 'phys.mcap', robot=robot)
    write_bag(simulate_biped(cfg, robot), tmp_path / 'syn.mcap', robot=robot)
    phys = {(t.name, t.msgtype) for t in bag_info(tmp_path / 'phys.mcap').topics}
    syn = {(t.name, t.msgtype) for t in bag_info(tmp_path / 'syn.mcap').topics}
    assert phys == syn
    assert ('/joint_states', 'sensor_msgs/msg/JointState') in phys
    back = read_bag(tmp_path / 'phys.mcap', robot)
    assert back.meta['engine'] == 'mujoco'
    assert back.n == rec.n
    assert np.allclose(back.q, rec.q, atol=1e-9)
    assert np.allclose(back.tau, rec.tau, atol=1e-9)
    assert np.allclose(back.fsr['right'], rec.fsr['right'], atol=1e-9)
    assert np.allclose(back.foot_wrench['right'], rec.foot_wrench['right'], atol=1e-9)
    assert np.allclose(back.pi_true, rec.pi_true)
