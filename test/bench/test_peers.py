"""Tests of ``legid bench peers`` (legid_ros against FIGAROH on the same recordings)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from legid_ros.bench import peers, peers_leg
from legid_ros.bench.peers_urdf import reroot_urdf
from legid_ros.core.contact.base_state import support_base_state
from legid_ros.core.identification.fixed_base import leg_context
from legid_ros.core.identification.rows.regressors import compute_regressors
from legid_ros.core.inertial import get_parameters
from legid_ros.core.robot import load_robot
from legid_ros.core.synthetic.leg import make_truth
from legid_ros.core.synthetic.leg_experiment import (excitation_run, random_leg_excitation,
                                                     sweep_joint)

pytest.importorskip('figaroh')


def test_rerooted_urdf_gives_the_support_foot_joint_torques():
    """The biped URDF re-rooted at the right foot has our support-foot joint torques."""
    robot = load_robot('biped')
    model = pin.buildModelFromXML(reroot_urdf(robot.urdf_path.read_text(), 'r_foot'))
    data = model.createData()
    names = robot.actuated_joint_names
    rng = np.random.default_rng(3)
    qj, qdj, qddj = (rng.uniform(-lim, lim, (2, len(names))) for lim in (0.3, 1.0, 3.0))
    st = support_base_state(robot, qj, qdj, qddj, 'right')
    regs = compute_regressors(robot, st['q'], st['v'], st['a'], 'right', ('torque',))
    idx = [model.joints[model.getJointId(j)].idx_v for j in names]
    assert model.nv == len(names)
    for k in range(2):
        q, v, a = np.zeros(model.nq), np.zeros(model.nv), np.zeros(model.nv)
        q[idx], v[idx], a[idx] = qj[k], qdj[k], qddj[k]
        tau = pin.rnea(model, data, q, v, a)[idx]
        np.testing.assert_allclose(tau, regs.torque[k] @ get_parameters(robot.model),
                                   atol=1e-9)


@pytest.fixture(scope='module')
def leg_entry(tmp_path_factory):
    """The leg case on a short synthetic recording (perturbed inertials, out-of-class
    friction), two FIGAROH variants."""
    robot = load_robot('leg3', floating_base=False)
    truth = make_truth(robot, seed=5)
    ctx = leg_context(robot)
    train, held = (excitation_run(robot, truth, random_leg_excitation(ctx, s), cycles=1,
                                  reps=1, seed=s) for s in (11, 12))
    sweeps = []
    for j in range(3):
        sw = sweep_joint(robot, truth, j, speeds=peers_leg.SWEEP_SPEEDS, reps=1, seed=j)
        sweeps.append((sw.speed, sw.tau_f))
    rec = peers_leg.LegRecordings(truth, train, held, sweeps, 0.0)
    return peers.leg_case(robot, rec, tmp_path_factory.mktemp('peers'),
                          ('ls', 'physical_fit'), decimation=2)


def test_leg_case_has_the_figures_of_both_tools(leg_entry):
    """Both tools give finite held-out errors, wall times and ratios under the agreed keys."""
    assert leg_entry['status'] == 'ok'
    for key in ('torque_rel_rms_pct', 'wall_s', 'consistent', 'param_err_pct'):
        assert set(leg_entry[key]) == {'ours', 'figaroh'}
    assert np.all(np.isfinite(leg_entry['torque_rel_rms_pct']['ours']))
    assert np.all(np.isfinite(leg_entry['torque_rel_rms_pct']['figaroh']))
    assert len(leg_entry['torque_rel_rms_pct']['figaroh']) == 3
    ratio = leg_entry['ratio_ours_over_figaroh']
    assert np.isfinite(ratio['wall_s']) and np.isfinite(ratio['torque_rel_rms_pct_mean'])
    assert leg_entry['consistent']['ours'] is True


def test_figaroh_variants_report_their_status(leg_entry):
    """Every FIGAROH variant ran, and its physically consistent fit was accepted."""
    fig = leg_entry['methods']['figaroh']
    assert {v['status'] for v in fig.values()} == {'ok'}, fig
    assert fig['physical_fit']['physical_fit']['status'] == 'accepted'
    assert fig['physical_fit']['consistent'] is True
    assert leg_entry['figaroh_variant'] in fig


def test_floating_case_says_why_it_is_unsupported():
    """The floating-base case is marked unsupported with FIGAROH's limitation named."""
    case = peers.floating_case()
    assert case['status'] == 'unsupported'
    assert case['figaroh']['status'] == 'unsupported'
    assert 'act_idxq' in case['figaroh']['reason']
    assert case['torque_rel_rms_pct'] == {'ours': None, 'figaroh': None}
