"""The autoset bench's pieces: the thigh of a humanoid we did not design, its shifted truth,
and the errors it reports."""

import numpy as np
import pytest

from legid_ros.bench.autoset import set_errors, shifted_truth, thigh_determinacy, thigh_unit
from legid_ros.core.identification.parameters.auto.levels import leg_axis
from legid_ros.core.inertial import (PARAMS_PER_LINK, check_consistency, get_parameters,
                                     link_index)


def test_talos_thigh_is_the_hip_pitch_link_group(talos):
    """Talos's thigh group is the one whose links run from the hip to the knee (0.38 m in the
    URDF) and carry most mass: leg_3 (leg_left_3_link, leg_right_3_link)."""
    assert thigh_unit(talos) == 'leg_3'


def test_shifted_truth_moves_the_thigh_com_down_the_leg(talos):
    """The 'cad' truth differs from CAD only in the thighs, whose COMs sit 10 mm along their
    leg axis; the errors of the truth itself are zero and CAD's axial error is 10 mm."""
    pi, info = shifted_truth(talos, 0, 'leg_3', 0.010, base='cad')
    cad = get_parameters(talos.model)
    assert check_consistency(pi, talos.body_names).ok
    moved = set()
    for link in talos.body_names:
        k = link_index(talos.model, link)
        rows = slice(PARAMS_PER_LINK * k, PARAMS_PER_LINK * (k + 1))
        if not np.allclose(pi[rows], cad[rows]):
            moved.add(link)
            shift = pi[rows][1:4] / pi[rows][0] - cad[rows][1:4] / cad[rows][0]
            assert np.allclose(shift, 0.010 * leg_axis(talos, link), atol=1e-12)
    assert moved == set(info['thigh_links']) == {'leg_left_3_link', 'leg_right_3_link'}
    own = set_errors(talos, 'leg_3', pi, pi, ['leg_3'])
    assert own['thigh_com_err_mm'] == pytest.approx(0.0, abs=1e-9)
    assert own['group_mass_err_pct_max'] == pytest.approx(0.0, abs=1e-9)
    at_cad = set_errors(talos, 'leg_3', cad, pi, [])
    assert at_cad['thigh_axial_com_err_mm'] == pytest.approx(10.0, abs=1e-6)


def test_thigh_determinacy_reads_the_fits_own_summary(talos, talos_run):
    """The bench's determinacy entry has the thigh's mass and COM x/y/z from the fit's
    physical summary, a determined one with a finite data-only std, and the total mass among
    what the data determine (the feet's forces weigh the robot)."""
    from legid_ros.bench.robots import PREP
    from legid_ros.core.identification.api import identify
    res = identify(talos_run, talos, 'zmp_newton', param_set='auto',
                   levels={'trunk': 'mass+com', 'leg_3': 'mass+axial'}, **PREP)
    out = thigh_determinacy(res, ['leg_left_3_link', 'leg_right_3_link'])
    assert out['link'] == 'leg_left_3_link'
    for key in ('mass', 'com_x', 'com_y', 'com_z'):
        q = out[key]
        assert isinstance(q['determined'], bool) and q['std'] > 0
        assert not q['determined'] or q['std_data'] is not None
    assert 'total mass' in out['determined_elsewhere']
