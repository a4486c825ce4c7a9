"""Tests of legid_ros.bench.conventions_diff: a variant's parameter difference to the canonical
result, in what the canonical data determine and over every parameter."""

from types import SimpleNamespace

import numpy as np
import pytest

from legid_ros.bench.conventions_diff import all_params_pct, determined_diff
from legid_ros.core.identification.uncertainty import Uncertainty

NAMES = ['m_trunk', 'cx_trunk', 'm_leg', 'cx_leg']
VALUE = np.array([10.0, 0.05, 1.0, 0.004])  # [kg, m, kg, m]
SCALES = np.array([2.0, 0.02, 0.2, 0.02])  # 20 % of a mass, 2 cm of a COM


def _result(x, names=NAMES, seen=(True, True, False, False)):
    """A zmp_newton-like result on the core ``names`` whose unit combinations are determined
    (std far inside 2 % / 3 mm) where ``seen`` and not seen at all elsewhere."""
    order = [NAMES.index(n) for n in names]
    std = np.where(np.asarray(seen)[order], 1e-4, np.inf)
    unc = Uncertainty(list(names), np.asarray(x, float), np.zeros(4), SCALES[order],
                      np.zeros((4, 4)), list(names), np.eye(4), std, np.isfinite(std))
    return SimpleNamespace(method='zmp_newton', names=list(names), x=np.asarray(x, float),
                           uncertainty=unc)


def test_only_determined_combinations_count():
    """A 10 % change of a mass the data do not see moves the all-parameter figure only; a
    0.3 % change of a determined mass moves both, in % of its value."""
    canon = _result(VALUE)
    hidden = VALUE.copy()
    hidden[2] *= 1.10
    d = determined_diff(canon, _result(hidden))
    assert d['pct'] == pytest.approx(0.0, abs=1e-9)
    assert d['combinations'] == 2 and d['of'] == 4
    assert all_params_pct(canon, _result(hidden)) == pytest.approx(10.0)
    seen = VALUE.copy()
    seen[0] *= 1.003
    assert determined_diff(canon, _result(seen))['pct'] == pytest.approx(0.3)
    assert determined_diff(canon, _result(seen))['diff_std'] == pytest.approx(
        0.03 / SCALES[0] / 1e-4)


def test_com_difference_is_a_share_of_its_scale_when_the_com_is_small():
    """A 1 mm change of a 5 cm COM is 2 % of it; of a 4 mm COM, 5 % of the 2 cm scale."""
    canon = _result(VALUE, seen=(True, True, True, True))
    for i, want in ((1, 2.0), (3, 5.0)):
        x = VALUE.copy()
        x[i] += 0.001
        assert determined_diff(canon, _result(x))['pct'] == pytest.approx(want)


def test_cores_are_matched_by_name_and_a_missing_uncertainty_is_said():
    """A variant whose description lists the core in another order compares by name; a result
    without an uncertainty gives None."""
    canon = _result(VALUE)
    order = [2, 0, 3, 1]
    x = VALUE.copy()
    x[0] *= 1.01
    other = _result(x[order], [NAMES[i] for i in order], seen=(True,) * 4)
    assert determined_diff(canon, other)['pct'] == pytest.approx(1.0)
    assert determined_diff(canon, SimpleNamespace(uncertainty=None)) is None
