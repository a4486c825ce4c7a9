"""Tests of the MuJoCo biped run (legid_ros.core.sim.mujoco_biped): a few seconds of physics."""

import numpy as np
import pinocchio as pin
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.inertial import set_parameters
from legid_ros.core.robot import load_robot
from legid_ros.core.sim.mujoco_biped import (PhysicsConfig, Reference, plan_reference,
                                             simulate_biped_mujoco)
from legid_ros.core.sim.posture import single_support_posture
from legid_ros.core.synthetic import NoiseModel, SyntheticConfig

G = 9.81


@pytest.fixture(scope='module')
def biped():
    return load_robot('biped')


@pytest.fixture(scope='module')
def standing(biped):
    """2 s standing still on the right foot, exact sensors."""
    q0 = single_support_posture(biped, com_xy=(0.01, -0.005))
    n = 2001
    ref = Reference(t=np.arange(n) * 1e-3, q=np.tile(q0[7:], (n, 1)))
    cfg = SyntheticConfig(duration_s=2.0, rate_hz=1000.0, noise=NoiseModel.none())
    return simulate_biped_mujoco(cfg, reference=ref, robot=biped)


@pytest.fixture(scope='module')
def moving(biped):
    """4 s of the planned ZMP-identification excitation at 500 Hz, exact sensors."""
    cfg = SyntheticConfig(duration_s=4.0, rate_hz=500.0, seed=3, noise=NoiseModel.none(),
                          speed_scale=2.0)
    return simulate_biped_mujoco(cfg, robot=biped)


def test_standing_forces_carry_true_weight(standing):
    """Standing still, the right sole corners carry the true total weight, the left none."""
    m_true = standing.pi_true[0::10].sum()
    total = standing.fsr['right'][-200:].sum(axis=1)
    assert np.allclose(total, m_true * G, rtol=2e-3)
    assert np.all(standing.fsr['left'] == 0.0)
    assert standing.foot_wrench['right'][-1, 2] == pytest.approx(m_true * G, rel=2e-3)
    assert m_true != pytest.approx(standing.pi_cad[0::10].sum(), rel=1e-3)


def test_sole_sensor_zmp_equals_contact_zmp(biped, standing):
    """The ZMP from the four corner forces equals MuJoCo's contact ZMP (flat sole, at rest)."""
    corners = np.array([[0.0625, 0.05], [0.0625, -0.05], [-0.0625, 0.05], [-0.0625, -0.05]])
    f = standing.fsr['right'][-1]
    zmp_fsr = f @ corners / f.sum()
    assert np.allclose(zmp_fsr, standing.zmp_true[-1], atol=3e-4)
    assert standing.meta['engine'] == 'mujoco'


def test_imu_reads_gravity_when_still(standing):
    """At rest the accelerometer reads +g along world z, rotated into the IMU frame."""
    quat = standing.imu_quat[-1]
    rot = pin.Quaternion(quat[3], *quat[:3]).matrix()
    assert np.allclose(rot @ standing.imu_acc[-1], [0.0, 0.0, G], atol=0.02)
    assert np.abs(standing.imu_gyro[-100:]).max() < 1e-3


def test_true_fields_satisfy_rigid_body_dynamics(biped, moving):
    """pinocchio's base wrench with the truth inertials equals the measured foot wrenches."""
    model = biped.model.copy()
    set_parameters(model, moving.pi_true)
    data = model.createData()
    weight = moving.pi_true[0::10].sum() * G
    worst = 0.0
    for k in range(100, moving.n, 97):
        q = np.concatenate([moving.base_pose_true[k], moving.q[k]])
        v = np.concatenate([moving.base_vel_true[k], moving.qd[k]])
        a = np.concatenate([moving.base_acc_true[k], moving.qdd_true[k]])
        tau = pin.rnea(model, data, q, v, a)
        pin.framesForwardKinematics(model, data, q)
        wb = np.zeros(6)
        for name, foot in biped.feet.items():
            b_m_f = data.oMi[1].actInv(data.oMf[biped.frame_id(foot.ft_frame)])
            fw = moving.foot_wrench[name][k]
            wb += b_m_f.act(pin.Force(fw[:3], fw[3:])).vector
        worst = max(worst, np.abs(tau[:6] - wb).max())
    assert worst < 1e-6 * weight


def test_planned_motion_keeps_robot_up(moving):
    """Tracking the excitation the robot stays up, all 4 support corners loaded, no slip."""
    meta = moving.meta
    assert not meta['fell']
    assert meta['trunk_height_drop_m'] < 0.05
    assert meta['support_corner_force_min_n'] > 2.0
    assert meta['swing_force_max_n'] == 0.0
    assert meta['support_slip_max_m'] < 1e-3
    assert meta['support_yaw_slip_max_rad'] < 5e-3
    assert np.all(np.abs(moving.zmp_true) < [0.0625, 0.05])
    assert np.ptp(moving.q[:, 2]) > 0.05


def test_servo_tracks_reference_and_efforts_are_servo_forces(biped, moving):
    """Joint positions follow the CAD-planned reference within a few mrad."""
    cfg = SyntheticConfig(duration_s=4.0, rate_hz=500.0, seed=3, speed_scale=2.0)
    ref = plan_reference(biped, cfg, 1e-3, PhysicsConfig().plan_margin_m)
    err = moving.q - ref.q[::2][:moving.n]
    assert np.abs(err).max() < 0.03
    assert np.abs(moving.tau).max() > 5.0


def test_rate_must_divide_physics_rate(biped):
    """A recording rate that does not divide 1 kHz is refused."""
    with pytest.raises(BadInputError):
        simulate_biped_mujoco(SyntheticConfig(duration_s=0.1, rate_hz=300.0),
                              PhysicsConfig(), robot=biped)


