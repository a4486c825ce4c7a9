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


def test_loaded_piecewise_model_must_be_continuous():
    """A piecewise model loaded from a dict (YAML) is checked at its threshold: a fitted one
    loads, one whose branches jump raises an error naming the joint, both branch values and
    the f_sh that closes the gap (which then loads)."""
    from legid_ros.core.friction.fitting import fit_piecewise
    v = np.r_[np.geomspace(0.005, 0.3, 12), np.linspace(0.35, 4.0, 14)]
    fitted = fit_piecewise(v, 0.5 * np.tanh(200 * v) + 0.1 * v, mirror=True, v_th=0.3,
                           n_particles=10, iters=20).model
    back = JointFriction.from_dict({'knee': fitted.as_dict()})
    assert np.allclose(back(np.column_stack([V])), fitted(V)[:, None])
    bad = dict(fitted.as_dict(), f_sh=fitted.f_sh + 0.2)
    with pytest.raises(BadInputError) as err:
        JointFriction.from_dict({'hip': CoulombViscous(0.1, 0.0).as_dict(), 'knee': bad})
    msg = str(err.value)
    lo = fitted.low(np.array([0.3]))[0]
    assert "joint 'knee'" in msg and f'{lo:.6g} N.m' in msg
    assert f'{lo + 0.2:.6g} N.m' in msg and f'f_sh = {fitted.f_sh:.6g}' in msg
    # a jump within the tolerance (1e-3 N.m or 1 %) loads: rounding in a hand-edited YAML
    model_from_dict(dict(fitted.as_dict(), f_sh=fitted.f_sh + 5e-4), joint='knee')
