"""Issue 14's figures of ``legid bench accuracy``: errors of the grouped methods in their own
set, only in the combinations called identifiable, and the best method with the ankle F/T."""

import numpy as np
import pytest

from legid_ros.bench.accuracy_errors import best_ft_method, identifiable_grouped
from legid_ros.core.identification.parameters.grouped import GroupedSet
from legid_ros.core.identification.uncertainty import Uncertainty
from legid_ros.core.robot import load_robot


@pytest.fixture(scope='module')
def biped():
    """The floating-base biped."""
    return load_robot('biped')


def _uncertainty(param, bad_names=()):
    """Every direction identifiable except unit vectors along ``bad_names``."""
    n = param.size
    vectors = np.eye(n)
    ok = np.array([name not in bad_names for name in param.names])
    return Uncertainty(list(param.names), param.cad(), np.zeros(n), param.scales(),
                       np.zeros((n, n)), list(param.names), vectors, np.zeros(n), ok)


def test_grouped_errors_drop_unidentifiable_directions(biped):
    """The trunk mass error counts when identifiable and vanishes when not; COM errors are the
    norm of the 3-D error per group."""
    grp = GroupedSet(biped)
    x_true = grp.cad()
    x_est = x_true.copy()
    x_est[grp.names.index('m_trunk')] *= 1.05
    x_est[grp.names.index('cx_thigh'):grp.names.index('cx_thigh') + 3] += [0.003, 0.004, 0.0]
    pi_true, pi_est = grp.to_standard(x_true), grp.to_standard(x_est)
    seen = identifiable_grouped(biped, 'grouped', [pi_est], [_uncertainty(grp)], pi_true)
    assert seen['mass_err_pct_identifiable']['trunk'] == pytest.approx(5.0)
    assert seen['com_err_mm_identifiable']['thigh'] == pytest.approx(5.0)
    assert seen['identifiable_core'] == 'grouped'
    hidden = identifiable_grouped(biped, 'grouped', [pi_est], [_uncertainty(grp, ['m_trunk'])],
                                  pi_true)
    assert hidden['mass_err_pct_max_identifiable'] == pytest.approx(0.0, abs=1e-9)
    assert 'm_trunk' in hidden['not_identifiable_combinations']


def test_best_ft_method_is_the_one_furthest_inside_the_goals():
    """The F/T method with the smallest max(mass / 2 %, COM / 3 mm) is the best; None if none."""
    table = {'zmp_newton_ft': {'mass_err_pct_max_identifiable': 1.0,
                               'com_err_mm_max_identifiable': 9.0},
             'zmp_newton_grouped_ft': {'mass_err_pct_max_identifiable': 3.0,
                                       'com_err_mm_max_identifiable': 1.0},
             'zmp_qp': {'mass_err_pct_max_identifiable': 0.0,
                        'com_err_mm_max_identifiable': 0.0}}
    assert best_ft_method(table) == 'zmp_newton_grouped_ft'
    assert best_ft_method({'zmp_qp': table['zmp_qp']}) is None
