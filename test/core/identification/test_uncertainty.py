"""Standard deviations of an identified set against a Monte-Carlo over noise seeds."""

import numpy as np
import pytest

from legid_ros.core.identification.api import identify
from legid_ros.core.identification.prepare import PrepareOptions, prepare
from legid_ros.core.identification.uncertainty import core_uncertainty
from legid_ros.core.robot import load_robot
from legid_ros.core.synthetic import FrictionModel, NoiseModel, SyntheticConfig, simulate_biped
from legid_ros.core.synthetic.truth import truth_table

from noise_helpers import coloured, coverage_ratio

SEEDS = 20


@pytest.fixture(scope='module')
def robot():
    return load_robot('biped')


@pytest.fixture(scope='module')
def exact(robot):
    """A noise-free run inside the reduced set (Wu & Gao's Table 2) and its exact samples."""
    rec = simulate_biped(SyntheticConfig(duration_s=40.0, rate_hz=20.0, seed=4,
                                         noise=NoiseModel.none(), friction=FrictionModel.none(),
                                         truth=truth_table('table2')))
    samples = prepare(rec, robot, PrepareOptions(diff='exact', base='true', zmp_source='true',
                                                 cutoff_hz=None))
    return rec, samples


def test_reported_std_matches_monte_carlo_spread(robot, exact):
    """The spread over noise (``noise_only``) matches a Monte-Carlo over noise seeds."""
    rec, samples = exact
    values, uncs = [], []
    for seed in range(SEEDS):
        s = samples.take(slice(None))
        s.zmp = s.zmp + coloured(np.random.default_rng(seed), s.n, 0.001)  # [m]
        res = identify(rec, robot, 'zmp_newton', samples=s,
                       total_mass=rec.meta['total_mass_true_kg'])
        assert res.uncertainty is not None
        values.append(res.uncertainty.value)
        uncs.append(res.uncertainty)
    # along the combinations the noise determines (the held parameters' pull, which the
    # identifiable flag counts, is no noise: this run is inside the reduced set)
    ratio = coverage_ratio(values, uncs, by_noise=True)
    assert np.all(ratio > 1 / 1.5) and np.all(ratio < 1.5), ratio
    # per parameter, with the prior (linearised: the prior-held directions bend the estimate a
    # little): within a factor 2 of the spread of every core parameter
    per = np.mean([np.sqrt(np.diag(u.covariance_noise)) for u in uncs], axis=0)
    spread_x = np.array(values).std(axis=0, ddof=1)
    assert np.all(per / spread_x < 2.0) and np.all(per / spread_x > 0.5), per / spread_x


def test_held_parameter_and_unseen_direction(robot):
    """A held parameter has std 0; a direction without information has an infinite std."""
    rng = np.random.default_rng(0)
    from legid_ros.core.inertial import get_parameters
    pi = get_parameters(robot.model)
    from legid_ros.core.identification.uncertainty.core import _core_basis
    _, _, jac, _, names = _core_basis(robot, pi)
    n = 400
    # rows that see only the first core parameter and the trunk mass
    g_core = np.zeros((n, len(names)))
    g_core[:, 0] = rng.normal(size=n)
    g_core[:, names.index('m_trunk')] = rng.normal(size=n)
    jac_pi = g_core @ np.linalg.pinv(jac)
    unc = core_uncertainty(robot, pi, jac_pi, rng.normal(0, 1e-3, n), n, held=['m_foot'])
    assert unc.std[names.index('m_foot')] == 0.0
    assert np.isinf(unc.std_data[names.index('lc_shank')])
    assert np.isfinite(unc.std[0])
    d = unc.as_dict()
    assert set(d['parameters']) == set(names)
    assert any(not c['identifiable'] for c in d['combinations'])


def test_normal_statistics_form_matches_white_rows(robot):
    """With white residuals the sufficient-statistics form agrees with the block form."""
    from legid_ros.core.identification.uncertainty import normal_uncertainty
    from legid_ros.core.identification.uncertainty.core import _core_basis
    from legid_ros.core.inertial import get_parameters
    rng = np.random.default_rng(1)
    pi = get_parameters(robot.model)
    _, _, jac, _, names = _core_basis(robot, pi)
    n = 3000
    jac_pi = rng.normal(size=(n, len(names))) @ np.linalg.pinv(jac)
    r = rng.normal(0, 1e-3, n)
    block = core_uncertainty(robot, pi, jac_pi, r, n, n_blocks=60)
    normal = normal_uncertainty(robot, pi, jac_pi.T @ jac_pi, float(r @ r), n)
    ratio = np.sqrt(np.diag(normal.covariance_noise) / np.diag(block.covariance_noise))
    assert np.all(ratio > 0.75) and np.all(ratio < 1.33), ratio


