"""Tests of legid_ros.core.urdf_io: writing identified parameters back to URDF/YAML."""

import numpy as np
import pytest
import yaml

from legid_ros.core.errors import BadInputError
from legid_ros.core.inertial import get_parameters, pack
from legid_ros.core.robot import load_robot
from legid_ros.core.urdf_io import identified_suffix, write_parameter_yaml, write_urdf


def _random_consistent(robot, seed):
    rng = np.random.default_rng(seed)
    parts = []
    for _ in robot.body_names:
        mass = rng.uniform(0.1, 10.0)
        rot = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        moments = rng.uniform(0.05, 0.1, 3)  # any two sum to more than the third
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


def test_mjcf_round_trip_through_pinocchio(mjcf_of, tmp_path):
    """A robot described by an MJCF (MuJoCo's of the biped URDF) gets an MJCF ('.xml') that
    pinocchio reloads with the written parameters to 1e-9."""
    from legid_ros.core import paths

    mjcf = mjcf_of(paths.urdf_path('biped.urdf'))
    desc = tmp_path / 'biped_mjcf.yaml'
    desc.write_text(paths.config_path('biped.yaml').read_text().replace(
        'urdf: biped.urdf', f'urdf: {mjcf}'))
    robot = load_robot(desc)
    pi = _random_consistent(robot, 5)
    assert identified_suffix(robot.urdf_path) == '.xml'
    assert identified_suffix(paths.urdf_path('biped.urdf')) == '.urdf'
    out = write_urdf(robot.urdf_path, robot.model, pi, tmp_path / 'biped_id.xml',
                     comment='identified by a test')
    again = load_robot(desc, urdf=out)
    assert np.abs(get_parameters(again.model) - pi).max() < 1e-9
    assert out.read_text().startswith('<mujoco')


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
    """An uncertainty given to the writer lands under 'uncertainty' (not determined: null,
    never inf)."""
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
    assert doc['uncertainty']['parameters']['lc_trunk']['std'] is None
    assert '.inf' not in out.read_text()
    assert doc['uncertainty']['combinations'][0]['identifiable'] is True


def test_inconsistent_set_is_never_written_as_urdf(tmp_path):
    """write_urdf refuses a negative mass or a bad inertia: InconsistentParametersError with
    the per-link report, naming the link and why, and no file left behind."""
    from legid_ros.core.errors import InconsistentParametersError
    from legid_ros.core.inertial import link_index
    robot = load_robot('biped')
    for link, bad in (('l_shank', {0: -2.0}), ('r_foot', {9: -0.5})):
        pi = _random_consistent(robot, 4)
        for k, value in bad.items():
            pi[10 * link_index(robot.model, link) + k] = value
        out = tmp_path / f'{link}.urdf'
        with pytest.raises(InconsistentParametersError) as err:
            write_urdf(robot.urdf_path, robot.model, pi, out)
        assert err.value.report.failing == [link]
        assert link in str(err.value) and 'URDF not written' in str(err.value)
        assert not out.exists() and list(tmp_path.iterdir()) == []
    with pytest.raises(BadInputError):
        write_urdf(robot.urdf_path, robot.model, np.full(pi.size, np.nan), tmp_path / 'n.urdf')


def test_yaml_of_an_inconsistent_set_says_so_at_the_top(tmp_path):
    """The YAML of an inconsistent set is written, headed by a comment and by entries naming
    the failing links, their problems and the advice; a consistent set says it is."""
    from legid_ros.core.inertial import link_index
    robot = load_robot('biped')
    pi = _random_consistent(robot, 5)
    pi[10 * link_index(robot.model, 'l_thigh')] = -3.0
    out = write_parameter_yaml(robot.model, pi, tmp_path / 'p.yaml', {'method': 'x'},
                               advice='use sdp')
    text = out.read_text()
    assert text.startswith('# NOT PHYSICALLY CONSISTENT (l_thigh)')
    doc = yaml.safe_load(text)
    assert list(doc)[:4] == ['physically_consistent', 'inconsistent_links', 'urdf', 'advice']
    assert doc['physically_consistent'] is False and doc['advice'] == 'use sdp'
    assert 'mass -3 kg <= 0' in doc['inconsistent_links']['l_thigh'][0]
    good = yaml.safe_load(write_parameter_yaml(robot.model, _random_consistent(robot, 5),
                                               tmp_path / 'q.yaml').read_text())
    assert list(good)[0] == 'physically_consistent' and good['physically_consistent'] is True
