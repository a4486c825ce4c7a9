"""Tests of one online window's input checks, per-foot masks and unit-variance rows."""

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.identification.online.window_rows import (sample_mask, unit_rows,
                                                               window_inputs)


def test_each_method_asks_for_its_inputs():
    """ZMP rows need zmp and fz, torque rows tau, floating-base rows also the foot wrenches;
    a q of the wrong width is refused."""
    t, q = np.arange(20) * 0.01, np.zeros((20, 3))
    with pytest.raises(BadInputError, match='zmp and fz'):
        window_inputs('zmp', 3, 0.05, t, q)
    with pytest.raises(BadInputError, match='needs tau'):
        window_inputs('torque', 3, 0.05, t, q)
    with pytest.raises(BadInputError, match='foot_wrench'):
        window_inputs('floating', 3, 0.05, t, q, tau=np.zeros((20, 3)))
    with pytest.raises(BadInputError, match=r'expected \(20, 4\)'):
        window_inputs('zmp', 4, 0.05, t, q, zmp=np.zeros((20, 2)), fz=np.ones(20))


def test_missing_derivatives_come_from_the_window():
    """Without qd and qdd, a quadratic q gives its exact velocity and acceleration."""
    t = np.arange(50) * 0.01
    q = np.column_stack([0.5 * 2.0 * t ** 2, t])
    _, _, qd, qdd, need = window_inputs('zmp', 2, 0.1, t, q, zmp=np.zeros((50, 2)),
                                        fz=np.ones(50))
    assert qd[:, 0] == pytest.approx(2.0 * t, abs=1e-9)
    assert qdd[:, 0] == pytest.approx(2.0, abs=1e-7)
    assert len(need) == 6


def test_masks_default_and_refuse_a_wrong_length():
    """An absent foot gets the default; a mask of the wrong length is refused."""
    assert sample_mask(None, 'left', 3, True).tolist() == [True] * 3
    assert sample_mask({'left': [1, 0, 1]}, 'left', 3, False).tolist() == [True, False, True]
    with pytest.raises(BadInputError, match='left'):
        sample_mask({'left': [1, 0]}, 'left', 3, False)


def test_torque_rows_are_divided_by_their_noise():
    """Torque rows: regressor and friction columns, efforts as the right-hand side, both
    divided by sigma."""
    class Regs:
        torque = np.ones((2, 1, 3))
    tau, qd = np.array([[4.0], [6.0]]), np.array([[0.5], [-0.5]])
    a, b = unit_rows('torque', 7, 2, 2.0, Regs(), np.array([0, 1]), None, None, tau, qd)
    assert b.tolist() == [2.0, 3.0]
    assert a.shape == (2, 5) and np.all(a[:, :3] == 0.5)