def test_held_value_sensitivity_keeps_the_total_mass():
    """Moving a held mass moves the estimate along a direction that keeps the total mass in
    core-scale units ((c * scales) . sens = 0), whatever the scales of the masses."""
    import scipy.linalg as sla
    from legid_ros.core.identification.uncertainty.core import _held_sensitivity, _mass_plane
    rng = np.random.default_rng(2)
    c = np.array([1.0, 2.0, 2.0, 0.0])  # mass row; the last entry is a COM
    scales = np.array([3.0, 0.4, 0.7, 0.02])
    g = rng.normal(size=(50, 4))
    i = 1
    fixed_rows = np.vstack([_mass_plane(c, scales), np.eye(4)[[i]]])
    z = sla.null_space(fixed_rows)
    lam, vec = np.linalg.eigh((g @ z).T @ (g @ z))
    sens = _held_sensitivity(i, c * scales, g, z, vec, lam, np.ones(lam.size, bool))
    assert abs((c * scales) @ sens) < 1e-12
    assert sens[i] == pytest.approx(1.0)



def test_prior_pull_counts_the_offset_the_data_show(robot):
    """With a prior, the std of a direction the prior holds is its pull toward CAD: half the
    width (the floor) for an estimate at CAD, 0.8 of it once the determined combinations show
    the truth 0.8 width away from CAD."""
    from legid_ros.core.identification.uncertainty import normal_uncertainty
    from legid_ros.core.identification.uncertainty.core import _core_basis
    from legid_ros.core.inertial import get_parameters
    rng = np.random.default_rng(4)
    pi = get_parameters(robot.model)
    _, scales, jac, _, names = _core_basis(robot, pi)
    n = 3000
    cols = rng.normal(size=(n, len(names)))
    cols[:, 0] *= 1e-4  # the trunk's COM barely seen: the prior holds it
    jac_pi = cols @ np.linalg.pinv(jac)
    r = rng.normal(0, 1e-3, n)
    info = jac_pi.T @ jac_pi
    at_cad = normal_uncertainty(robot, pi, info, float(r @ r), n, prior=1.0)
    seen = at_cad.vectors[at_cad.combination_std < 0.01]
    assert len(seen) == len(names) - 2  # the total mass fixed, the trunk COM held
    step = 0.8 * rng.choice([-1.0, 1.0], len(seen)) @ seen
    moved = normal_uncertainty(robot, pi + jac @ step, info, float(r @ r), n, prior=1.0)
    assert at_cad.std[0] / scales[0] == pytest.approx(0.5, rel=0.05)
    assert moved.std[0] / scales[0] == pytest.approx(0.8, rel=0.08)


def test_fewer_blocks_than_directions_leaves_no_direction_without_variance(robot):
    """Every standard parameter's plane (129 directions) with a residual correlated over ~40
    samples (12 blocks of 1000 samples): the data-only covariance is within a factor 2 of the
    truth along every direction of the plane (the blocks alone: rank 11, zero along the rest)."""
    import scipy.linalg as sla
    from legid_ros.core.identification.uncertainty.core import _core_basis, _mass_plane
    from legid_ros.core.inertial import get_parameters
    rng = np.random.default_rng(4)
    pi = get_parameters(robot.model)
    _, scales, jac, c, _ = _core_basis(robot, pi, 'standard')
    n, per, sigma, rho = 1000, 6, 1e-3, 0.95
    g = rng.normal(size=(n * per, scales.size))  # rows independent: the scores are white
    e = rng.normal(0.0, sigma * np.sqrt(1 - rho ** 2), (n, per))
    r = np.empty_like(e)
    r[0] = rng.normal(0.0, sigma, per)
    for k in range(1, n):
        r[k] = rho * r[k - 1] + e[k]
    unc = core_uncertainty(robot, pi, g @ np.linalg.pinv(jac), r.ravel(), n, core='standard',
                           prior_width=0.0)
    assert unc.n_blocks < scales.size
    z = sla.null_space(_mass_plane(c, scales)[None, :])
    truth = sigma ** 2 * np.linalg.inv(z.T @ g.T @ g @ z)
    root = np.linalg.cholesky(np.linalg.inv(truth))
    ratio = np.sqrt(np.linalg.eigvalsh(root.T @ (z.T @ unc.covariance_data @ z) @ root))
    assert ratio.min() > 0.5 and ratio.max() < 2.0, (ratio.min(), ratio.max())


