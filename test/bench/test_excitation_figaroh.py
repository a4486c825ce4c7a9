"""Tests of legid_ros.bench.excitation_figaroh (FIGAROH's excitation design beside ours)."""

import math

import pytest

from legid_ros.bench.excitation_figaroh import FigarohDesign, design, side_by_side
from legid_ros.core.identification.fixed_base import leg_context
from legid_ros.core.robot import load_robot
from legid_ros.core.synthetic.leg_experiment import random_leg_excitation

KEYS = ('cond_ours', 'cond_figaroh', 'cond_ratio_vs_figaroh', 'logdet_ours', 'logdet_figaroh',
        'design_s_ours', 'design_s_figaroh')


@pytest.fixture(scope='module')
def leg():
    robot = load_robot('leg3', floating_base=False)
    return robot, leg_context(robot)


def test_figaroh_design_scored_beside_ours(leg):
    """FIGAROH's own design runs on leg3 (3 IPOPT iterations) inside our position and speed
    limits, and both trajectories get finite condition numbers > 1 from the same regressor."""
    pytest.importorskip('cyipopt')
    robot, ctx = leg
    fig = design(robot, seed=0, max_iterations=3)
    assert fig.status == 'ok', fig.reason
    out = side_by_side(ctx, random_leg_excitation(ctx, seed=0), 1.0, fig)
    assert all(k in out for k in KEYS)
    for k in ('cond_ours', 'cond_figaroh'):
        assert 1.0 < out[k] < math.inf
    assert math.isfinite(out['logdet_ours']) and math.isfinite(out['logdet_figaroh'])
    assert out['cond_ratio_vs_figaroh'] == pytest.approx(out['cond_ours'] / out['cond_figaroh'])
    assert out['design_s_figaroh'] > 0
    assert out['limit_use_figaroh']['q_excess_rad'] <= 1e-9
    assert out['limit_use_figaroh']['qd_over_max'] <= 1.0 + 1e-6
    assert 'figaroh_not_run' not in out


def test_figaroh_failure_is_reported(leg):
    """A FIGAROH design that could not run leaves no ratio and carries its reason."""
    _, ctx = leg
    out = side_by_side(ctx, random_leg_excitation(ctx, seed=0), 1.0,
                       FigarohDesign('failed', 'IPOPT said no'))
    assert out['figaroh_not_run'] == 'IPOPT said no'
    assert out['cond_ratio_vs_figaroh'] is None and out['cond_figaroh'] is None
    assert 1.0 < out['cond_ours'] < math.inf
