"""Tests of legid_ros.core.identification.rows.foot_ft: the foot weighed by its ankle F/T while it
swings."""

import dataclasses

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError, NotIdentifiableError
from legid_ros.core.identification.api import identify
from legid_ros.core.identification.parameters.sets import ReducedSet
from legid_ros.core.identification.prepare import PrepareOptions, prepare
from legid_ros.core.identification.rows.foot_ft import (feet_regressors, foot_parameters,
                                                        identify_foot_ft, weigh_foot)
from legid_ros.core.synthetic import NoiseModel, SyntheticConfig, simulate_biped

G = 9.81


def test_synthetic_reading_is_foot_wrench_minus_ground(biped):
    """Noise-free synthetic ankle F/T = the foot's Newton-Euler wrench - ground-on-foot exactly."""
    rec = simulate_biped(SyntheticConfig(duration_s=3.0, rate_hz=100.0, seed=5,
                                         noise=NoiseModel.none()))
    q = np.hstack([rec.base_pose_true, rec.q])
    v = np.hstack([rec.base_vel_true, rec.qd])
    a = np.hstack([rec.base_acc_true, rec.qdd_true])
    regs = feet_regressors(biped, q, v, a, ['left', 'right'])
    for foot in ('left', 'right'):
        own = regs[foot] @ foot_parameters(rec.pi_true, biped, foot)
        assert np.abs(rec.ankle_ft[foot] - (own - rec.foot_wrench[foot])).max() < 1e-9
    m_foot = foot_parameters(rec.pi_true, biped, 'left')[0]
    assert rec.ankle_ft['left'][:, 2].mean() == pytest.approx(m_foot * G, rel=0.01)
    assert m_foot == pytest.approx(1.26)  # Wu & Gao's Table 2, 48 % below CAD


def test_swinging_foot_is_weighed_within_half_a_percent(biped, run_a, samples_a):
    """With sensor noise, the swing foot's mass comes out within 0.5 % of the truth."""
    est = weigh_foot(biped, samples_a, 'left', run_a.pi_cad)
    m_true = foot_parameters(run_a.pi_true, biped, 'left')[0]
    assert est.mass_kg == pytest.approx(m_true, rel=5e-3)
    assert est.mass_std_kg < 0.01 and est.n_samples > 500
    assert est.force_rms_n < 3.0  # noise 1 N per axis plus filtering


def test_foot_from_ft_brings_every_mass_near_the_truth(biped, run_a, samples_a):
    """zmp_newton with the foot weighed: every reduced-set mass within 3 % (26 % off without)."""
    red = ReducedSet(biped)
    truth = red.from_standard(run_a.pi_true)
    errs = {}
    for flag in (False, True):
        res = identify(run_a, biped, 'zmp_newton', samples=samples_a, foot_from_ft=flag)
        x = red.from_standard(res.pi)
        errs[flag] = np.abs(100 * (x[4:] - truth[4:]) / truth[4:])
    assert errs[False].max() > 10.0
    assert errs[True].max() < 3.0
    assert 'left foot from its ankle F/T' in res.summary()
    assert res.info['foot_from_ft']['left']['mass_kg'] == pytest.approx(truth[7], rel=5e-3)


def test_missing_or_never_swinging_feet_are_clear_errors(biped, run_a, samples_a):
    """No ankle F/T: BadInputError; a foot that never swings: NotIdentifiableError."""
    bare = dataclasses.replace(run_a, ankle_ft={})
    with pytest.raises(BadInputError, match='no ankle F/T'):
        identify(bare, biped, 'zmp_newton', samples=prepare(bare, biped), foot_from_ft=True)
    stance_only = samples_a.take(slice(None))
    stance_only.ankle_ft = {'right': samples_a.ankle_ft['right']}
    with pytest.raises(NotIdentifiableError, match='swings in only 0 samples'):
        identify_foot_ft(biped, stance_only, run_a.pi_cad)
    with pytest.raises(BadInputError, match='reduced-set method'):
        identify(run_a, biped, 'zmp_qp', samples=samples_a, foot_from_ft=True)


def test_ankle_ft_survives_slicing_saving_and_preparation(tmp_path, biped, run_a):
    """Recording.slice/save_npz/load_npz and prepare keep the ankle F/T of each foot."""
    part = run_a.slice(10, 210)
    back = type(run_a).load_npz(part.save_npz(tmp_path / 'r.npz'))
    for foot in ('left', 'right'):
        assert np.array_equal(back.ankle_ft[foot], run_a.ankle_ft[foot][10:210])
    s = prepare(back, biped, PrepareOptions(cutoff_hz=None))
    assert s.ankle_ft['left'].shape == (s.n, 6)
    with pytest.raises(BadInputError, match='ankle_ft'):
        dataclasses.replace(run_a, ankle_ft={'left': np.zeros((3, 6))})


def test_swing_mask_keeps_clear_of_contacts(samples_a):
    """Swing samples within the guard time of a contact are left out of the weighing."""
    from legid_ros.core.identification.rows.foot_ft import swing_mask
    s = samples_a.take(slice(None))
    s.support = s.support.copy()
    s.support[300:310] = 'left'  # a short touch-down of the left foot
    mask = swing_mask(s, 'left', guard_s=0.1)
    near = np.abs(s.t - s.t[300:310, None]).min(axis=0) <= 0.1
    assert not mask[near].any() and mask[~near].all()
    assert swing_mask(samples_a, 'left').all() and not swing_mask(samples_a, 'right').any()
