"""A MuJoCo physics run goes through the same rosbag2 topics as the synthetic generator."""

import numpy as np

from legid_ros.bag.recording_io import bag_info, read_bag, write_bag
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
    assert sorted(back.ankle_ft) == sorted(rec.ankle_ft) == ['left', 'right']
    assert np.allclose(back.ankle_ft['left'], rec.ankle_ft['left'], atol=1e-9)
    assert np.allclose(back.pi_true, rec.pi_true)


def test_legid_identify_on_physics_bag(tmp_path):
    """`legid simulate --engine mujoco` then `legid identify` beats CAD on the held-out ZMP."""
    import re
    import subprocess
    import sys
    from pathlib import Path

    legid = str(Path(sys.executable).parent / 'legid')
    bag = tmp_path / 'run.mcap'
    sim = subprocess.run([legid, 'simulate', '--engine', 'mujoco', '--duration', '8', '--rate',
                          '200', '--seed', '4', '--out', str(bag)], capture_output=True,
                         text=True, timeout=300)
    assert sim.returncode == 0, sim.stderr
    ident = subprocess.run([legid, 'identify', '--bag', str(bag), '--method', 'zmp_newton',
                            '--out', str(tmp_path / 'id')], capture_output=True, text=True,
                           timeout=300)
    assert ident.returncode == 0, ident.stderr
    match = re.search(r'identified ([0-9.]+) mm, CAD ([0-9.]+) mm', ident.stdout)
    assert match, ident.stdout
    identified, cad = float(match.group(1)), float(match.group(2))
    assert identified < 2.0 < cad
    assert (tmp_path / 'id' / 'biped_identified.urdf').is_file()
