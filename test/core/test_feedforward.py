"""Tests of legid_ros.core.feedforward: feedforward torque and PD + feedforward controller."""

from types import SimpleNamespace

import numpy as np
import pinocchio as pin
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.feedforward import (FeedforwardModel, PdFeedforwardController, PdGains,
                                        ReferenceTrajectory, compile_friction,
                                        from_identification,
                                        reflected_rotor_inertia)
from legid_ros.core.inertial import get_parameters
from legid_ros.core.robot import load_robot


@pytest.fixture(scope='module')
def leg():
    return load_robot('leg3', floating_base=False)


def _friction(qd):
    return 1.5 * np.tanh(50.0 * qd) + 0.3 * qd


def _perturbed(leg, seed=0):
    rng = np.random.default_rng(seed)
    pi = get_parameters(leg.model)
    return pi * (1.0 + 0.2 * rng.uniform(-1, 1, pi.size))


def test_reflected_rotor_inertia_is_ratio_squared_times_rotor(leg):
    """Joint-side rotor inertia is gear_ratio^2 * rotor inertia from config/leg3.yaml."""
    np.testing.assert_allclose(reflected_rotor_inertia(leg),
                               [81 * 3e-4, 81 * 3e-4, 13.5 ** 2 * 1.5e-4])


def test_torque_matches_mass_coriolis_gravity_form(leg):
    """tau_ff equals (J + M(q)) qdd + C(q, qd) qd + G(q) + tau_f(qd) for a perturbed set."""
    pi = _perturbed(leg)
    jr = reflected_rotor_inertia(leg)
    ff = FeedforwardModel(leg, pi=pi, rotor_inertia=jr, friction=_friction)
    ref = pin.Model(leg.model)
    for j in range(1, ref.njoints):
        ref.inertias[j] = pin.Inertia.FromDynamicParameters(pi[10 * (j - 1):10 * j])
    data = ref.createData()
    rng = np.random.default_rng(1)
    for _ in range(5):
        q, qd, qdd = rng.uniform(-1, 1, (3, 3))
        mass = pin.crba(ref, data, q)
        mass = np.triu(mass) + np.triu(mass, 1).T
        cor = pin.computeCoriolisMatrix(ref, data, q, qd)
        grav = pin.computeGeneralizedGravity(ref, data, q)
        expected = (np.diag(jr) + mass) @ qdd + cor @ qd + grav + _friction(qd)
        np.testing.assert_allclose(ff.torque(q, qd, qdd), expected, atol=1e-10)
        terms = ff.terms(q, qd, qdd)
        np.testing.assert_allclose(terms.total, expected, atol=1e-10)
        np.testing.assert_allclose(terms.gravity, grav, atol=1e-12)


def test_parameters_change_the_torque(leg):
    """The model uses the identified parameters, not the URDF's (heavier shank, more torque)."""
    ff = FeedforwardModel(leg)
    q = np.array([0.0, 0.5, 1.0])
    base = ff.torque(q, np.zeros(3), np.zeros(3))
    pi = get_parameters(leg.model)
    pi[20:30] *= 2.0  # shank twice as heavy, same COM
    ff.set_parameters(pi)
    heavier = ff.torque(q, np.zeros(3), np.zeros(3))
    assert abs(heavier[2]) == pytest.approx(2 * abs(base[2]), rel=1e-9)
    assert not np.allclose(heavier[1], base[1])


def test_per_joint_friction_list_equals_vector_callable(leg):
    """A list of per-joint friction callables gives the same torque as one vector callable."""
    per_joint = [lambda v, k=k: (k + 1.0) * np.tanh(20 * v) for k in range(3)]
    vec = FeedforwardModel(leg, friction=lambda v: np.arange(1.0, 4.0) * np.tanh(20 * v))
    lst = FeedforwardModel(leg, friction=per_joint)
    q, qd, qdd = np.array([0.1, 0.2, 1.0]), np.array([0.3, -0.2, 0.05]), np.ones(3)
    np.testing.assert_allclose(lst.torque(q, qd, qdd), vec.torque(q, qd, qdd), atol=1e-12)


def test_pd_law_and_default_published_gains(leg):
    """tau = tau_ff + Kp (q_d - q) + Kd (qd_d - qd) with the geared leg's gains by default."""
    ff = FeedforwardModel(leg, rotor_inertia=reflected_rotor_inertia(leg), friction=_friction)
    ctl = PdFeedforwardController.for_robot(leg, ff)
    np.testing.assert_allclose(ctl.gains.kp, [1500, 1000, 1000])
    np.testing.assert_allclose(ctl.gains.kd, [800, 500, 500])
    q, qd = np.array([0.0, 0.4, 1.2]), np.array([0.1, 0.0, -0.1])
    q_d, qd_d, qdd_d = q + 0.001, qd + 0.002, np.array([1.0, -2.0, 0.5])
    out = ctl.step(q, qd, q_d, qd_d, qdd_d)
    expected = ff.torque(q, qd_d, qdd_d) + ctl.gains.kp * 0.001 + ctl.gains.kd * 0.002
    np.testing.assert_allclose(out.tau, expected, atol=1e-10)
    assert not out.saturated.any() and ctl.diagnostics.saturated_cycles == 0


