"""``legid bench robots``' z along the determined combinations reads the error in their std."""
from types import SimpleNamespace

import numpy as np
import pytest

from legid_ros.bench.robots import _errors, description_path
from legid_ros.core.excitation.information import determined
from legid_ros.core.identification.uncertainty import normal_uncertainty
from legid_ros.core.identification.uncertainty.core import _core_basis
from legid_ros.core.inertial import get_parameters
from legid_ros.core.robot import load_robot


@pytest.mark.parametrize('k_std', [0.5, 5.0])
def test_z_of_a_known_error_along_a_determined_combination(k_std):
    """A truth ``k_std`` stds off the estimate along its best-determined combination gives
    z_max_determined ``k_std`` (the other combinations have no error)."""
    robot = load_robot(description_path('solo12'))
    pi = get_parameters(robot.model)
    _, _, jac, _, names = _core_basis(robot, pi, 'grouped_sides')
    rng = np.random.default_rng(3)
    n = 4000
    rows = rng.normal(size=(n, len(names))) @ np.linalg.pinv(jac)
    r = rng.normal(0.0, 1e-4, n)
    u = normal_uncertainty(robot, pi, rows.T @ rows, float(r @ r), n, core='grouped_sides',
                           prior_width=0.0)
    ok = determined(u)
    assert ok.sum() >= 3
    best = int(np.argmin(np.where(ok, u.combination_std, np.inf)))
    v = u.vectors[best]
    pi_true = pi + jac @ (k_std * u.std_along(v) * v)
    out = _errors(robot, 'grouped_sides', SimpleNamespace(pi=pi, uncertainty=u), pi_true)
    assert out['determined_combinations'] == int(ok.sum())
    assert out['z_max_determined'] == pytest.approx(k_std, rel=0.02)
