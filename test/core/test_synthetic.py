"""Tests of legid_ros.core.synthetic: exact single-support biped data."""

import numpy as np
import pinocchio as pin
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.inertial import check_consistency, link_index, set_parameters, unpack
from legid_ros.core.identification.parameters.reduced import ReducedParameterization
from legid_ros.core.robot import load_robot
from legid_ros.core.synthetic import (TABLE2_TRUTH, FrictionModel, NoiseModel,
                                      SyntheticConfig, perturbed_truth, simulate_biped)

LOCAL = pin.ReferenceFrame.LOCAL


@pytest.fixture(scope='module')
def robot():
    return load_robot('biped')


@pytest.fixture(scope='module')
def exact(robot):
    cfg = SyntheticConfig(duration_s=4.0, seed=3, noise=NoiseModel.none(),
                          friction=FrictionModel.none())
    return simulate_biped(cfg, robot)


@pytest.fixture(scope='module')
def true_model(robot, exact):
    model = robot.model.copy()
    set_parameters(model, exact.pi_true)
    return model


def _full(rec, k):
    q = np.concatenate([rec.base_pose_true[k], rec.q[k]])
    v = np.concatenate([rec.base_vel_true[k], rec.qd[k]])
    a = np.concatenate([rec.base_acc_true[k], rec.qdd_true[k]])
    return q, v, a


def _sole_wrench(robot, rec):
    """Right foot wrench moved from the F/T frame back to the sole frame."""
    frames = robot.model.frames
    right = robot.feet['right']
    ft_m_s = (frames[robot.frame_id(right.ft_frame)].placement.inverse()
              * frames[robot.frame_id(right.sole_frame)].placement)
    return rec.foot_wrench['right'] @ ft_m_s.inverse().toDualActionMatrix().T


def test_regressor_matches_rnea_and_contact(robot, exact, true_model):
    """Y(q,v,a) pi_true equals rnea, its base rows equal J_b^T f and joint rows tau + J_j^T f."""
    data = true_model.createData()
    sole = robot.frame_id(robot.feet['right'].sole_frame)
    wrench = _sole_wrench(robot, exact)
    for k in range(0, exact.n, 97):
        q, v, a = _full(exact, k)
        reg = pin.computeJointTorqueRegressor(true_model, data, q, v, a)
        tau_y = reg @ exact.pi_true
        np.testing.assert_allclose(tau_y, pin.rnea(true_model, data, q, v, a), atol=1e-8)
        jac = pin.computeFrameJacobian(true_model, data, q, sole, LOCAL)
        np.testing.assert_allclose(tau_y[:6], jac[:, :6].T @ wrench[k], atol=1e-8)
        np.testing.assert_allclose(tau_y[6:], exact.tau[k] + jac[:, 6:].T @ wrench[k],
                                   atol=1e-8)


def test_weight_carried_by_right_foot(exact):
    """The support normal force averages to about the true weight; the left foot carries 0."""
    mass = exact.meta['total_mass_true_kg']
    assert abs(exact.fsr['right'].sum(axis=1).mean() - mass * 9.81) < 0.02 * mass * 9.81
    assert np.all(exact.foot_wrench['left'] == 0) and np.all(exact.fsr['left'] == 0)


def test_sole_sensor_zmp_equals_model(robot, exact):
    """ZMP from the 4 sole sensors (noise off) equals the model ZMP to 1e-9 m."""
    frames = robot.model.frames
    right = robot.feet['right']
    sole = frames[robot.frame_id(right.sole_frame)].placement
    xy = np.array([sole.actInv(frames[robot.frame_id(f)].placement).translation[:2]
                   for f in right.sensor_frames])
    f = exact.fsr['right']
    assert np.all(f > 0)
    zmp = (f @ xy) / f.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(zmp, exact.zmp_true, atol=1e-9)


def test_zmp_inside_margin_even_when_fast(robot):
    """A fast run is slowed where needed and its ZMP stays inside the sole minus the margin."""
    cfg = SyntheticConfig(duration_s=4.0, seed=1, noise=NoiseModel.none(), speed_scale=8.0,
                          rate_hz=500.0)
    rec = simulate_biped(cfg, robot)
    limit = np.asarray(robot.feet['right'].sole_size) / 2 - cfg.zmp_margin
    assert rec.meta['zmp_guard_rounds'] > 0
    assert np.all(np.abs(rec.zmp_true) <= limit)