def test_normal_form_counts_model_error_as_the_block_form(robot):
    """An estimate moved from CAD along poorly determined combinations further than noise and
    prior allow (model error the residual does not show) widens the sufficient-statistics form
    as it widens the block form: one rule, the same data-only stds."""
    from legid_ros.core.identification.uncertainty import normal_uncertainty
    from legid_ros.core.identification.uncertainty.core import _core_basis
    from legid_ros.core.inertial import get_parameters
    rng = np.random.default_rng(5)
    pi = get_parameters(robot.model)
    _, _, jac, _, names = _core_basis(robot, pi, 'links')  # linear in pi
    n = 3000
    cols = rng.normal(size=(n, len(names)))
    weak = [i for i, name in enumerate(names) if name.endswith('.mcx')][:4]
    cols[:, weak] *= 5e-5  # four first moments poorly seen (data-only std ~0.37 widths)
    jac_pi = cols @ np.linalg.pinv(jac)
    r = rng.normal(0, 1e-3, n)
    info = jac_pi.T @ jac_pi
    at_cad = normal_uncertainty(robot, pi, info, float(r @ r), n, core='links')
    poor = at_cad.vectors[(at_cad.combination_std > 0.1) & np.isfinite(at_cad.combination_std)]
    assert len(poor) == 4
    moved_pi = pi + jac @ (3.0 * rng.choice([-1.0, 1.0], len(poor)) @ poor)  # 3 widths away
    normal = normal_uncertainty(robot, moved_pi, info, float(r @ r), n, core='links')
    block = core_uncertainty(robot, moved_pi, jac_pi, r, n, n_blocks=60, core='links')
    assert np.all(normal.combination_std[:4] > 2.0 * at_cad.combination_std[:4])
    ratio = normal.combination_std / block.combination_std
    ok = np.isfinite(ratio) & (block.combination_std > 0)
    assert np.all(ratio[ok] > 0.6) and np.all(ratio[ok] < 1.67), ratio



def test_partly_determined_combination_gets_the_posterior_not_the_prior_width():
    """Along a combination the data narrow below the prior width the std is the posterior of
    the data and the prior; one they do not narrow stays at the width (never tighter)."""
    from legid_ros.core.identification.uncertainty.core import _finish
    w = 1.0
    comb_std = np.array([0.1, 0.5, 1.5])  # determined, narrowed, not narrowed [w]
    rot = np.linalg.qr(np.random.default_rng(0).standard_normal((3, 3)))[0]
    cov_z = rot @ np.diag(comb_std ** 2 * 0.2) @ rot.T  # the estimator's own error: small
    cov, _ = _finish(None, None, 'reduced', np.eye(3), np.ones(3), np.eye(3), rot, cov_z,
                     comb_std, w, 0.0, None)
    std = np.sqrt(np.einsum('ij,ij->j', rot, cov @ rot))
    assert std[0] == pytest.approx(0.1 * np.sqrt(0.2))
    assert std[1] == pytest.approx(np.sqrt(1.0 / (1.0 / 0.25 + 1.0)))
    assert std[1] < w
    assert std[2] == pytest.approx(w)


