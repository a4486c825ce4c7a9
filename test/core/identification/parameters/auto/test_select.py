"""Choosing the auto set's levels from the data: effective sample size, the F-test, forward
selection on data generated outside the fitted model, and its report through identify()."""

import argparse

import numpy as np
import pytest
import yaml

from legid_ros.core.errors import BadInputError
from legid_ros.core.identification.api import identify
from legid_ros.core.identification.parameters.auto.report import (selection_lines,
                                                                  selection_markdown)
from legid_ros.core.identification.parameters.auto.select import select_levels
from legid_ros.core.identification.parameters.auto.stats import effective_sample_size, f_test
from legid_ros.core.identification.prepare import prepare
from legid_ros.core.identification.rows.linear import build_rows, total_mass_from_forces
from legid_ros.core.synthetic import NoiseModel, SyntheticConfig, simulate_biped


def test_effective_sample_size_of_white_and_ar1_series():
    """White noise keeps n_eff near n; an AR(1) series with coefficient phi has tau near
    (1 + phi) / (1 - phi) (19 for phi = 0.9)."""
    rng = np.random.default_rng(0)
    n = 40000
    n_eff, tau = effective_sample_size(rng.standard_normal(n))
    assert 0.9 < tau < 1.15 and n_eff == pytest.approx(n / tau)
    e = rng.standard_normal(n)
    x = np.zeros(n)
    for k in range(1, n):
        x[k] = 0.9 * x[k - 1] + e[k]
    _, tau = effective_sample_size(x)
    assert 19.0 * 0.8 < tau < 19.0 * 1.2


def test_f_test_is_calibrated_under_the_null_and_grows_with_the_fit():
    """On white data where the extra regressor does nothing, p < 0.05 about 5 % of the time;
    a larger RSS drop gives a larger F and a smaller p; a bad dof is refused."""
    rng = np.random.default_rng(1)
    n, hits, trials = 200, 0, 400
    a = rng.standard_normal((n, 3))
    for _ in range(trials):
        y = a[:, :2] @ [1.0, -2.0] + rng.standard_normal(n)
        rss = [float(np.sum((y - a[:, :k] @ np.linalg.lstsq(a[:, :k], y, rcond=None)[0]) ** 2))
               for k in (2, 3)]
        hits += f_test(rss[0], rss[1], 1, n, 3)[1] < 0.05
    assert 0.02 < hits / trials < 0.09
    f1, p1 = f_test(110.0, 100.0, 1, 500, 5)
    f2, p2 = f_test(120.0, 100.0, 1, 500, 5)
    assert f2 > f1 and p2 < p1
    with pytest.raises(BadInputError):
        f_test(110.0, 100.0, 1, 4.0, 5)


@pytest.fixture(scope='module')
def thigh_shift_rows(biped):
    """Rows of a noise-free synthetic biped whose thighs' COMs sit 20 mm down the leg from
    CAD's (masses at CAD, every other link at CAD): pinocchio's dynamics with the true
    parameters, filtered and differentiated by the prepare step."""
    quiet = NoiseModel(**{k: 0.0 for k in vars(NoiseModel())})
    rec = simulate_biped(SyntheticConfig(duration_s=25.0, rate_hz=100.0, seed=3, noise=quiet,
                                         truth={'thigh': (1.0, 0.02)}))
    samples = prepare(rec, biped)
    return rec, samples, build_rows(samples, biped, 'zmp')