def test_feet_placement(robot, exact, true_model):
    """Right sole at the world origin, at rest; left sole level above ground; joints in limits."""
    assert np.all(exact.q >= robot.model.lowerPositionLimit[7:])
    assert np.all(exact.q <= robot.model.upperPositionLimit[7:])
    data = true_model.createData()
    rs = robot.frame_id(robot.feet['right'].sole_frame)
    left_ids = [robot.frame_id(f) for f in robot.feet['left'].sensor_frames]
    lowest = np.inf
    for k in range(0, exact.n, 50):
        q, v, _ = _full(exact, k)
        pin.forwardKinematics(true_model, data, q, v)
        pin.updateFramePlacements(true_model, data)
        np.testing.assert_allclose(data.oMf[rs].homogeneous, np.eye(4), atol=1e-10)
        assert np.linalg.norm(pin.getFrameVelocity(true_model, data, rs, LOCAL).vector) < 1e-10
        lowest = min(lowest, min(data.oMf[i].translation[2] for i in left_ids))
        tilt = data.oMf[left_ids[0]].rotation[:, 2] @ np.array([0, 0, 1.0])
        assert tilt > np.cos(0.02)
    assert lowest > 0.01


def test_derivatives_consistent(exact):
    """qd and qdd are the time derivatives of q, and the base twist that of the base pose."""
    dt = 1.0 / exact.meta['rate_hz']
    np.testing.assert_allclose((exact.q[2:] - exact.q[:-2]) / (2 * dt), exact.qd[1:-1],
                               atol=1e-4)
    np.testing.assert_allclose((exact.qd[2:] - exact.qd[:-2]) / (2 * dt),
                               exact.qdd_true[1:-1], atol=2e-3)
    lie = pin.liegroups.SE3()
    for k in range(1, exact.n - 1, 211):
        twist = lie.difference(exact.base_pose_true[k - 1], exact.base_pose_true[k + 1])
        np.testing.assert_allclose(twist / (2 * dt), exact.base_vel_true[k], atol=1e-4)


def test_imu_signals(exact):
    """IMU gyro is the trunk angular velocity and its specific force is (a_imu - g) rotated."""
    np.testing.assert_allclose(exact.imu_gyro, exact.base_vel_true[:, 3:], atol=1e-12)
    dt = 1.0 / exact.meta['rate_hz']
    pos = np.array([pin.XYZQUATToSE3(p).act(np.array([0, 0, 0.15]))
                    for p in exact.base_pose_true])
    acc_w = (pos[2:] - 2 * pos[1:-1] + pos[:-2]) / dt ** 2
    rot = [pin.Quaternion(qq[3], *qq[:3]).matrix() for qq in exact.imu_quat[1:-1]]
    spec = np.array([r.T @ (a - np.array([0, 0, -9.81])) for r, a in zip(rot, acc_w)])
    np.testing.assert_allclose(spec, exact.imu_acc[1:-1], atol=2e-3)


def test_noise_levels(robot):
    """Noise changes each signal by about the configured std; encoders by the resolution."""
    cfg = SyntheticConfig(duration_s=2.0, seed=5, noise=NoiseModel.none())
    clean = simulate_biped(cfg, robot)
    noise = NoiseModel(encoder_resolution=1e-3, velocity_std=0.01, effort_std=0.3, fsr_std=2.0,
                       ft_force_std=1.5, ft_moment_std=0.1, gyro_std=0.02, acc_std=0.1,
                       orientation_std=0.0, torque_constant_error=0.0)
    noisy = simulate_biped(SyntheticConfig(duration_s=2.0, seed=5, noise=noise), robot)
    dq = noisy.q - clean.q
    assert np.abs(dq).max() <= 0.5e-3 + 1e-12 and 0.25e-3 < dq.std() < 0.33e-3
    checks = [(noisy.qd - clean.qd, 0.01), (noisy.tau - clean.tau, 0.3),
              (noisy.fsr['right'] - clean.fsr['right'], 2.0),
              (noisy.foot_wrench['right'][:, :3] - clean.foot_wrench['right'][:, :3], 1.5),
              (noisy.foot_wrench['right'][:, 3:] - clean.foot_wrench['right'][:, 3:], 0.1),
              (noisy.imu_gyro - clean.imu_gyro, 0.02), (noisy.imu_acc - clean.imu_acc, 0.1)]
    for diff, std in checks:
        assert abs(diff.std() / std - 1) < 0.05
    np.testing.assert_allclose(noisy.zmp_true, clean.zmp_true)


