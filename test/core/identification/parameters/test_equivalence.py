"""Tests of legid_ros.core.identification.parameters.equivalence: the ZMP invariance of the ZMP
reduced set (Wu & Gao 2021)."""

import numpy as np
import pytest

from legid_ros.core.identification.api import identify
from legid_ros.core.identification.parameters.equivalence import (equivalent_reduced,
                                                                  error_mod_invariance,
                                                                  zmp_signature)
from legid_ros.core.identification.parameters.sets import ReducedSet
from legid_ros.core.identification.prepare import PrepareOptions, prepare
from legid_ros.core.identification.rows.linear import regressors_for
from legid_ros.core.identification.rows.zmp import model_zmp
from legid_ros.core.synthetic import (FrictionModel, NoiseModel, SyntheticConfig,
                                      simulate_biped)

EXACT = PrepareOptions(diff='exact', base='true', zmp_source='true', cutoff_hz=None)


@pytest.fixture(scope='module')
def exact_run(biped):
    """Noise-free 10 s run at 50 Hz, its exact samples and wrench regressors."""
    rec = simulate_biped(SyntheticConfig(duration_s=10.0, rate_hz=50.0, seed=21,
                                         noise=NoiseModel.none(),
                                         friction=FrictionModel.none()))
    s = prepare(rec, biped, EXACT)
    return rec, s, regressors_for(s, biped, []).wrench


def test_true_zmp_source_keeps_measured_vertical_force(biped, exact_run):
    """zmp_source='true' pairs the true ZMP with the measured fz (true mass, not CAD)."""
    rec, s, _ = exact_run
    res = identify(rec, biped, 'zmp_newton', samples=s, check=False)
    assert res.total_mass == pytest.approx(rec.meta['total_mass_true_kg'], rel=1e-3)
    assert abs(res.total_mass - biped.total_mass) > 2.0


def test_thigh_shank_foot_transfer_leaves_the_zmp_exactly_unchanged(biped, exact_run):
    """0.3 kg more thigh mass (others refitted) reproduces the true ZMP to 1e-12 m."""
    rec, _, wrench = exact_run
    red = ReducedSet(biped)
    xt = red.from_standard(rec.pi_true)
    eq = equivalent_reduced(wrench, xt, red, {5: xt[5] + 0.3})
    assert eq.zmp_rms_m < 1e-12
    assert eq.x[6] < xt[6] - 0.15 and eq.x[7] < xt[7]  # shank and foot gave the mass
    z = model_zmp(wrench, red.to_standard(eq.x))[0]
    assert np.abs(z - model_zmp(wrench, rec.pi_true)[0]).max() < 1e-11
    # a foot-mass change with the thigh held is seen, though only at the micrometre level
    foot = equivalent_reduced(wrench, xt, red, {5: xt[5], 7: xt[7] + 0.3})
    assert 1e-9 < foot.zmp_rms_m < 1e-4


def test_signature_and_error_modulo_invariance(biped, exact_run):
    """One direction has no ZMP signature; errors along it vanish modulo the invariance."""
    rec, _, wrench = exact_run
    red = ReducedSet(biped)
    xt = red.from_standard(rec.pi_true)
    sig = zmp_signature(wrench, xt, red)
    assert sig.rms_m[0] < 1e-6 * sig.rms_m[1] and sig.rms_m[-1] > 1e-3
    assert len(sig.lines()) == 7 and 'm_thigh' in sig.lines()[0]
    moved = equivalent_reduced(wrench, xt, red, {5: xt[5] - 0.2}).x
    err = error_mod_invariance(wrench, moved, xt, red)
    assert err['thigh_offset_kg'] == pytest.approx(-0.2)
    assert np.abs(err['mass_err_pct']).max() < 1e-6 and np.abs(err['com_err_mm']).max() < 1e-6
    off = moved.copy()
    off[7] += 0.05
    assert np.abs(error_mod_invariance(wrench, off, xt, red)['mass_err_pct']).max() > 3.0
