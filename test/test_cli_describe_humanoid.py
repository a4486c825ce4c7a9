"""legid describe --bag on a humanoid bag whose 6-axis wrench is at a sensor frame 35 mm below
the ankle named ``<side>_sole`` (the name describe gives its own sole centre) and whose sole
sensors sit inside the sole under names of the setup's own: described with options, no hand
edit, and identified as with the setup's own description."""

import argparse
import copy

import numpy as np
import pytest
import yaml

from legid_ros.bag.recording_io import read_bag, write_bag
from legid_ros.bench.robots import TRANSITION_S
from legid_ros.commands import check, describe
from legid_ros.core.identification.api import identify
from legid_ros.core.robot import load_robot

XYZ = [[0.08, 0.05, 0.0], [0.08, -0.05, 0.0], [-0.07, 0.05, 0.0], [-0.07, -0.05, 0.0]]  # [m]


def _setup(talos):
    """The setup's description: F/T frame <side>_sole 35 mm below the ankle, the sole centre
    under another name, sensors inside the sole named <side>_fsr_<k>."""
    desc = copy.deepcopy(talos.description)
    desc['urdf'] = str(talos.urdf_path)
    desc['force_sensing'] = 'wrench'
    for side in ('left', 'right'):
        foot = desc['feet'][side]
        desc['frames'][f'{side}_sole_centre'] = desc['frames'].pop(f'{side}_sole')
        desc['frames'][f'{side}_sole'] = {'parent': foot['link'], 'xyz': [0.0, 0.0, -0.035]}
        foot.update(sole_frame=f'{side}_sole_centre', ft_frame=f'{side}_sole',
                    wrench_topic=f'{side}/ft')
        foot['force_sensors'] = [{'topic': f'{side}/sole/sensor_{k}', 'xyz': p,
                                  'name': f'{side}_fsr_{k}'} for k, p in enumerate(XYZ)]
    return desc


@pytest.fixture(scope='module')
def humanoid(talos, tmp_path_factory):
    """(setup robot, bag, described robot, describe's warnings text)."""
    from legid_ros.core.sim.described import perturbed_truth, simulate_described

    root = tmp_path_factory.mktemp('humanoid')
    (root / 'setup.yaml').write_text(yaml.safe_dump(_setup(talos)))
    setup = load_robot(root / 'setup.yaml')
    pi, _ = perturbed_truth(setup, seed=1)
    bag = write_bag(simulate_described(setup, pi, duration_s=60.0, seed=1), root / 'bag',
                    robot=setup)
    locks = [f'{j}=0' for j in talos.locked_joints]
    args = argparse.Namespace(
        urdf=str(talos.urdf_path), feet='leg_left_6_link,leg_right_6_link', lock=locks,
        name='talos', corner_sensors=True, fsr_topic='{foot}/sole/sensor_{k}',
        sensor_xyz=';'.join(','.join(str(v) for v in p) for p in XYZ),
        sensor_name='{foot}_fsr_{k}',
        frame=[f'{s}_sole=leg_{s}_6_link:0,0,-0.035' for s in ('left', 'right')],
        bag=str(bag), imu_rpy=None, out=str(root / 'described.yaml'))
    assert describe.run(args) == 0
    return setup, str(bag), load_robot(root / 'described.yaml'), (root / 'described.yaml')


def test_the_bag_s_frame_name_is_not_reused_and_the_sensors_are_as_given(humanoid):
    """describe renames its own sole frame (the bag's <side>_sole is another place), takes
    the wrench at the given sensor frame, and puts the sole sensors where and as named."""
    setup, _, robot, path = humanoid
    text = path.read_text()
    assert "frame 'left_sole' renamed 'left_sole_centre'" in text
    for side in ('left', 'right'):
        foot = robot.feet[side]
        assert foot.ft_frame == f'{side}_sole' and foot.sole_frame == f'{side}_sole_centre'
        assert foot.wrench_topic == f'/{side}/ft'
        assert [s.frame for s in foot.force_sensors] == [f'{side}_fsr_{k}' for k in range(4)]
        assert np.allclose(robot.force_sensor_positions(side), XYZ)
        data, sdata = robot.new_data(), setup.new_data()
        import pinocchio as pin
        pin.framesForwardKinematics(robot.model, data, robot.neutral())
        pin.framesForwardKinematics(setup.model, sdata, setup.neutral())
        for name in (f'{side}_sole', f'{side}_sole_centre'):
            assert np.allclose(data.oMf[robot.frame_id(name)].translation,
                               sdata.oMf[setup.frame_id(name)].translation, atol=1e-6)


def test_check_passes_and_identify_matches_the_setup_s_description(humanoid, capsys):
    """legid check passes the described robot on the bag; zmp_newton on the grouped set gives
    the parameters of the setup's own description within 0.5 % (of 1 cm for a COM near 0)."""
    setup, bag, robot, path = humanoid
    code = check.run(argparse.Namespace(robot=str(path), bag=bag, zmp_source='auto'))
    assert code == 0, capsys.readouterr().out
    opts = {'transition_s': TRANSITION_S, 'base': 'contacts',  # as legid bench robots
            'param_set': 'grouped_sides'}
    a = identify(read_bag(bag, setup), setup, 'zmp_newton', **opts)
    b = identify(read_bag(bag, robot), robot, 'zmp_newton', **opts)
    xa, xb = dict(zip(a.names, a.x)), dict(zip(b.names, b.x))
    assert set(xa) == set(xb)
    for name, value in xa.items():  # masses [kg], COMs [m] or first moments [kg.m]
        assert abs(value - xb[name]) < 0.005 * max(abs(value), 0.01), (name, value, xb[name])
