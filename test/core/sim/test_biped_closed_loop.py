"""Tests of legid_ros.core.sim.biped_motion and biped_closed_loop (MuJoCo biped, torque mode)."""

import numpy as np
import pytest

from legid_ros.core.feedforward import FloatingFeedforward, PdFeedforwardController, PdGains
from legid_ros.core.robot import load_robot
from legid_ros.core.sim.biped_closed_loop import BipedSimConfig, run_biped
from legid_ros.core.sim.biped_motion import plan_biped_motion
from legid_ros.core.synthetic.truth import OUT_OF_MODEL_TRUTH, perturbed_truth


@pytest.fixture(scope='module')
def biped():
    return load_robot('biped', floating_base=True)


@pytest.fixture(scope='module')
def motion(biped):
    return plan_biped_motion(biped, single_s=1.5, stand_s=0.2, shift_s=(1.0, 1.5), lift_s=1.0,
                             seed=2)


def test_motion_is_continuous_and_scheduled(motion):
    """The standing motion has no jump between its moves and switches to single support at
    the lift."""
    assert np.abs(np.diff(motion.q, axis=0)).max() < 5e-3  # [rad] per 1 ms sample
    assert [p[0] for p in motion.phases] == ['stand', 'shift_left', 'shift_right', 'lift',
                                             'single_support']
    lift = dict((p[0], p[1]) for p in motion.phases)['lift']
    assert motion.stance(lift - 1e-3) == ('left', 'right') and motion.stance(lift) == ('right',)


def test_true_model_feedforward_beats_pd_on_mujoco_physics(biped, motion):
    """On MuJoCo physics with the out-of-model truth, PD + feedforward from the true inertials
    tracks every stance-leg joint at least 2x better than PD alone (10x in the largest
    error), and the robot stands."""
    pi_true = perturbed_truth(biped, OUT_OF_MODEL_TRUTH)
    cfg = BipedSimConfig(pi_true=pi_true)
    n = len(biped.actuated_joint_names)
    gains = PdGains(np.full(n, 1000.0), np.full(n, 10.0))
    stance_leg = [j for j in biped.actuated_joint_names if j.startswith('r_')]
    errs = {}
    for label, ff in (('pd', None), ('truth', FloatingFeedforward(
            biped, pi=pi_true, rotor_inertia=np.full(n, cfg.armature)))):
        res = run_biped(biped, PdFeedforwardController.for_robot(biped, ff, gains=gains),
                        motion, cfg, label)
        assert not res.fell and res.ff_failures == 0
        assert res.single.any()
        errs[label] = np.array(list(res.single_support_max_error(stance_leg).values()))
    assert np.all(errs['truth'] <= 0.5 * errs['pd']), errs
    assert errs['truth'].max() <= 0.1 * errs['pd'].max(), errs
