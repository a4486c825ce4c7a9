"""The auto parameter set: levels per link group, the map and its derivatives, the leg axis."""

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.identification.parameters.auto.levels import (AutoSet, holds, leg_axis,
                                                           level_name, parse_level,
                                                           parse_levels)
from legid_ros.core.identification.parameters.grouped import jacobian_curvature
from legid_ros.core.inertial import PARAMS_PER_LINK, check_consistency, link_index

LEVELS = [{'trunk': 'mass+com', 'thigh': 'axial', 'shank': 'mass+axial', 'foot': 'mass'},
          {'trunk': 'mass', 'thigh': 'mass+com+inertia', 'foot': 'com'},
          {'trunk': 'mass', 'shank': 'axial'}]


def _random_x(param, rng, spread=0.3):
    return param.cad() + spread * rng.standard_normal(param.size) * param.scales()


@pytest.mark.parametrize('levels', LEVELS)
def test_cad_point_maps_to_cad_and_total_mass(biped, levels):
    """x = cad() gives the CAD standard vector; mass_row . x + fixed_mass is the total mass."""
    param = AutoSet(biped, levels)
    assert np.allclose(param.to_standard(param.cad()), param.pi_cad, atol=1e-12)
    x = _random_x(param, np.random.default_rng(0))
    pi = param.to_standard(x)
    assert param.mass_row() @ x + param.fixed_mass == pytest.approx(
        pi[::PARAMS_PER_LINK].sum(), abs=1e-9)


@pytest.mark.parametrize('levels', LEVELS)
def test_jacobian_and_curvature_match_finite_differences(biped, levels):
    """The analytic d pi / d x matches central differences of to_standard, and the curvature
    matches differences of the Jacobian."""
    param = AutoSet(biped, levels)
    rng = np.random.default_rng(1)
    x = _random_x(param, rng)
    step = 1e-6
    numeric = np.column_stack([
        (param.to_standard(x + step * e) - param.to_standard(x - step * e)) / (2 * step)
        for e in np.eye(param.size)])
    jac = param.jacobian(x)
    assert np.abs(jac - numeric).max() <= 1e-6 * max(1.0, np.abs(jac).max())
    g = rng.standard_normal(param.pi_cad.size)
    ref = jacobian_curvature(param.jacobian, x, g)
    assert np.allclose(param.curvature(x, g), ref, atol=1e-7 * max(1.0, np.abs(ref).max()))


@pytest.mark.parametrize('levels', LEVELS)
def test_from_standard_inverts_to_standard(biped, levels):
    """from_standard(to_standard(x)) == x for every estimated component."""
    param = AutoSet(biped, levels)
    x = _random_x(param, np.random.default_rng(2))
    assert np.allclose(param.from_standard(param.to_standard(x)), x, atol=1e-10)


def test_axial_shift_moves_the_com_along_the_knee_direction(biped):
    """An axial shift d moves each thigh's COM by d along the direction from its hip joint to
    its knee joint, read from the URDF's joint placements."""
    param = AutoSet(biped, {'thigh': 'axial'})
    x = param.cad()
    x[param.names.index('d_thigh')] = 0.01  # [m]
    pi, cad = param.to_standard(x), param.pi_cad
    model = biped.model
    for link, knee in (('l_thigh', 'l_knee'), ('r_thigh', 'r_knee')):
        i = link_index(model, link)
        rows = slice(PARAMS_PER_LINK * i, PARAMS_PER_LINK * (i + 1))
        shift = pi[rows][1:4] / pi[rows][0] - cad[rows][1:4] / cad[rows][0]
        kid = [j for j in range(1, model.njoints) if model.parents[j] == i + 1][0]
        to_knee = np.array(model.jointPlacements[kid].translation)
        assert model.names[kid].startswith(knee)
        assert np.allclose(shift, 0.01 * to_knee / np.linalg.norm(to_knee), atol=1e-12)
        assert pi[rows][0] == cad[rows][0]  # the mass is not estimated
    assert check_consistency(pi, biped.body_names).ok


def test_leg_axes_of_the_biped(biped):
    """The foot's axis points to its sole frame; the trunk (the root) has none."""
    assert leg_axis(biped, 'trunk') is None
    model = biped.model
    data = model.createData()
    import pinocchio as pin
    pin.framesForwardKinematics(model, data, biped.neutral())
    foot = biped.feet['left']
    jid = link_index(model, foot.link) + 1
    sole = data.oMf[model.getFrameId(foot.sole_frame)].translation - data.oMi[jid].translation
    expect = data.oMi[jid].rotation.T @ sole
    assert np.allclose(leg_axis(biped, foot.link), expect / np.linalg.norm(expect), atol=1e-12)


def test_units_on_none_keep_their_exact_cad_rows(biped):
    """A unit on 'none' keeps its links' CAD rows to the last bit, even when its sides' CAD
    values differ (no averaging of an unestimated group)."""
    param0 = AutoSet(biped, {})
    cad = param0.pi_cad.copy()
    i = link_index(biped.model, 'r_shank')
    cad[PARAMS_PER_LINK * i:PARAMS_PER_LINK * (i + 1)] *= 1.1  # right shank 10 % heavier
    param = AutoSet(biped, {'trunk': 'mass', 'thigh': 'mass+axial'}, pi_cad=cad)
    x = _random_x(param, np.random.default_rng(3))
    pi = param.to_standard(x)
    for link in ('l_shank', 'r_shank', 'l_foot', 'r_foot'):
        k = link_index(biped.model, link)
        rows = slice(PARAMS_PER_LINK * k, PARAMS_PER_LINK * (k + 1))
        assert np.array_equal(pi[rows], cad[rows])


def test_levels_and_names(biped):
    """Level names parse, normalise and nest; bad units, components and axes are refused."""
    assert level_name(parse_level('axial+mass')) == 'mass+axial'
    assert parse_level('none') == frozenset()
    assert holds('mass+com', 'axial') and holds('mass+axial', 'mass')
    assert not holds('axial', 'mass')
    assert parse_levels('trunk=com+mass, thigh=axial') == {'trunk': 'mass+com',
                                                          'thigh': 'axial'}
    assert AutoSet(biped, {'trunk': 'mass', 'thigh': 'mass+axial'}).names == [
        'm_trunk', 'm_thigh', 'd_thigh']
    for bad in ({'knee': 'mass'}, {'thigh': 'mass+weight'}, {'thigh': 'axial+com'},
                {'trunk': 'axial'}):
        with pytest.raises(BadInputError):
            AutoSet(biped, bad)
    with pytest.raises(BadInputError, match='UNIT=LEVEL'):
        parse_levels('thigh')