def test_saturation_clamps_to_urdf_limits_and_counts(leg):
    """A large error clamps each joint to its URDF effort limit and is counted."""
    ctl = PdFeedforwardController.for_robot(leg, None, gains=PdGains([100.0] * 3, [1.0] * 3))
    z = np.zeros(3)
    out = ctl.step(z, z, np.array([1.0, -1.0, 0.1]), z, z)
    np.testing.assert_allclose(out.tau, [40.0, -40.0, 10.0])
    np.testing.assert_array_equal(out.saturated, [True, True, False])
    ctl.step(z, z, np.array([1.0, 0.0, 0.0]), z, z)
    assert ctl.diagnostics.cycles == 2
    assert ctl.diagnostics.saturated_cycles == 2
    np.testing.assert_array_equal(ctl.diagnostics.saturated_per_joint, [2, 1, 0])


def test_nan_or_wrong_size_is_rejected_without_command(leg):
    """NaN or wrong-size inputs raise BadInputError and do not count as a cycle."""
    ctl = PdFeedforwardController.for_robot(leg, FeedforwardModel(leg))
    z = np.zeros(3)
    with pytest.raises(BadInputError):
        ctl.step(z, z, np.array([0.0, np.nan, 0.0]), z, z)
    with pytest.raises(BadInputError):
        ctl.step(z, z, np.zeros(2), z, z)
    with pytest.raises(BadInputError):
        FeedforwardModel(leg).set_parameters(np.zeros(7))
    assert ctl.diagnostics.cycles == 0


def test_reference_reorders_interpolates_and_holds(leg):
    """A reference is reordered to model joints, interpolated linearly and held after its end."""
    names = ['knee', 'hip_abad', 'hip_flex']
    q = np.array([[1.0, 0.0, 0.2], [1.2, 0.1, 0.4]])
    ref = ReferenceTrajectory.from_points(leg.actuated_joint_names, names, [0.0, 1.0], q,
                                          t0=10.0)
    qd_slope = np.array([0.1, 0.2, 0.2])
    q_mid, qd_mid, _ = ref.sample(10.25)
    np.testing.assert_allclose(q_mid, [0.025, 0.25, 1.05])
    np.testing.assert_allclose(qd_mid, qd_slope)
    q_end, qd_end, qdd_end = ref.sample(12.0)
    np.testing.assert_allclose(q_end, [0.1, 0.4, 1.2])
    assert not qd_end.any() and not qdd_end.any()


@pytest.mark.parametrize('names,value', [(['hip_abad', 'hip_flex', 'ankle'], 0.0),
                                         (['hip_abad', 'hip_flex'], 0.0),
                                         (['hip_abad', 'hip_flex', 'knee'], np.nan)])
def test_reference_rejects_unknown_missing_or_nan(leg, names, value):
    """Unknown or missing joints and NaN values in a reference raise BadInputError."""
    q = np.full((1, len(names)), 0.5)
    q[0, -1] = value
    with pytest.raises(BadInputError):
        ReferenceTrajectory.from_points(leg.actuated_joint_names, names, [0.0], q)


def test_from_identification_uses_result_parameters(leg):
    """A model built from an identification result uses its pi, rotor inertia and friction."""
    pi = _perturbed(leg, 3)
    result = SimpleNamespace(pi=pi, reflected_inertia=np.array([0.01, 0.02, 0.03]),
                             friction=_friction)
    ff = from_identification(leg, result)
    direct = FeedforwardModel(leg, pi, np.array([0.01, 0.02, 0.03]), _friction)
    q, qd, qdd = np.array([0.1, 0.5, 1.0]), np.array([0.2, -0.3, 0.4]), np.array([1.0, 2, 3])
    np.testing.assert_allclose(ff.torque(q, qd, qdd), direct.torque(q, qd, qdd), atol=1e-12)


def test_compiled_friction_equals_the_friction_models():
    """The fast scalar friction evaluator equals every friction model kind on many speeds."""
    from legid_ros.core.friction.models import (AsymmetricCoulombViscous, CoulombViscous,
                                                ExponentialViscous, JointFriction, Piecewise,
                                                Stribeck)
    kinds = [CoulombViscous(f_c=0.6, f_v=0.1), Stribeck(f_c=0.5, f_s=0.9, f_v=0.1, v_s=0.07),
             Piecewise(v_th=0.3, f_sl=0.4, f_scl=0.3, v_sl=0.05, f_vl=0.2, f_sh=0.7,
                       f_vh=0.1, f1=0.02, f2=-0.01, f3=0.003),
             AsymmetricCoulombViscous(f_cp=0.5, f_cn=0.6, f_vp=0.1, f_vn=0.12, f_o=0.05),
             ExponentialViscous(f_c=0.5, f_v=0.2, f_o=0.03, delta=0.7)]
    rng = np.random.default_rng(4)
    speeds = np.concatenate([rng.normal(0, 0.02, 200), rng.uniform(-4, 4, 200), [0.0, 0.3]])
    for kind in kinds:
        jf = JointFriction(['a', 'b', 'c'], [kind, kind, kind])
        fast = compile_friction(jf)
        assert fast is not jf
        for v in speeds.reshape(-1, 3)[:60]:
            np.testing.assert_allclose(fast(v), jf(v), rtol=1e-12, atol=1e-12)
