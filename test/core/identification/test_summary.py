"""What the data determine: physical quantities, their std against a truth outside the model."""

import numpy as np
import pytest

from legid_ros.core.identification.api import identify
from legid_ros.core.identification.summary import summarize, values
from legid_ros.core.identification.uncertainty import core_uncertainty
from legid_ros.core.inertial import get_parameters
from legid_ros.core.robot import load_robot
from legid_ros.core.synthetic import SyntheticConfig, simulate_biped
from legid_ros.core.synthetic.truth import truth_table

SEEDS = 4


@pytest.fixture(scope='module')
def robot():
    return load_robot('biped')


@pytest.fixture(scope='module')
def results(robot):
    """zmp_newton on the grouped set per side, truth outside every set (3-D COM shifts, legs
    unlike, inertias scaled, a payload off the trunk axis), one run per seed."""
    out = []
    for seed in range(SEEDS):
        rec = simulate_biped(SyntheticConfig(duration_s=40.0, rate_hz=20.0, seed=seed,
                                             truth=truth_table('out_of_model')))
        res = identify(rec, robot, 'zmp_newton', param_set='grouped_sides')
        out.append((rec, res))
    return out


def test_determined_quantities_have_honest_z_scores(robot, results):
    """Over seeds, every quantity called determined is within 3 reported std of the truth, and
    the whole-robot ones lead (total mass, whole-body COM)."""
    zs = []
    for rec, res in results:
        ph = res.physical
        assert ph is not None
        assert ph.quantities[0].name == 'total mass' and ph.quantities[0].determined
        truth = values(robot, rec.pi_true, ph.posture)
        det = [q for q in ph.quantities if q.determined]
        assert any(q.name.startswith('whole-body COM') for q in det)
        zs += [abs(q.value - truth[q.name]) / q.std for q in det]
    assert max(zs) <= 3.0, max(zs)


def test_undetermined_directions_report_at_least_the_prior_width(robot):
    """Rows that see two core parameters only, with a prior: every combination the data
    determine worse than the prior width is reported at least that wide, and every summary
    quantity not determined at least its prior width."""
    rng = np.random.default_rng(0)
    pi = get_parameters(robot.model)
    from legid_ros.core.identification.uncertainty.core import _core_basis
    _, _, jac, _, names = _core_basis(robot, pi)
    n = 400
    g_core = np.zeros((n, len(names)))
    g_core[:, 0] = rng.normal(size=n)
    g_core[:, names.index('m_trunk')] = rng.normal(size=n)
    jac_pi = g_core @ np.linalg.pinv(jac)
    unc = core_uncertainty(robot, pi, jac_pi, rng.normal(0, 1e-3, n), n, prior=1e-4)
    width = unc.prior_width
    weak = [(v, s) for v, s in zip(unc.vectors, unc.combination_std) if s > width]
    assert weak
    for v, _ in weak:
        assert unc.std_along(v) >= width * (1 - 1e-9)
    ph = summarize(robot, pi, unc)
    held = [q for q in ph.quantities if not q.determined]
    assert held and all(q.std >= q.prior_width * (1 - 1e-9) for q in held)


def test_no_inf_in_what_is_printed(robot, results):
    """The CLI lines, the report's markdown and the YAML form never print 'inf'."""
    _, res = results[0]
    text = '\n'.join([res.summary(), '\n'.join(res.physical.markdown()),
                      '\n'.join(res.uncertainty.lines()), str(res.physical.as_dict()),
                      str(res.uncertainty.as_dict())])
    assert 'inf' not in text.replace('information', '')
    assert 'not determined: the std is the width of the prior toward CAD' in text


def test_prior_width_counts_in_the_core_std(robot):
    """With a strong prior and no information, a core parameter's std is its prior width
    (scale), not the prior-shrunk noise: the error there is CAD's."""
    rng = np.random.default_rng(1)
    pi = get_parameters(robot.model)
    from legid_ros.core.identification.uncertainty.core import _core_basis
    _, scales, jac, _, names = _core_basis(robot, pi)
    n = 300
    g_core = np.zeros((n, len(names)))
    g_core[:, 0] = rng.normal(size=n)
    jac_pi = g_core @ np.linalg.pinv(jac)
    unc = core_uncertainty(robot, pi, jac_pi, rng.normal(0, 1e-3, n), n, prior=1e3,
                           unmodelled_width=0.0)
    k = names.index('lc_shank')
    assert np.isinf(unc.std_data[k])
    assert unc.std[k] >= 0.9 * scales[k]


def test_online_statistics_give_the_same_summary_form(robot):
    """The sufficient-statistics form (the online estimator's) carries what the summary needs:
    the total mass and the whole-body COM seen by rows that see them are determined."""
    from legid_ros.core.identification.rows.regressors import zmp_rows
    from legid_ros.core.identification.prepare import prepare
    from legid_ros.core.identification.rows.linear import regressors_for
    from legid_ros.core.identification.uncertainty import normal_uncertainty
    rec = simulate_biped(SyntheticConfig(duration_s=30.0, rate_hz=20.0, seed=7))
    s = prepare(rec, robot)
    # rows divided by the expected noise (2 mm), as the online estimator's
    a = zmp_rows(regressors_for(s, robot, []).wrench, s.zmp, s.fz) / 0.002
    pi = rec.pi_true
    r = a @ pi
    unc = normal_uncertainty(robot, pi, a.T @ a, float(r @ r), len(r), prior=len(s.zmp) * 1e-2,
                             core='grouped_sides')
    ph = summarize(robot, pi, unc)
    det = {q.name for q in ph.quantities if q.determined}
    assert 'total mass' in det and 'whole-body COM x (base frame)' in det



def test_a_link_value_a_symmetric_group_cannot_move_is_never_determined(robot):
    """On the symmetric grouped core a link's COM is its group's: however small its std, the
    left shank's COM is not called determined (the data decided the pair), while the trunk,
    a group of its own, can be."""
    from legid_ros.core.identification.uncertainty.core import _core_basis
    rng = np.random.default_rng(1)
    pi = get_parameters(robot.model)
    _, _, jac, _, names = _core_basis(robot, pi, 'grouped')
    n = 4000
    g = rng.normal(size=(n, len(names))) * 50.0  # every core parameter seen sharply
    jac_pi = g @ np.linalg.pinv(jac)
    r = 1e-4 * rng.normal(size=n)
    # nothing counted for the split (a width of 0): only the rule keeps the link undecided
    unc = core_uncertainty(robot, pi, jac_pi, r, n, core='grouped', prior_width=1.0,
                           unmodelled_width=0.0)
    ph = summarize(robot, pi, unc)
    by = {q.name: q for q in ph.quantities}
    assert by['trunk COM x (trunk frame)'].determined
    assert not by['l_shank COM x'].determined and by['l_shank COM x'].in_group
    assert not by['l_shank mass'].determined
    assert not by['trunk COM x (trunk frame)'].in_group
    assert "split between the group's links is CAD's" in by['l_shank COM x'].text()
    assert 'group fitted, split from CAD' in '\n'.join(ph.markdown())
