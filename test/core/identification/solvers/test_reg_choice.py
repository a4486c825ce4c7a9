"""Regularisation weight toward CAD chosen from the data (held-out slice, one-standard-error
rule), and its use by the ZMP Newton method of Wu & Gao 2021."""

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.identification.api import identify
from legid_ros.core.identification.solvers.reg_choice import (REG_GRID_M2, choose_reg,
                                                              held_out_mask)


def test_held_out_mask_is_contiguous_blocks():
    """Every 4th of 40 blocks is held out: a quarter of the samples, in 10 contiguous runs."""
    mask = held_out_mask(4000)
    assert mask.mean() == pytest.approx(0.25)
    starts = np.flatnonzero(np.diff(mask.astype(int)) == 1)
    assert starts.size == 10
    with pytest.raises(BadInputError):
        held_out_mask(50)


def _blocks(mean, k=10, spread=0.1, seed=0):
    return mean + spread * np.random.default_rng(seed).standard_normal(k)


def test_one_standard_error_rule_prefers_the_larger_weight():
    """A weight whose held-out score is within one standard error of the best wins if larger;
    one clearly worse does not."""
    scores = {1e-6: 3.0, 1e-7: 1.02, 1e-8: 1.0, 1e-9: 1.01}
    calls = []

    def fit(reg, x):
        calls.append(reg)
        return np.array([reg])

    def score(x):
        return _blocks(scores[float(x[0])], spread=0.2)
    got = choose_reg(fit, score, np.zeros(1), grid=list(scores))
    assert got.reg == 1e-7
    assert calls == sorted(scores, reverse=True)  # largest first (continuation)
    assert len(got.scores) == 4 and got.x[0] == 1e-7
    sharp = choose_reg(fit, lambda x: _blocks(scores[float(x[0])], spread=1e-4), np.zeros(1),
                       grid=list(scores))
    assert sharp.reg == 1e-8


def test_zmp_newton_reports_the_choice_and_an_explicit_reg_wins(biped, run_a, samples_a):
    """Grouped set: reg chosen on the grid and reported with its scores; an explicit number is
    used as given."""
    auto = identify(run_a, biped, 'zmp_newton', samples=samples_a, param_set='grouped')
    info = auto.info
    assert info['reg_chosen'] in REG_GRID_M2 and info['reg_m2'] == info['reg_chosen']
    assert len(info['reg_scores_mm']) == len(info['reg_grid']) == len(REG_GRID_M2)
    assert min(info['reg_scores_mm']) > 0 and 0.2 < info['reg_held_out_fraction'] < 0.3
    fixed = identify(run_a, biped, 'zmp_newton', samples=samples_a, param_set='grouped',
                     reg=3e-8)
    assert fixed.info['reg_m2'] == 3e-8 and fixed.info['reg_chosen'] is None
    reduced = identify(run_a, biped, 'zmp_newton', samples=samples_a, reg='auto',
                       fallback='gauss_newton')
    assert reduced.info['reg_chosen'] in REG_GRID_M2
    with pytest.raises(BadInputError):
        identify(run_a, biped, 'zmp_qp', samples=samples_a, reg='auto')