def test_selection_picks_the_axial_com_of_the_shifted_group_only(biped, thigh_shift_rows):
    """The F-test selection estimates the thigh's COM along the leg and nothing else (the
    trunk's mass only takes up the total-mass equality)."""
    rec, samples, rows = thigh_shift_rows
    sel = select_levels(rows, biped, total_mass_from_forces(samples), rec.pi_cad)
    assert sel.levels == {'trunk': 'mass', 'thigh': 'axial', 'shank': 'none', 'foot': 'none'}
    assert 0 < sel.n_eff < sel.n_rows / 3  # correlated rows: far fewer independent ones
    chosen = [t for t in sel.tests if t.accepted]
    assert [(t.unit, t.level_to) for t in chosen] == [('thigh', 'axial')]
    assert chosen[0].p_value < 1e-6 and chosen[0].effect > 10  # 20 mm against 1 mm
    assert chosen[0].alike == []  # with the swing leg's motion the mass fits far worse
    table = {e['unit']: e for e in sel.table()}
    assert table['shank']['chosen'] == 'none' and table['shank']['tests']
    assert any('thigh' in line and 'axial' in line for line in sel.lines())
    assert '| thigh | axial |' in selection_markdown(sel.as_info())


def test_identify_on_the_auto_set_recovers_the_shift(biped, thigh_shift_rows):
    """identify(param_set='auto') chooses, reports the choice and recovers the 20 mm shift;
    levels given skip the choice."""
    rec, samples, _ = thigh_shift_rows
    res = identify(None, biped, 'zmp_qp', samples=samples, param_set='auto', pi_cad=rec.pi_cad)
    info = res.info['auto_selection']
    assert info['levels']['thigh'] == 'axial' and res.info['levels'] == info['levels']
    assert res.x[res.names.index('d_thigh')] == pytest.approx(0.02, abs=1e-3)
    assert res.consistency.ok
    given = identify(None, biped, 'zmp_qp', samples=samples, param_set='auto',
                     pi_cad=rec.pi_cad, levels={'trunk': 'mass', 'thigh': 'mass+axial'})
    assert 'auto_selection' not in given.info and given.names == ['m_trunk', 'm_thigh',
                                                                  'd_thigh']
    assert selection_lines(info)[0].startswith('parameter set chosen by the data')


def test_two_units_at_a_time_when_every_single_move_is_implausible(biped, monkeypatch):
    """Trunk COM 22 mm off and every leg group changed: each single move the data want takes
    up the others' errors beyond MAX_SPREAD, and the selection goes on by a pair of moves
    (both plausible) instead of stopping at CAD; the trunk's COM is then recovered within
    2 mm, and with pairs switched off nothing is estimated."""
    from legid_ros.core.identification.parameters.auto import select
    from legid_ros.core.identification.parameters.grouped import GroupedSet
    quiet = NoiseModel(**{k: 0.0 for k in vars(NoiseModel())})
    truth = {'trunk': (1.1, (0.02, 0.01, 0.0)), 'thigh': (0.8, 0.03), 'shank': (1.3, -0.03),
             'foot': (1.2, 0.0)}
    rec = simulate_biped(SyntheticConfig(duration_s=25.0, rate_hz=100.0, seed=3, noise=quiet,
                                         truth=truth))
    samples = prepare(rec, biped)
    rows = build_rows(samples, biped, 'zmp')
    sel = select_levels(rows, biped, total_mass_from_forces(samples), rec.pi_cad)
    paired = [t for t in sel.tests if t.accepted and t.paired_with]
    assert {t.unit for t in paired} == {'trunk', 'thigh'}
    assert all(t.spread <= select.MAX_SPREAD and t.p_value < 1e-6 for t in paired)
    first = sel.tests.index(paired[0])
    assert not any(t.accepted for t in sel.tests[:first])  # no single move was plausible
    assert any(t.spread > select.MAX_SPREAD and t.p_value < 1e-6 for t in sel.tests[:first])
    assert sel.levels['trunk'] == 'mass+com'
    assert any('with thigh' in line for line in sel.lines())
    assert 'a two-unit move' in selection_markdown(sel.as_info())
    res = identify(None, biped, 'zmp_qp', samples=samples, param_set='auto',
                   pi_cad=rec.pi_cad, levels=sel.levels)
    com = np.array([res.x[res.names.index(f'c{a}_trunk')] for a in 'xy'])
    grouped = GroupedSet(biped, pi_cad=rec.pi_cad, per_side=False)
    cad = dict(zip(grouped.names, grouped.cad()))
    assert np.abs(com - [cad['cx_trunk'] + 0.02, cad['cy_trunk'] + 0.01]).max() < 0.002
    monkeypatch.setattr(select, 'PAIRS', False)
    stalled = select_levels(rows, biped, total_mass_from_forces(samples), rec.pi_cad)
    assert stalled.levels == {'trunk': 'mass', 'thigh': 'none', 'shank': 'none', 'foot': 'none'}