def test_friction_in_efforts(robot):
    """Efforts with friction exceed the rigid-body torques by exactly the friction model."""
    fric = FrictionModel.simple(coulomb=1.5, viscous=0.7)
    base = SyntheticConfig(duration_s=1.5, seed=2, noise=NoiseModel.none(),
                           friction=FrictionModel.none())
    with_f = SyntheticConfig(duration_s=1.5, seed=2, noise=NoiseModel.none(), friction=fric)
    a, b = simulate_biped(base, robot), simulate_biped(with_f, robot)
    np.testing.assert_allclose(b.tau - a.tau, fric.torque(a.qd), atol=1e-10)
    assert np.abs(b.tau - a.tau).max() > 1.0


def test_perturbed_truth(robot):
    """Truth is consistent, masses/COMs follow the table and the ZMP reduced set holds it."""
    pi = perturbed_truth(robot, TABLE2_TRUTH)
    assert check_consistency(pi, robot.body_names).ok
    cad = robot.model
    for name, (factor, shift) in TABLE2_TRUTH.items():
        group = robot.link_groups[name]
        for link in group.links:
            idx = link_index(cad, link)
            m, h, _ = unpack(pi[10 * idx:10 * idx + 10])
            assert m == pytest.approx(factor * group.mass_cad, rel=1e-12)
            assert (h / m) @ group.axis == pytest.approx(group.lc_cad + shift, abs=1e-12)
    assert pi[10 * link_index(cad, 'l_foot')] == pytest.approx(1.26, abs=1e-9)
    red = ReducedParameterization(robot)
    np.testing.assert_allclose(red.to_standard(red.from_standard(pi)), pi, atol=1e-12)


def test_bad_settings(robot):
    """Invalid settings and unknown truth keys raise BadInputError."""
    with pytest.raises(BadInputError):
        simulate_biped(SyntheticConfig(duration_s=-1.0), robot)
    with pytest.raises(BadInputError):
        simulate_biped(SyntheticConfig(rate_hz=0.0), robot)
    with pytest.raises(BadInputError):
        perturbed_truth(robot, {'tail': (1.0, 0.0)})
    with pytest.raises(BadInputError):
        perturbed_truth(robot, {'foot': (-1.0, 0.0)})


def test_realistic_friction_is_outside_the_fitted_family(robot):
    """Default friction: per-joint Stribeck + asymmetric + ripple law, recorded in meta."""
    base = SyntheticConfig(duration_s=1.5, seed=2, noise=NoiseModel.none(),
                           friction=FrictionModel.none())
    real = SyntheticConfig(duration_s=1.5, seed=2, noise=NoiseModel.none())
    a, b = simulate_biped(base, robot), simulate_biped(real, robot)
    assert not real.friction.is_simple and FrictionModel.simple().is_simple
    law = real.friction.realize(12, np.random.default_rng([2, 2]))
    np.testing.assert_allclose(b.tau - a.tau, law.torque(a.qd, a.q), atol=1e-10)
    np.testing.assert_allclose(b.meta['friction']['coulomb_Nm'], law.coulomb)
    assert 0.7 * 1.2 <= np.min(law.coulomb) < np.max(law.coulomb) <= 1.3 * 1.2
    # breakaway (near zero speed) above the Coulomb level; directions differ
    slow, rev = law.torque(np.full((1, 12), 0.02)), -law.torque(np.full((1, 12), -0.02))
    assert np.all(slow > law.coulomb) and np.all(np.abs(slow - rev) > 1e-3)
    # a Coulomb + viscous fit per joint leaves a clearly non-zero residual
    fric = b.tau - a.tau
    for j in (3, 9):
        cols = np.column_stack([np.tanh(a.qd[:, j] / 0.01), a.qd[:, j]])
        coef = np.linalg.lstsq(cols, fric[:, j], rcond=None)[0]
        assert np.std(fric[:, j] - cols @ coef) > 0.05


