"""Tests of legid_ros.core.sim.described.run (MuJoCo runs of robots we did not design)."""

import numpy as np
import pytest

from legid_ros.core.identification.prepare import PrepareOptions, prepare
from legid_ros.core.identification.rows.regressors import compute_regressors
from legid_ros.core.identification.rows.zmp import model_zmp
from legid_ros.core.robot import load_robot
from legid_ros.core.sim.described.excitation import _stand_pose
from legid_ros.core.sim.described.run import DescribedRun, joint_inertia

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


def test_kv_cap_bounds_damping_by_joint_inertia():
    """Capped: every joint's kv dt <= ratio (I + armature), never above the per-kg damping."""
    robot = load_robot('biped')
    q, _, _ = _stand_pose(robot, 0.12)
    inertia = joint_inertia(robot, q)
    assert set(inertia) == set(robot.actuated_joint_names)
    assert all(v > 0 for v in inertia.values())
    run = DescribedRun(kv_dt_inertia_max=0.5)
    mass = robot.total_mass
    opt = run.options(mass, inertia)
    arm = run.armature_per_kg * mass
    for name, i in inertia.items():
        assert opt.kv[name] * opt.timestep_s <= 0.5 * (i + arm) + 1e-12
        assert opt.kv[name] <= run.kv_per_kg * mass + 1e-12
    assert min(opt.kv.values()) < run.kv_per_kg * mass  # the ankles are capped


def test_kv_uncapped_by_default():
    """Default settings: one damping per kg, whatever the inertias."""
    opt = DescribedRun().options(10.0, {'a': 1e-6})
    assert np.isclose(opt.kv, DescribedRun().kv_per_kg * 10.0)
