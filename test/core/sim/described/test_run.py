"""Tests of legid_ros.core.sim.described.run (MuJoCo runs of robots we did not design)."""

import numpy as np
import pytest

from legid_ros.core.identification.prepare import PrepareOptions, prepare
from legid_ros.core.identification.rows.regressors import compute_regressors
from legid_ros.core.identification.rows.zmp import model_zmp

G = 9.81


@pytest.mark.parametrize('name', ['solo12_run', 'talos_run'])
def test_robot_stays_up_and_its_feet_carry_its_true_weight(request, name):
    """The run does not fall, the feet stand still, and the ground forces average the true
    weight (MuJoCo's contacts, the true inertials)."""
    rec = request.getfixturevalue(name)
    assert not rec.meta['fell']
    assert rec.meta['stance_slip_max_m'] < 5e-3
    weight = G * rec.pi_true[0::10].sum()
    total = sum(np.linalg.norm(w[:, :3], axis=1) for w in rec.foot_wrench.values())
    assert total.mean() == pytest.approx(weight, rel=0.02)


@pytest.mark.parametrize('robot, name, floor_mm', [('solo12', 'solo12_run', 1.5),
                                                   ('talos', 'talos_run', 2.0)])
def test_true_parameters_explain_the_measured_cop(request, robot, name, floor_mm):
    """The model ZMP at the true parameters, on the base state from the contacts and the IMU,
    matches the measured CoP of the point feet / soles to about a millimetre, and the URDF's
    parameters do several times worse (the recording is self-consistent and informative)."""
    r = request.getfixturevalue(robot)
    rec = request.getfixturevalue(name)
    s = prepare(rec, r, PrepareOptions(step=4, transition_s=0.5, base='contacts'))
    wrench = compute_regressors(r, s.q, s.v, s.a).wrench
    dev = np.linalg.norm(model_zmp(wrench, rec.pi_true)[0] - s.zmp, axis=1).mean()
    dev_cad = np.linalg.norm(model_zmp(wrench, rec.pi_cad)[0] - s.zmp, axis=1).mean()
    assert dev < floor_mm * 1e-3
    assert dev_cad > 2.5 * dev