def test_torque_constant_error(robot):
    """Efforts carry a fixed per-joint gain within +-torque_constant_error, seeded."""
    clean = simulate_biped(SyntheticConfig(duration_s=1.0, seed=4, noise=NoiseModel.none()),
                           robot)
    noise = NoiseModel.none()
    noise.torque_constant_error = 0.05
    rec = simulate_biped(SyntheticConfig(duration_s=1.0, seed=4, noise=noise), robot)
    gains = np.array(rec.meta['torque_constant_gains'])
    np.testing.assert_allclose(rec.tau, clean.tau * gains, rtol=1e-12, atol=1e-12)
    assert np.all(np.abs(gains - 1) <= 0.05) and np.std(gains) > 0.005
    again = simulate_biped(SyntheticConfig(duration_s=1.0, seed=4, noise=noise), robot)
    np.testing.assert_array_equal(again.tau, rec.tau)
    assert 'torque_constant_gains' not in clean.meta


def test_out_of_model_truth(robot):
    """3-D COM shifts of 5-20 mm, left and right different, inertia scaled, payloads added."""
    from legid_ros.core.synthetic.truth import (OUT_OF_MODEL_TRUTH, LinkChange, truth_table)
    pi = perturbed_truth(robot, truth_table('out_of_model'))
    cad = perturbed_truth(robot, {})
    assert check_consistency(pi, robot.body_names).ok
    coms = {}
    for link, entry in OUT_OF_MODEL_TRUTH.items():
        ch = LinkChange(*entry)
        shift = np.abs(ch.shift)
        assert np.all(shift >= 0.005) and np.all(shift <= 0.020)
        assert 0.8 <= ch.inertia_scale <= 1.2
        i = link_index(robot.model, link)
        m, h, _ = unpack(pi[10 * i:10 * i + 10])
        m0, h0, _ = unpack(cad[10 * i:10 * i + 10])
        payload = sum(p[0] for p in ch.payloads)
        assert m == pytest.approx(ch.factor * m0 + payload, rel=1e-12)
        coms[link] = h / m - h0 / m0
        if not ch.payloads:
            np.testing.assert_allclose(coms[link], ch.shift, atol=1e-12)
    assert not np.allclose(coms['l_shank'], coms['r_shank'])
    assert any(len(LinkChange(*e).payloads) for k, e in OUT_OF_MODEL_TRUTH.items()
               if k.startswith('l_'))
    # the ZMP reduced set does not hold it
    red = ReducedParameterization(robot)
    assert np.abs(red.to_standard(red.from_standard(pi)) - pi).max() > 1e-3
    with pytest.raises(BadInputError):
        truth_table('nominal')


def test_truth_meta_keeps_the_whole_table(robot):
    """The recording's meta carries inertia scales and payloads of the truth."""
    from legid_ros.core.synthetic.truth import truth_as_dict, truth_table
    d = truth_as_dict(truth_table('out_of_model'))
    assert d['l_shank'][3][0][0] == pytest.approx(0.3)
    assert d['trunk'][2] == pytest.approx(1.15)
    assert truth_as_dict(TABLE2_TRUTH)['foot'][2:] == [1.0, []]


@pytest.fixture(scope='module')
def swap(robot):
    """An exact run of the support-swap protocol with a 2 kg payload added at 3 s."""
    cfg = SyntheticConfig(duration_s=13.0, seed=4, noise=NoiseModel.none(),
                          friction=FrictionModel.none(), protocol='swap', payload_kg=2.0,
                          payload_at_s=3.0)
    return simulate_biped(cfg, robot)


def _sole_wrenches(robot, rec):
    """Both feet's ground wrenches moved from their F/T frames back to their soles."""
    frames = robot.model.frames
    out = {}
    for name, foot in robot.feet.items():
        ft_m_s = (frames[robot.frame_id(foot.ft_frame)].placement.inverse()
                  * frames[robot.frame_id(foot.sole_frame)].placement)
        out[name] = rec.foot_wrench[name] @ ft_m_s.inverse().toDualActionMatrix().T
    return out


