"""What the residual does not show: effective samples, the far-move widening, held parameters,
the truth's offset from CAD."""

import numpy as np
import pytest

from legid_ros.core.identification.model_error import (effective_samples, held_basis,
                                                        model_error_ratio, moved_too_far,
                                                        offset_width)
from legid_ros.core.inertial import PARAMS_PER_LINK, get_parameters
from legid_ros.core.robot import load_robot


def test_effective_samples_counts_filtered_noise_once():
    """White noise counts every sample; the same noise smoothed over ~20 samples counts
    about a tenth of them (tau ~ 2 x 10 for a 20-sample moving average)."""
    rng = np.random.default_rng(3)
    white = rng.normal(size=20000)
    assert effective_samples(white) > 0.8 * white.size
    smooth = np.convolve(white, np.ones(20) / 20, mode='same')
    assert effective_samples(smooth) < 0.12 * smooth.size


def test_a_far_move_along_a_poor_combination_widens_it():
    """An estimate that moved from CAD further than the prior width and its spread allow, along
    a poorly determined combination, gets the move (less the width) as its std; a
    well-determined combination with the same move is left alone."""
    vec = np.eye(2)
    lam = np.array([1.0, 100.0])  # data std 1 and 0.01 (scale units) with unit meat
    meat = np.eye(2)
    out = moved_too_far(meat, vec, lam, np.ones(2, bool), np.array([5.0, 5.0]), 1.0, 0.05)
    std = np.sqrt(np.diag(out)) / lam
    assert std[0] == pytest.approx(np.sqrt(5.0 ** 2 - 1.0))
    assert std[1] == pytest.approx(0.01)


def test_a_move_within_two_joint_std_is_the_truths_offset():
    """A move of 2.5 scale units along a combination of data std 1 and prior width 1 (1.77
    joint std, a chance one truth in 13 gives) is not read as model error."""
    out = moved_too_far(np.eye(1), np.eye(1), np.ones(1), np.ones(1, bool), np.array([2.5]),
                        1.0, 0.05)
    assert out[0, 0] == pytest.approx(1.0)


def _moves(kappa, width=1.0, n=400, seed=5):
    """Combinations with noise variances from 1e-4 to 1e2 and moves drawn with model error
    ``kappa`` times the noise: (meat, vec, lam, det, move)."""
    rng = np.random.default_rng(seed)
    lam = np.logspace(-1, 2, n)
    v = np.logspace(-4, 2, n)
    meat = np.diag(v * lam ** 2)  # data-only variance v = meat / lam^2
    move = rng.normal(size=n) * np.sqrt(width ** 2 + (1.0 + kappa) * v)
    return meat, np.eye(n), lam, np.ones(n, bool), move


def test_model_error_ratio_is_near_zero_when_the_moves_are_offset_and_noise():
    """Moves from a truth 1 or 3 scale units off CAD plus noise alone give kappa near 0."""
    assert model_error_ratio(*_moves(0.0), 1.0, 0.05) < 0.5
    assert model_error_ratio(*_moves(0.0, width=3.0), 1.0, 0.05) < 0.5


def test_model_error_ratio_recovers_the_model_error_of_the_moves():
    """Moves drawn with model error 30 times the noise variance give kappa within 40 %."""
    kappa = model_error_ratio(*_moves(30.0), 1.0, 0.05)
    assert 18.0 < kappa < 42.0


def test_model_error_ratio_reads_part_of_a_single_far_move_as_model_error():
    """One usable combination moved 1.6 prior widths with a noise std of 0.055: not all of it
    is taken as the truth's offset (kappa well above 0)."""
    meat = np.diag([0.055 ** 2])
    kappa = model_error_ratio(meat, np.eye(1), np.ones(1), np.ones(1, bool), np.array([1.6]),
                              1.0, 0.05)
    assert kappa > 1.0


def test_model_error_ratio_of_non_finite_moves_is_zero_not_an_error():
    """A non-finite move (a diverged estimate) gives kappa 0 instead of an exception."""
    meat = np.diag([0.1, 0.2])
    kappa = model_error_ratio(meat, np.eye(2), np.ones(2), np.ones(2, bool),
                              np.array([np.nan, np.inf]), 1.0, 0.05)
    assert kappa == 0.0


def test_model_error_ratio_ignores_what_the_prior_holds():
    """A far move the prior shrinks below a tenth leaves kappa as it was; unshrunk, it counts."""
    meat, vec, lam, det, move = _moves(0.0, n=50)
    base = model_error_ratio(meat, vec, lam, det, move, 1.0, 0.05, prior=0.0)
    lam2 = np.append(lam, 1e-3)
    meat2 = np.zeros((51, 51))
    meat2[:50, :50] = meat
    meat2[50, 50] = 1e-3 ** 2 * 1.0
    shrunk = lam / (lam + 1.0)
    held = model_error_ratio(meat2, np.eye(51), lam2, np.ones(51, bool),
                             np.append(move * shrunk, 50.0), 1.0, 0.05, prior=1.0)
    base_p = model_error_ratio(meat, vec, lam, det, move * shrunk, 1.0, 0.05, prior=1.0)
    assert held == pytest.approx(base_p, rel=1e-6)
    loud = model_error_ratio(meat2, np.eye(51), lam2, np.ones(51, bool), np.append(move, 50.0),
                             1.0, 0.05, prior=0.0)
    assert loud > base + 1.0


