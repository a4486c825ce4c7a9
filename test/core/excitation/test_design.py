"""Tests of legid_ros.core.excitation.design (the search, on stand-in candidates)."""

from types import SimpleNamespace

import numpy as np
import pytest

from legid_ros.core.excitation import design as design_mod
from legid_ros.core.excitation.design import (JOINT_SWEEPS, TRUNK_MAX_FACTOR,
                                              ExcitationProblem, design, perturb)
from legid_ros.core.excitation.motion import SAFE
from legid_ros.core.robot import load_robot


class _Fake:
    """A candidate with the fields the search reads."""

    def __init__(self, params, feasible, soft):
        self.params, self.feasible = params, feasible
        self.prediction = SimpleNamespace(fraction=soft / 10, soft_count=soft)
        self.constraints = SimpleNamespace(zmp_margin_min_m=0.01, self_collisions=0,
                                           clearance_min_m=0.01, friction_ratio_max=0.1)

    def summary(self):
        return {'feasible': self.feasible, 'soft_count': self.prediction.soft_count}


@pytest.fixture(scope='module')
def problem():
    return ExcitationProblem(load_robot('biped'), 40.0)


def test_search_never_returns_infeasible_when_feasible_seen(problem, monkeypatch):
    """Candidates more informative but infeasible are passed over for the best feasible one,
    across the ladder and the local search."""
    rng = np.random.default_rng(0)

    def fake(_problem, params):
        if params is None:
            return _Fake(None, True, 0.0)
        feasible = bool(rng.uniform() < 0.4)
        return _Fake(params, feasible, rng.uniform(0, 10) + (5.0 if not feasible else 0.0))

    monkeypatch.setattr(design_mod, 'evaluate', fake)
    des = design(problem, budget_s=60.0, seeds=20)
    feasible = [t['soft_count'] for t in des.tried if t['feasible']]
    assert des.best.feasible and des.best.prediction.soft_count == max(feasible)
    assert max(t['soft_count'] for t in des.tried) > des.best.prediction.soft_count


def test_search_climbs_joint_sweeps_while_feasible(problem, monkeypatch):
    """The joint-sweep ladder stops at the first sweep with no feasible candidate and the
    local search then starts from the widest feasible sweep."""
    seen = []

    def fake(_problem, params):
        if params is not None:
            seen.append(params.swing_joint)
        ok = params is None or params.swing_joint <= 0.8 + 1e-9
        return _Fake(params, ok, 0.0 if params is None else 10 * params.swing_joint)

    monkeypatch.setattr(design_mod, 'evaluate', fake)
    des = design(problem, budget_s=60.0, seeds=0)
    assert max(seen) == JOINT_SWEEPS[2]
    assert des.best.params.swing_joint == pytest.approx(0.8)


def test_falls_back_to_the_first_candidate_when_none_is_feasible(problem, monkeypatch):
    """With nothing feasible, the safe (first) candidate comes back, not a wider one."""
    monkeypatch.setattr(design_mod, 'evaluate',
                        lambda _p, params: _Fake(params, False, 1.0 if params else 0.0))
    des = design(problem, budget_s=60.0, seeds=3)
    assert not des.best.feasible and des.best.params.swing_joint == 0.0


def test_without_a_time_budget_the_search_tries_the_same_candidates(problem, monkeypatch):
    """budget_s None: however slow each evaluation is, every candidate of the search is tried
    and two searches try the same ones (the bench's figures do not depend on the machine)."""
    import time

    clock = {'t': 0.0}

    def fake(_problem, params):
        clock['t'] += 1000.0  # each evaluation "takes" 1000 s
        return _Fake(params, True, 0.0 if params is None else params.swing_joint
                     + params.swing_xy)

    monkeypatch.setattr(design_mod, 'evaluate', fake)
    monkeypatch.setattr(time, 'perf_counter', lambda: clock['t'])
    runs = [design(problem, budget_s=None, seeds=5).tried for _ in range(2)]
    assert runs[0] == runs[1]
    timed = design(problem, budget_s=60.0, seeds=5).tried
    assert len(runs[0]) > len(timed)  # with a budget the slow search stops early


def test_perturb_stays_in_the_safe_box():
    """Local-search neighbours keep the sweep, trunk motion and standing share in bounds."""
    rng = np.random.default_rng(1)
    p = SAFE.scaled(1.0, swing_joint=JOINT_SWEEPS[-1], trunk_rpy=2 * SAFE.trunk_rpy)
    for step in range(200):
        q = perturb(p, rng, step)
        assert 0.2 <= q.swing_joint <= JOINT_SWEEPS[-1]
        assert q.trunk_rpy <= TRUNK_MAX_FACTOR * SAFE.trunk_rpy + 1e-12
        assert 0.1 <= q.stand_share <= 0.3


def test_a_duration_too_short_or_not_finite_is_refused_before_the_search():
    """A duration under the shortest motion with two swing targets per foot, or not finite,
    and a non-positive constraint grid are refused when the problem is made, with the least
    duration named."""
    from legid_ros.core.errors import BadInputError
    biped = load_robot('biped')
    with pytest.raises(BadInputError, match=r'too short for 2 feet: give at least \d+ s'):
        ExcitationProblem(biped, 10.0)
    with pytest.raises(BadInputError, match='finite'):
        ExcitationProblem(biped, float('nan'))
    with pytest.raises(BadInputError, match='dt'):
        ExcitationProblem(biped, 40.0, dt=0.0)