def test_identify_command_auto_writes_the_table(tmp_path, run_a):
    """`legid identify --param-set auto` writes the selection into parameters.yaml and
    report.md (without --param-set the method's own set is used)."""
    from legid_ros.commands import identify as cmd
    rec_path = tmp_path / 'run.npz'
    run_a.save_npz(rec_path)
    parser = argparse.ArgumentParser()
    cmd.add_arguments(parser)
    plain = parser.parse_args(['--bag', str(rec_path), '--out', str(tmp_path / 'out')])
    assert 'param_set' not in cmd.method_options(plain)
    args = parser.parse_args(['--bag', str(rec_path), '--out', str(tmp_path / 'out'),
                              '--param-set', 'auto'])
    assert cmd.method_options(args)['param_set'] == 'auto'
    assert cmd.run(args) in (0, 3)
    doc = yaml.safe_load((tmp_path / 'out' / 'parameters.yaml').read_text())
    sel = doc['param_set_selection']
    assert sel['criterion'] == 'f_test' and set(sel['levels']) == {'trunk', 'thigh', 'shank',
                                                                    'foot'}
    assert doc['param_set_levels'] == sel['levels']
    report = (tmp_path / 'out' / 'report.md').read_text()
    assert '## Parameter set chosen by the data' in report



@pytest.fixture(scope='module')
def talos_thigh_rows(talos):
    """60 s of Talos's standing excitation in MuJoCo, the autoset bench's truth (every link
    changed, a box on the left knee, a trunk payload, thighs' COMs 10 mm down the leg)."""
    from legid_ros.bench.autoset import shifted_truth
    from legid_ros.bench.robots import PREP
    from legid_ros.core.identification.prepare import PrepareOptions
    from legid_ros.core.sim.described import simulate_described
    pi, _ = shifted_truth(talos, 0, 'leg_3', 0.010)
    run = simulate_described(talos, pi, duration_s=60.0, seed=0)
    samples = prepare(run, talos, PrepareOptions(**PREP))
    return run, samples, build_rows(samples, talos, 'zmp')


def test_three_d_com_only_when_its_lateral_part_is_significant(talos, talos_thigh_rows):
    """The thigh's mass is accepted with its 3-D COM fitting alike; the 3-D COM then loses
    its test against the axial shift in its place (p > alpha), so the thigh takes mass +
    axial (not mass + com, whose lateral part took up other errors); every group given the
    3-D COM won that test; no accepted candidate moved its group beyond MAX_SPREAD."""
    from legid_ros.core.identification.parameters.auto.levels import AutoSet
    from legid_ros.core.identification.parameters.auto.select import MAX_SPREAD
    run, samples, rows = talos_thigh_rows
    sel = select_levels(rows, talos, total_mass_from_forces(samples), run.pi_cad)
    assert sel.levels['leg_3'] == 'mass+axial'
    lateral = [t for t in sel.tests if 'axial' in t.level_from and 'com' in t.level_to]
    thigh = [t for t in lateral if t.unit == 'leg_3' and t.level_from == 'mass+axial']
    assert thigh and not thigh[0].accepted and thigh[0].p_value > sel.alpha
    axes = AutoSet(talos, {}).axes
    for unit, level in sel.levels.items():
        if 'com' in level and axes[unit] is not None:
            assert any(t.unit == unit and t.accepted for t in lateral)
    assert all(t.spread <= MAX_SPREAD for t in sel.tests if t.accepted and t not in lateral)