def test_moves_the_held_parameters_explain_are_not_model_error():
    """Moves drawn with the held parameters' pull (variance 30 times the noise's) read as model
    error without that term (kappa > 10) and not with it (kappa < 0.5); a far move the held
    variance explains is not widened, one it does not explain still is."""
    rng = np.random.default_rng(11)
    n = 400
    lam = np.logspace(-1, 2, n)
    v = np.logspace(-4, 2, n)
    meat = np.diag(v * lam ** 2)
    held = 30.0 * v
    move = rng.normal(size=n) * np.sqrt(1.0 + v + held)
    args = (meat, np.eye(n), lam, np.ones(n, bool), move, 1.0, 0.05)
    assert model_error_ratio(*args) > 10.0
    assert model_error_ratio(*args, held=held) < 0.5
    one = (np.eye(1), np.eye(1), np.ones(1), np.ones(1, bool), np.array([5.0]), 1.0, 0.05)
    assert moved_too_far(*one, held=np.array([25.0]))[0, 0] == pytest.approx(1.0)
    assert moved_too_far(*one, held=np.array([4.0]))[0, 0] == pytest.approx(25.0 - 1.0 - 4.0)


def test_held_basis_of_a_per_link_core_is_the_inertias():
    """A core of every link's mass and first moment holds only the inertias: the held basis
    has no mass or first-moment component and spans all six inertia entries of each link."""
    from legid_ros.core.identification.uncertainty.core import _core_basis
    robot = load_robot('biped')
    pi = get_parameters(robot.model)
    _, _, jac, _, _ = _core_basis(robot, pi, 'links')
    held = held_basis(robot, pi, jac)
    mh = np.arange(pi.size) % PARAMS_PER_LINK < 4
    assert np.abs(held[mh]).max() < 1e-12
    assert np.linalg.matrix_rank(held[~mh]) == int((~mh).sum())


def test_core_readout_skips_only_columns_the_set_does_not_read():
    """The readout of the reduced and grouped sets (no inertia) has zero inertia columns: the
    full central differences over every column give the same matrix."""
    import numpy as np

    from legid_ros.core.identification.model_error import core_readout
    from legid_ros.core.identification.parameters.sets import GroupedSet, ReducedSet, StandardSet
    from legid_ros.core.inertial import get_parameters
    from legid_ros.core.robot import load_robot

    robot = load_robot('biped')
    pi = get_parameters(robot.model)
    step = 1e-6 * StandardSet(robot, pi).scales()
    for core, basis in (('reduced', ReducedSet(robot, pi_cad=pi)),
                        ('grouped', GroupedSet(robot, pi_cad=pi, per_side=False))):
        size = basis.from_standard(pi).size
        scales = np.ones(size)
        full = np.zeros((size, pi.size))
        for k in range(pi.size):
            d = np.zeros(pi.size)
            d[k] = step[k]
            full[:, k] = (basis.from_standard(pi + d)
                          - basis.from_standard(pi - d)) / (2 * step[k])
        np.testing.assert_allclose(core_readout(robot, pi, core, scales), full, atol=1e-9)


def test_offset_width_reads_the_truths_offset_from_the_determined_moves():
    """Moves of well-determined combinations drawn with a 0.6 std give an offset near 0.6 of
    a unit prior width; noisy combinations (std 3) barely weigh."""
    rng = np.random.default_rng(5)
    good = rng.normal(0.0, 0.6, 60)
    noisy = rng.normal(0.0, 3.0, 60)
    move = np.concatenate([good, noisy])
    std = np.concatenate([np.full(60, 0.01), np.full(60, 3.0)])
    out = offset_width(move, std, np.ones(move.size), 1.0)
    assert abs(out - 0.6) < 0.1


def test_offset_width_stays_within_floor_and_width():
    """Moves beyond the prior width give the width (never wider); moves at CAD give the floor."""
    std = np.full(10, 0.01)
    assert offset_width(np.full(10, 4.0), std, np.ones(10), 2.0) == pytest.approx(2.0)
    assert offset_width(np.zeros(10), std, np.ones(10), 2.0) == pytest.approx(1.0)


def test_offset_width_undoes_the_shrink_and_skips_what_the_prior_holds():
    """A move shrunk to half by the prior counts double; a combination the prior holds (shrink
    0.01, move near 0) is left out; none left: the prior width."""
    std = np.full(3, 0.01)
    out = offset_width(np.array([0.35, -0.35, 0.0]), std, np.array([0.5, 0.5, 0.01]), 1.0)
    assert out == pytest.approx(0.7, abs=0.03)
    assert offset_width(np.zeros(2), np.array([np.inf, 0.01]), np.array([1.0, 0.01]),
                        1.0) == 1.0
