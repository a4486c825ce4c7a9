"""Tests of legid_ros.core.urdf_io: writing identified parameters back to URDF/YAML."""

import numpy as np
import yaml

from legid_ros.core.inertial import get_parameters, pack
from legid_ros.core.robot import load_robot
from legid_ros.core.urdf_io import write_parameter_yaml, write_urdf


def _random_consistent(robot, seed):
    rng = np.random.default_rng(seed)
    parts = []
    for _ in robot.body_names:
        mass = rng.uniform(0.1, 10.0)
        rot = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        moments = rng.uniform(0.01, 0.1, 3)
        parts.append(pack(mass, rng.normal(scale=0.1, size=3), rot @ np.diag(moments) @ rot.T))
    return np.concatenate(parts)


def test_urdf_round_trip_through_pinocchio(tmp_path):
    """A written URDF reloads in pinocchio with the same parameters to 1e-9."""
    for name in ('biped', 'quadruped'):
        robot = load_robot(name)
        pi = _random_consistent(robot, 3)
        out = write_urdf(robot.urdf_path, robot.model, pi, tmp_path / f'{name}_id.urdf',
                         comment='identified by a test')
        again = load_robot(name, urdf=out)
        assert np.abs(get_parameters(again.model) - pi).max() < 1e-9
        assert 'identified by a test' in out.read_text()


def test_parameter_yaml_lists_every_link(tmp_path):
    """The YAML has one entry per body with mass, COM and inertia, and the full vector."""
    robot = load_robot('biped')
    pi = get_parameters(robot.model)
    out = write_parameter_yaml(robot.model, pi, tmp_path / 'p.yaml', {'method': 'cad'})
    doc = yaml.safe_load(out.read_text())
    assert list(doc['links']) == robot.body_names
    assert doc['links']['trunk']['mass_kg'] == 13.87
    assert np.allclose(doc['links']['l_thigh']['com_m'], [0, 0, -0.1919])
    assert np.allclose(doc['standard_parameters'], pi)
    assert doc['method'] == 'cad'


def test_parameter_yaml_carries_the_uncertainty(tmp_path):
    """An uncertainty given to the writer lands under 'uncertainty' (inf as .inf)."""
    from legid_ros.core.identification.uncertainty import Uncertainty
    robot = load_robot('biped')
    pi = get_parameters(robot.model)
    unc = Uncertainty(['m_trunk', 'lc_trunk'], np.array([13.0, 0.2]),
                      np.array([0.01, np.inf]), np.array([2.8, 0.02]), np.zeros((2, 2)),
                      ['+ 1.00 m_trunk'], np.eye(2)[:1], np.array([0.004]),
                      np.array([True]), 30, np.array([0.02, np.inf]))
    out = write_parameter_yaml(robot.model, pi, tmp_path / 'p.yaml', uncertainty=unc)
    doc = yaml.safe_load(out.read_text())
    assert doc['uncertainty']['parameters']['m_trunk'] == {'value': 13.0, 'std': 0.01,
                                                           'std_data': 0.02}
    assert doc['uncertainty']['parameters']['lc_trunk']['std'] == float('inf')
    assert doc['uncertainty']['combinations'][0]['identifiable'] is True