def test_swap_dynamics_exact_with_both_feet(robot, swap):
    """In every phase (double support too) Y pi = rnea = J^T of both feet's wrenches + tau."""
    wrench = _sole_wrenches(robot, swap)
    after = np.array(swap.meta['pi_true_after_payload'])
    phases = {name: (t0, t1) for name, t0, t1 in swap.meta['phases']}
    assert list(phases) == ['right', 'down', 'shift', 'lift', 'left']
    for k in range(0, swap.n, 89):
        pi = swap.pi_true if swap.t[k] < 3.0 else after
        model = robot.model.copy()
        set_parameters(model, pi)
        data = model.createData()
        q, v, a = _full(swap, k)
        tau = pin.rnea(model, data, q, v, a)
        ext = np.zeros(model.nv)
        for name, foot in robot.feet.items():
            jac = pin.computeFrameJacobian(model, data, q, robot.frame_id(foot.sole_frame),
                                           LOCAL)
            ext += jac.T @ wrench[name][k]
        np.testing.assert_allclose(tau[:6], ext[:6], atol=1e-7)
        np.testing.assert_allclose(tau[6:], swap.tau[k] + ext[6:], atol=1e-7)


def test_swap_weighs_each_foot_while_it_swings(robot, swap):
    """Right stance then left stance: the swinging foot has no ground load, its ankle F/T
    reads its own weight, and the support foot carries the robot."""
    phases = {name: (t0, t1) for name, t0, t1 in swap.meta['phases']}
    for stance, swing in (('right', 'left'), ('left', 'right')):
        t0, t1 = phases[stance]
        sel = (swap.t >= t0 + 0.1) & (swap.t < t1 - 0.1)
        assert sel.sum() > 500
        assert np.all(swap.foot_wrench[swing][sel] == 0)
        assert np.all(swap.foot_wrench[stance][sel, 2] > 100.0)
        foot_mass = unpack(swap.pi_true[10 * link_index(robot.model,
                                                         robot.feet[swing].link):][:10])[0]
        fz = np.abs(np.median(swap.ankle_ft[swing][sel, 2]))
        assert fz == pytest.approx(foot_mass * 9.81, rel=0.2)
    t0, t1 = phases['shift']
    mid = (swap.t > t0 + 0.3 * (t1 - t0)) & (swap.t < t0 + 0.7 * (t1 - t0))
    assert np.all(swap.foot_wrench['left'][mid, 2] > 10.0)
    assert np.all(swap.foot_wrench['right'][mid, 2] > 10.0)


def test_payload_changes_the_weight_at_its_time(robot, swap):
    """The feet carry the true mass before the payload and 2 kg more after it."""
    fz = swap.foot_wrench['right'][:, 2] + swap.foot_wrench['left'][:, 2]
    before, after = fz[(swap.t > 0.5) & (swap.t < 3.0)], fz[swap.t > 3.5]
    mass = swap.meta['total_mass_true_kg']
    assert before.mean() == pytest.approx(mass * 9.81, rel=0.01)
    assert after.mean() == pytest.approx((mass + 2.0) * 9.81, rel=0.01)
    assert sum(swap.meta['pi_true_after_payload'][0::10]) == pytest.approx(mass + 2.0)
    report = check_consistency(np.array(swap.meta['pi_true_after_payload']), robot.body_names)
    assert report.ok


def test_imu_heading_error_turns_only_the_heading(robot):
    """imu_yaw_offset/drift turn the IMU orientation about z by offset + drift t only."""
    from scipy.spatial.transform import Rotation

    base = dict(duration_s=1.0, seed=3, noise=NoiseModel.none())
    clean = simulate_biped(SyntheticConfig(**base), robot)
    bad = simulate_biped(SyntheticConfig(**base, imu_yaw_offset_deg=30.0,
                                         imu_yaw_drift_deg_s=0.5), robot)
    rel = Rotation.from_quat(bad.imu_quat) * Rotation.from_quat(clean.imu_quat).inv()
    rotvec = rel.as_rotvec()
    np.testing.assert_allclose(rotvec[:, :2], 0.0, atol=1e-12)
    np.testing.assert_allclose(np.degrees(rotvec[:, 2]), 30.0 + 0.5 * clean.t, atol=1e-9)
    np.testing.assert_array_equal(bad.imu_gyro, clean.imu_gyro)
    with pytest.raises(BadInputError):
        simulate_biped(SyntheticConfig(**base, protocol='walk'), robot)
