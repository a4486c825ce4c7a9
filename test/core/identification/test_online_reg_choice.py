"""Tests of the online prior weight chosen from held-out seconds of the folded rows."""

import numpy as np
import pytest

from legid_ros.core.identification.online import OnlineEstimator
from legid_ros.core.identification.online.reg_choice import EVERY, TIE_RTOL, HeldOutReg
from legid_ros.core.identification.solvers.reg_choice import REG_GRID_M2

SIGMA = 0.002  # [m] row scale
RATE_HZ = 100.0  # [Hz] samples folded per second


def _rows(n: int, x_true: np.ndarray, noise: float, seed: int):
    """(t [s], a, b): two unit-variance rows per sample of ``a x = b + noise``."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(2 * n, x_true.size))
    b = a @ x_true + noise * rng.normal(size=2 * n)
    return np.arange(n) / RATE_HZ, a, b


def _ridge(h, g, bb, n, reg, x):
    """The fit toward 0 (the 'CAD') at weight ``reg`` per unit-variance row."""
    x = np.linalg.solve(h + n * reg * np.eye(len(g)), g)
    return x, x


def _choose(x_true, noise, seed=0, n=4000):
    held = HeldOutReg(x_true.size, select_after=3000)
    t, a, b = _rows(n, x_true, noise, seed)
    for k in range(0, n, 100):  # windows of 100 samples
        held.fold(t[k:k + 100], a[2 * k:2 * k + 200], b[2 * k:2 * k + 200])
    assert held.ready()
    return held, held.choose(_ridge, SIGMA, np.zeros(x_true.size))


def test_every_row_goes_to_one_second_and_the_last_seconds_are_held_out():
    """Each folded sample counts once, in its second; the seconds held out (one in EVERY, at
    least two) are the last ones, after every training second: interleaved, each shared the
    motion of its neighbours in training and the score rewarded fitting it."""
    held = HeldOutReg(3, select_after=1000)
    t, a, b = _rows(1200, np.ones(3), 0.1, 1)
    held.fold(t, a, b)
    assert held.train[3] + sum(v[3] for v in held.blocks.values()) == pytest.approx(1200)
    assert all(v[3] == pytest.approx(RATE_HZ) for v in held.blocks.values())
    assert len(held.blocks) <= max(2, round(12 / EVERY)) + 1  # the older seconds summed
    assert held.ready()
    few = HeldOutReg(3, select_after=100)  # enough samples, too few seconds to hold 2 out of
    few.fold(*_rows(700, np.ones(3), 0.1, 1))
    assert not few.ready()
    held.begin(_ridge, SIGMA, np.zeros(3))
    st = held._fits
    assert len(st['blocks']) == max(2, round(12 / EVERY)) == 3
    assert st['train'][3] == pytest.approx(900)  # seconds 0-8 train, 9-11 held out
    last = [np.sum(a[2 * k * 100:2 * (k + 1) * 100] ** 2) for k in (9, 10, 11)]
    assert sorted(np.trace(blk[0]) for blk in st['blocks']) == pytest.approx(sorted(last))


def test_informative_rows_far_from_cad_choose_a_weak_weight():
    """Rows that determine a truth far from CAD: the weak weights fit best (the strongest is
    4x worse); the one chosen is within the tie tolerance of the least and fits the truth."""
    x_true = np.array([3.0, -2.0, 1.0])
    _, choice = _choose(x_true, noise=0.1)
    assert choice.reg <= 1e-8
    assert choice.scores[choice.grid.index(choice.reg)] <= (1 + TIE_RTOL) * min(choice.scores)
    assert choice.scores[0] > 3 * min(choice.scores)
    assert np.allclose(choice.x, x_true, rtol=0.01)


def test_noise_around_cad_chooses_a_strong_weight():
    """A truth at CAD seen through heavy noise on few rows: a strong weight toward CAD
    predicts the held-out seconds best."""
    _, choice = _choose(np.zeros(40), noise=30.0, n=3100)
    assert choice.reg >= 1e-7


def test_held_out_scores_within_the_tie_tolerance_choose_the_largest_weight():
    """Weights whose held-out RMS is within TIE_RTOL of the least tie, and the largest of
    them is chosen: a choice between near-equal scores does not flip with the sampling."""
    held = HeldOutReg(1, select_after=0)
    held.fold(np.arange(400) / RATE_HZ, np.ones((800, 1)), np.zeros(800))
    grid = sorted(REG_GRID_M2, reverse=True)
    # scores set by the fit's value: 1e-8 is 0.1 % above the least (1e-9), 1e-7 is 3 % above
    rms = {1e-6: 1.10, 1e-7: 1.03, 1e-8: 1.001, 1e-9: 1.0, 1e-10: 1.0005, 1e-11: 1.002}

    def fit(h, g, bb, n, reg, x):
        v = np.array([rms[min(grid, key=lambda r: abs(np.log(r / (reg * SIGMA ** 2))))]])
        return v, v
    held.begin(fit, SIGMA, np.zeros(1))
    held._fits['blocks'] = [[np.zeros((1, 1)), np.zeros(1), 1.0, 1.0]]  # score: x^2 -> b
    st = held._fits

    def scored(h, g, bb, n, reg, x):
        v, _ = fit(h, g, bb, n, reg, x)
        st['blocks'] = [[np.zeros((1, 1)), np.zeros(1), (v[0] / SIGMA) ** 2, 1.0]]
        return v, v
    st['solve'] = scored
    choice = held.advance(len(grid))
    assert choice.reg == 1e-8
    assert (1.001 - 1.0) / 1.0 < TIE_RTOL < (1.03 - 1.0) / 1.0


def test_the_statistics_are_freed_and_the_choice_made_once():
    """After the choice nothing more is folded and the memory is released."""
    held, choice = _choose(np.ones(3), noise=0.1)
    assert held.train is None and held.blocks == {} and not held.ready()
    held.fold(*_rows(100, np.ones(3), 0.1, 2))
    assert held.choice is choice


def test_the_estimator_chooses_only_without_an_explicit_weight():
    """The grouped sets get the held-out choice when no weight is given; an explicit weight,
    or one set later, cancels it; the reduced set keeps its default."""
    from legid_ros.core.robot import load_robot
    robot = load_robot('biped')
    assert OnlineEstimator(robot, param_set='grouped_sides').reg_choice is not None
    assert OnlineEstimator(robot, param_set='grouped_sides', reg=0.01).reg_choice is None
    assert OnlineEstimator(robot, param_set='reduced').reg_choice is None
    est = OnlineEstimator(robot, param_set='auto')
    est.reg = 0.02
    assert est.reg_choice is None and est.reg == 0.02
    est.reset()
    assert est.reg_choice is None


def test_asking_for_the_data_s_weight_again_restarts_the_choice():
    """choose_reg_from_data (the node's regularization set back to -1) starts a new choice on
    the grouped sets and none on the reduced set."""
    from legid_ros.core.robot import load_robot
    robot = load_robot('biped')
    est = OnlineEstimator(robot, param_set='grouped_sides', reg=0.01)
    est.choose_reg_from_data()
    assert est.reg_choice is not None and est.reg_choice.choice is None
    red = OnlineEstimator(robot, param_set='reduced')
    red.choose_reg_from_data()
    assert red.reg_choice is None


def test_one_fit_per_advance_chooses_as_all_at_once():
    """The grid's fits spread over advances (one per estimator update) choose the weight the
    fits made at once choose, on statistics frozen when they began."""
    x_true, n = np.array([3.0, -2.0, 1.0]), 4000
    at_once, choice = _choose(x_true, noise=3.0, n=n)
    spread = HeldOutReg(x_true.size, select_after=3000)
    t, a, b = _rows(n, x_true, 3.0, 0)
    for k in range(0, n, 100):
        spread.fold(t[k:k + 100], a[2 * k:2 * k + 200], b[2 * k:2 * k + 200])
    calls = []

    def counted(*args):
        calls.append(1)
        return _ridge(*args)
    spread.begin(counted, SIGMA, np.zeros(x_true.size))
    spread.fold(*_rows(500, -x_true, 3.0, 5))  # after begin: not folded
    got = [spread.advance() for _ in REG_GRID_M2]
    assert len(calls) == len(REG_GRID_M2)
    assert got[:-1] == [None] * (len(REG_GRID_M2) - 1) and spread.pending is False
    assert got[-1].reg == choice.reg
    assert got[-1].scores == pytest.approx(choice.scores)


def test_the_estimator_fits_one_weight_per_update(biped, samples_a):
    """While the weight is chosen, an update solves the set at most twice (one grid fit and
    its own solve), the choice is made after as many updates as the grid has weights, the
    weight chosen is then the solver's and its training fit starts the next solve."""
    est = OnlineEstimator(biped, param_set='grouped_sides', use_imu=False)
    est.reg_choice = HeldOutReg(est.param.size, select_after=600)  # 12 s of the 25 s run
    calls = []
    solver = est.solver
    real = solver.solve

    def counted(*args, **kw):
        calls.append(np.array(args[5], float))  # the start of each solve
        return real(*args, **kw)
    solver.solve = counted
    per_update, s, start = [], samples_a, None
    for k in range(0, s.n, 50):
        sl = slice(k, min(k + 50, s.n))
        est.add_window(s.t[sl], s.q[sl, 7:], s.v[sl, 6:], s.a[sl, 6:], s.zmp[sl], s.fz[sl],
                       None, 'right')
        calls.clear()
        chosen = est.reg_choice.choice is not None
        est.update()
        per_update.append(len(calls))
        if not chosen and est.reg_choice.choice is not None:
            start = calls[-1]  # the update's own solve, once the weight is chosen
    choice = est.reg_choice.choice
    assert choice is not None and np.isfinite(choice.reg)
    assert max(per_update) == 2 and per_update.count(2) == len(REG_GRID_M2)
    assert solver.reg == pytest.approx(choice.reg / est.sigma ** 2)
    assert start == pytest.approx(choice.x)  # starts from the chosen weight's training fit