def test_a_combination_the_held_parameters_pull_is_not_identifiable(robot):
    """Rows that see a core parameter well and an inertia the set holds at CAD alike: without
    the held width the combination is identifiable (data std under 0.05 prior widths); with it
    its std includes the held pull and it is not."""
    from legid_ros.core.identification.uncertainty.core import _core_basis
    from legid_ros.core.inertial import get_parameters
    rng = np.random.default_rng(2)
    pi = get_parameters(robot.model)
    _, _, jac, _, names = _core_basis(robot, pi)
    n = 2000
    x = rng.normal(size=n)
    g_core = np.zeros((n, len(names)))
    g_core[:, 0] = x
    g_core[:, names.index('m_trunk')] = rng.normal(size=n)
    jac_pi = g_core @ np.linalg.pinv(jac)
    jac_pi[:, 10 + 4] += 50.0 * x  # an inertia entry of the second body, held at CAD
    resid = rng.normal(0, 1e-3, n)
    plain = core_uncertainty(robot, pi, jac_pi, resid, n, unmodelled_width=0.0)
    held = core_uncertainty(robot, pi, jac_pi, resid, n)
    i = int(np.argmax(np.abs(plain.vectors[:, 0])))
    j = int(np.argmax(np.abs(held.vectors[:, 0])))
    assert plain.identifiable[i]
    assert not held.identifiable[j]
    assert held.combination_total_std[j] > 2.0 * plain.combination_total_std[i]


def test_a_core_reader_built_at_cad_reads_the_core_values_at_any_estimate():
    """core_reader (the set built once, at CAD) gives the core values _core_basis computes
    at another estimate, for every core."""
    from legid_ros.core.identification.uncertainty.core import _core_basis, core_reader
    from legid_ros.core.inertial import get_parameters
    from legid_ros.core.robot import load_robot
    robot = load_robot('biped')
    cad = get_parameters(robot.model)
    other = cad * (1 + 0.1 * np.random.default_rng(0).standard_normal(cad.size))
    for core in ('reduced', 'grouped', 'grouped_sides', 'standard', 'links'):
        assert core_reader(robot, cad, core)(other) == pytest.approx(
            _core_basis(robot, other, core)[0], abs=1e-12)


def test_held_units_posterior_follows_what_the_data_see_and_keeps_the_width_elsewhere():
    """Of two held units, the one the rows see gets a narrow posterior whose mean is the
    truth's offset there (the estimate's bias); the one they do not see keeps its prior width
    and no mean."""
    from legid_ros.core.identification.uncertainty.batch import _held_units_posterior
    rng = np.random.default_rng(3)
    m = 2000
    gz = rng.normal(size=(m, 2))
    u = np.zeros((m, 3))
    u[:, 0] = rng.normal(size=m)  # seen, independent of the plane
    # u[:, 1]: a unit no row sees; u[:, 2]: seen too
    u[:, 2] = rng.normal(size=m)
    offset = np.array([0.8, 0.0, 0.0])
    noise = 0.05 * rng.normal(size=m)
    r = u @ offset + noise
    r = r - gz @ np.linalg.lstsq(gz, r, rcond=None)[0]
    edges = np.linspace(0, m, 41).astype(int)
    widths = np.array([1.0, 1.0, 0.3])
    second = _held_units_posterior(u, gz, r, edges, widths)
    assert second[0, 0] == pytest.approx(0.8 ** 2, rel=0.05)  # the bias, narrow around it
    assert second[1, 1] == pytest.approx(1.0)  # unseen: its width
    assert second[2, 2] < 0.01 * 0.3 ** 2  # seen with no offset: far under its width


def test_held_auto_parameter_is_narrowed_by_what_the_data_say_of_it():
    """A parameter held at a value with a width that the rows see well gets the posterior of
    that width and the data (the biped's auto set held the thigh at CAD +- 20 % and its trunk
    COM std was 10x its error), one the rows do not see keeps the width."""
    import scipy.linalg as sla
    from legid_ros.core.identification.uncertainty.batch import _held_posterior
    from legid_ros.core.identification.uncertainty.core import _mass_plane
    rng = np.random.default_rng(4)
    m = 3000
    g = rng.normal(size=(m, 4))
    g[:, 3] = 0.0  # the last core parameter is not seen
    r = 0.1 * rng.normal(size=m)
    c = np.array([1.0, 1.0, 0.0, 0.0])
    mass_row = _mass_plane(c, np.ones(4))
    z = sla.null_space(mass_row[None, :])
    r = r - (g @ z) @ np.linalg.lstsq(g @ z, r, rcond=None)[0]
    edges = np.linspace(0, m, 31).astype(int)
    cov = _held_posterior(g, r, edges, mass_row, [], [2, 3], np.array([1.0, 1.0]), 1.0)
    assert cov[0, 0] < 0.01  # seen: the data's std (0.1 / sqrt(3000) per row scale)
    assert cov[1, 1] == pytest.approx(1.0, rel=1e-6)  # unseen: the width
