"""Tests of legid_ros.bench.excitation (the pass rule and the report)."""

from legid_ros.bench.excitation import TARGETS, _passed
from legid_ros.bench.excitation_report import write_report

GOOD = {'fell': False, 'identifiable_fraction': 0.7, 'mass_err_pct_max_identifiable': 1.0,
        'com_err_mm_max_identifiable': 2.0, 'link_mass_err_pct_median': 3.0,
        'slip_mm_max': 1.0, 'limit_violations': 0, 'self_collisions': 0}


def test_pass_rule_directions():
    """The fraction must reach its target from above, every other figure stay under it; a fall
    or a missing figure fails."""
    assert _passed({'robots': {'a': dict(GOOD)}})
    assert not _passed({'robots': {'a': {**GOOD, 'identifiable_fraction': 0.5}}})
    assert not _passed({'robots': {'a': {**GOOD, 'self_collisions': 3}}})
    assert not _passed({'robots': {'a': {**GOOD, 'fell': True}}})
    assert not _passed({'robots': {'a': {k: v for k, v in GOOD.items()
                                         if k != 'slip_mm_max'}}})


def test_report_lists_every_robot(tmp_path):
    """excitation.md has one column per robot and the fraction row."""
    res = {'robots': {'talos': GOOD, 'biped': GOOD}, 'targets': TARGETS,
           'param_set': 'grouped_sides', 'duration_s': 120.0, 'budget_s': 10.0, 'passed': True}
    write_report(res, tmp_path)
    text = (tmp_path / 'excitation.md').read_text()
    assert '| figure | talos | biped |' in text
    assert '| identifiable_fraction | 0.7 | 0.7 |' in text


def test_report_of_a_search_without_a_time_budget(tmp_path):
    """A run with no design budget (the bench's default) writes its report, its command
    without --budget."""
    res = {'robots': {'biped': GOOD}, 'targets': TARGETS, 'param_set': 'grouped_sides',
           'duration_s': 120.0, 'budget_s': None, 'passed': True}
    write_report(res, tmp_path)
    text = (tmp_path / 'excitation.md').read_text()
    assert '`legid bench excitation --duration 120`' in text


def test_locomotion_only_runs_no_robot_and_no_fixed_base_leg(tmp_path):
    """``--locomotion-only`` (here with the locomotion skipped too) designs no robot's
    excitation and runs no fixed-base leg, and still writes its report."""
    import argparse

    from legid_ros.bench.excitation import add_arguments, run
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(['--locomotion-only', '--skip-locomotion'])
    args.out = str(tmp_path)
    res = run(args)
    assert res['robots'] == {} and 'fixed_base_leg' not in res
    assert (tmp_path / 'excitation.md').exists()
