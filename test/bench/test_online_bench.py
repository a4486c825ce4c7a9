"""Tests of ``legid bench online``'s pieces: masses, validation deviation, online vs batch."""

import numpy as np
import pytest

from legid_ros.bench import online
from legid_ros.core.robot import load_robot
from legid_ros.core.synthetic import SyntheticConfig, simulate_biped


@pytest.fixture(scope='module')
def robot():
    """The built-in biped."""
    return load_robot('biped')


@pytest.fixture(scope='module')
def rec():
    """15 s of the synthetic biped with default noise."""
    return simulate_biped(SyntheticConfig(duration_s=15.0, seed=5))


def test_group_masses_sum_the_grouped_links(robot, rec):
    """Group masses add both legs' links; the trunk is one link."""
    m = online.group_masses(rec.pi_true, robot)
    assert set(m) == set(robot.link_groups)
    assert sum(m.values()) < float(rec.pi_true[::10].sum()) + 1e-9
    assert m['thigh'] == pytest.approx(2 * rec.pi_true[10 * robot.body_names.index(
        robot.link_groups['thigh'].links[0])], rel=0.2)


def test_validation_deviation_is_smaller_with_the_truth(robot, rec):
    """The true parameters predict the buffer's ZMP better than the CAD ones."""
    split = rec.t[0] + 10.0
    truth = online.validation_deviation(rec, robot, rec.pi_true, split)
    cad = online.validation_deviation(rec, robot, rec.pi_cad, split)
    assert 0 < truth < 0.5 * cad


def test_online_newton_agrees_with_the_batch_on_the_same_data(robot, rec, monkeypatch):
    """The online reduced-set Newton ends within 0.5 % of the batch zmp_newton masses."""
    monkeypatch.setattr(online, 'PAIRS', tuple(p for p in online.PAIRS if p[0] == 'zmp_newton'))
    out = online.online_vs_batch(rec, robot)['zmp_newton']
    assert out['mass_pct_max'] < 0.5
    assert out['consistent_updates'] == out['updates'] > 0
    assert np.isfinite(out['com_mm_max'])