def test_encoder_quantisation_applied(biped):
    """With noise on, joint positions sit on the encoder grid."""
    q0 = single_support_posture(biped)
    ref = Reference(t=np.arange(301) * 1e-3, q=np.tile(q0[7:], (301, 1)))
    cfg = SyntheticConfig(duration_s=0.3, rate_hz=1000.0)
    rec = simulate_biped_mujoco(cfg, PhysicsConfig(settle_s=0.2), reference=ref, robot=biped)
    steps = rec.q / cfg.noise.encoder_resolution
    assert np.allclose(steps, np.round(steps), atol=1e-6)
    assert np.std(rec.fsr['left']) > 0.5 * cfg.noise.fsr_std


def test_swing_tilt_moves_only_swing_ankle(biped):
    """The swing-foot tilt changes only the left ankle joints, by at most its amplitude."""
    from legid_ros.core.sim.mujoco_biped import add_swing_tilt

    t = np.arange(0, 20.0, 0.01)
    ref = Reference(t=t, q=np.zeros((len(t), 12)))
    out = add_swing_tilt(biped, ref, 0.15, seed=1)
    names = biped.actuated_joint_names
    moved = [names[j] for j in range(12) if np.ptp(out.q[:, j]) > 0]
    assert moved == ['l_ankle_pitch', 'l_ankle_roll']
    assert np.abs(out.q).max() == pytest.approx(0.15, rel=0.05)
    assert np.abs(out.q[0]).max() == 0.0
    assert add_swing_tilt(biped, ref, 0.0, seed=1) is ref


def test_bad_duration_and_robot_rejected(biped):
    """A non-positive duration or a robot without left/right feet raises BadInputError."""
    with pytest.raises(BadInputError):
        simulate_biped_mujoco(SyntheticConfig(duration_s=0.0), robot=biped)
    with pytest.raises(BadInputError):
        simulate_biped_mujoco(SyntheticConfig(duration_s=0.1), robot=load_robot('quadruped'))


def test_ankle_ft_is_mujocos_sensor_reading_of_the_foot(biped, moving):
    """MuJoCo's ankle force/torque sensors read the foot's Newton-Euler wrench minus the ground's.

    Checked against pinocchio on the true state and parameters: the swing foot's reading is
    its own weight and inertia, the support foot's the ground reaction minus the foot.
    """
    from legid_ros.core.identification.rows.foot_ft import feet_regressors, foot_parameters
    k = slice(100, -100)
    q = np.hstack([moving.base_pose_true, moving.q])[k]
    v = np.hstack([moving.base_vel_true, moving.qd])[k]
    a = np.hstack([moving.base_acc_true, moving.qdd_true])[k]
    regs = feet_regressors(biped, q, v, a, ['left', 'right'])
    for foot in ('left', 'right'):
        model = regs[foot] @ foot_parameters(moving.pi_true, biped, foot) \
            - moving.foot_wrench[foot][k]
        err = np.abs(moving.ankle_ft[foot][k] - model)
        assert err[:, :3].max() < 0.05 and err[:, 3:].max() < 0.01  # [N], [N.m]
    m_foot = foot_parameters(moving.pi_true, biped, 'left')[0]
    assert np.median(moving.ankle_ft['left'][k, 2]) == pytest.approx(m_foot * G, rel=0.02)


@pytest.fixture(scope='module')
def swap_run(biped):
    """12 s of the support swap in physics (right, transfer, left), exact sensors."""
    cfg = SyntheticConfig(duration_s=12.0, rate_hz=200.0, seed=1, noise=NoiseModel.none(),
                          protocol='swap')
    return simulate_biped_mujoco(cfg, robot=biped)


def test_swap_stands_on_each_foot_in_turn_and_weighs_both_feet(biped, swap_run):
    """The swap run stays up; each foot carries the robot in its own phase and, while it
    swings, its ankle F/T reads its own weight (so both feet can be weighed)."""
    rec = swap_run
    assert not rec.meta['fell'] and rec.meta['protocol'] == 'swap'
    assert rec.meta['support_slip_max_m'] < 1e-3
    phases = {name: (t0, t1) for name, t0, t1 in rec.meta['phases']}
    assert set(phases) == {'right', 'down', 'shift', 'lift', 'left'}
    weight = G * sum(rec.pi_true[0::10])
    masses = dict(zip(biped.body_names, rec.pi_true[0::10]))
    for stand, swing in (('right', 'left'), ('left', 'right')):
        t0, t1 = phases[stand]
        sel = (rec.t > t0 + 0.5) & (rec.t < t1 - 0.2)
        assert rec.foot_wrench[stand][sel, 2].mean() == pytest.approx(weight, rel=0.02)
        assert np.abs(rec.foot_wrench[swing][sel, 2]).max() < 1.0
        foot = biped.feet[swing].link
        # the still-ish swing foot: the F/T's force magnitude is about its weight
        ft = np.linalg.norm(rec.ankle_ft[swing][sel, :3], axis=1)
        assert np.median(ft) == pytest.approx(G * masses[foot], rel=0.05)


def test_swap_reference_is_right_support_first(biped):
    """The swap reference starts with the right-support excitation and lists its phases."""
    cfg = SyntheticConfig(duration_s=12.0, seed=1, protocol='swap')
    ref = plan_reference(biped, cfg, 1e-3)
    assert [p[0] for p in ref.phases] == ['right', 'down', 'shift', 'lift', 'left']
    assert ref.phases[0][3] == ('right',) and ref.phases[2][3] == ('left', 'right')
    assert ref.q.shape == (12001, len(biped.actuated_joint_names))
