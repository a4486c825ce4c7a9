"""Tests of legid_ros.core.friction.models."""

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.friction.models import (AsymmetricCoulombViscous, CoulombViscous,
                                            ExponentialViscous, JointFriction, Piecewise,
                                            Stribeck, model_from_dict)

V = np.linspace(-4.0, 4.0, 161)


@pytest.mark.parametrize('model', [
    CoulombViscous(0.5, 0.1), AsymmetricCoulombViscous(0.6, 0.4, 0.1, 0.2, 0.05),
    Stribeck(0.5, 0.8, 0.1, v_s=0.07), ExponentialViscous(0.5, 0.2, 0.03, delta=1.5)])
def test_linear_models_equal_their_regressor(model):
    """For every linear model, model(v) equals regressor(v) @ params."""
    assert np.allclose(model(V), model.regressor(V) @ model.params)
    assert model.regressor(V).shape == (V.size, len(model.names))


def test_coulomb_viscous_values():
    """Coulomb-viscous gives +-f_c + f_v v away from zero speed."""
    m = CoulombViscous(0.5, 0.1)
    assert m(np.array([2.0]))[0] == pytest.approx(0.7, abs=1e-9)
    assert m(np.array([-2.0]))[0] == pytest.approx(-0.7, abs=1e-9)


def test_asymmetric_model_differs_by_direction():
    """The asymmetric model uses positive/negative Coulomb levels and the offset."""
    m = AsymmetricCoulombViscous(f_cp=0.6, f_cn=0.4, f_vp=0.0, f_vn=0.0, f_o=0.05)
    assert m(np.array([1.0]))[0] == pytest.approx(0.65, abs=1e-6)
    assert m(np.array([-1.0]))[0] == pytest.approx(-0.35, abs=1e-6)


def test_stribeck_peak_at_low_speed():
    """Stribeck friction near zero speed approaches f_s, at high speed f_c + f_v v."""
    m = Stribeck(f_c=0.5, f_s=0.9, f_v=0.0, v_s=0.05)
    assert m(np.array([0.03]))[0] > 0.7
    assert m(np.array([1.0]))[0] == pytest.approx(0.5, abs=1e-6)


def test_piecewise_branches():
    """The piecewise model uses the low branch below v_th and the high branch above."""
    m = Piecewise(v_th=0.3, f_sl=0.9, f_scl=-0.3, v_sl=0.05, f_vl=0.1, f_sh=0.6, f_vh=0.2)
    assert m(np.array([0.1]))[0] == pytest.approx(m.low(np.array([0.1]))[0])
    assert m(np.array([1.0]))[0] == pytest.approx(0.8, abs=1e-9)
    assert m(np.array([-1.0]))[0] == pytest.approx(-0.8, abs=1e-9)


def test_joint_friction_vectorised_and_round_trip():
    """JointFriction maps (N, nj) to (N, nj) column by column and survives a dict round trip."""
    jf = JointFriction(['a', 'b'], [CoulombViscous(0.5, 0.1), Stribeck(0.4, 0.7, 0.05)])
    qd = np.column_stack([V, -V])
    out = jf(qd)
    assert out.shape == qd.shape
    assert np.allclose(out[:, 1], jf.models[1](-V))
    back = JointFriction.from_dict(jf.params)
    assert np.allclose(back(qd), out)
    assert np.allclose(jf(qd[3]), out[3])


def test_bad_inputs_raise():
    """Wrong parameter counts, joint counts and kinds raise BadInputError."""
    with pytest.raises(BadInputError):
        CoulombViscous().set_params([1.0, 2.0, 3.0])
    with pytest.raises(BadInputError):
        JointFriction(['a'], [CoulombViscous(), CoulombViscous()])
    with pytest.raises(BadInputError):
        JointFriction(['a'], [CoulombViscous()])(np.zeros((4, 2)))
    with pytest.raises(BadInputError):
        model_from_dict({'kind': 'Magic'})
