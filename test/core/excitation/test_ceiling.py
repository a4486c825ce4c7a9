"""Tests of legid_ros.core.excitation.ceiling."""

import numpy as np
import pinocchio as pin
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.excitation.ceiling import rest_postures, static_ceiling
from legid_ros.core.identification.rows.regressors import bases_to_world, zmp_rows
from legid_ros.core.identification.rows.zmp import model_zmp
from legid_ros.core.identification.uncertainty.core import _core_basis
from legid_ros.core.inertial import get_parameters
from legid_ros.core.robot import load_robot


@pytest.fixture(scope='module')
def biped():
    robot = load_robot('biped')
    return robot, get_parameters(robot.model)


def _knee_swap(robot, pi, names, scales):
    """Core direction moving the left thigh's first moment along the knee axis to the shank."""
    model = robot.model
    m_thigh = pi[10 * (model.getJointId('l_hip_pitch') - 1)]
    m_shank = pi[10 * (model.getJointId('l_knee') - 1)]
    vec = np.zeros(len(names))
    vec[names.index('cy_left_thigh')] = 1.0 / m_thigh
    vec[names.index('cy_left_shank')] = -1.0 / m_shank
    return vec / scales


def test_rank_matches_pinocchio_static_com_regressor(biped):
    """The ceiling's rank equals the rank of pinocchio's COM regressor over rest postures."""
    robot, pi = biped
    ceiling = static_ceiling(robot, pi, 'grouped_sides')
    _, scales, jac, mass_row, _ = _core_basis(robot, pi, 'grouped_sides')
    mh = np.concatenate([np.arange(10 * i, 10 * i + 4) for i in range(len(pi) // 10)])
    model, data = robot.model, robot.model.createData()
    com = np.vstack([pin.computeStaticRegressor(model, data, q)
                     for q in rest_postures(robot, 200, seed=5)]) @ jac[mh]
    plane = np.linalg.svd((mass_row * scales)[None, :])[2][1:].T
    sv = np.linalg.svd(com @ plane, compute_uv=False)
    assert ceiling.rank == int((sv > 1e-9 * sv[0]).sum())
    assert 0 < ceiling.rank < ceiling.combinations == len(scales) - 1


def test_first_moment_along_a_joint_axis_is_unseen_at_rest_but_seen_in_motion(biped):
    """Moving a first moment along the knee axis from thigh to shank keeps every rest COM, not
    the ZMP of an accelerating leg."""
    robot, pi = biped
    ceiling = static_ceiling(robot, pi, 'grouped_sides')
    _, scales, jac, _, names = _core_basis(robot, pi, 'grouped_sides')
    vec = _knee_swap(robot, pi, names, scales)
    assert ceiling.seen_share(vec) < 1e-9
    assert ceiling.seen_share(np.eye(len(names))[names.index('cx_trunk')]) > 0.99
    model, data = robot.model, robot.model.createData()
    rng = np.random.default_rng(3)
    q = rest_postures(robot, 60, seed=7)
    wrench = np.stack([pin.computeJointTorqueRegressor(
        model, data, qk, rng.normal(0, 2, model.nv), rng.normal(0, 20, model.nv))[:6]
        for qk in q])
    wrench = bases_to_world(q) @ wrench
    rows = zmp_rows(wrench, *model_zmp(wrench, pi))
    g = rows @ jac
    assert np.linalg.norm(g @ vec) > 1e-4 * np.linalg.norm(g, 2) * np.linalg.norm(vec)


def test_fewer_postures_than_parameters_refused(biped):
    """Too few postures to see the rank are refused with the least number named."""
    robot, pi = biped
    with pytest.raises(BadInputError, match='at least 28'):
        static_ceiling(robot, pi, 'grouped_sides', postures=10)


def test_lines_name_the_dynamic_only_parameters(biped):
    """The readable form gives the ceiling and names the shank's lateral COM as unseen."""
    robot, pi = biped
    ceiling = static_ceiling(robot, pi)
    text = '\n'.join(ceiling.lines())
    assert f'at most {ceiling.rank} of {ceiling.combinations} combinations' in text
    assert 'cy_left_shank' in ceiling.dynamic_only() and 'cy_left_shank' in text
    assert 'cx_trunk' not in ceiling.dynamic_only()
