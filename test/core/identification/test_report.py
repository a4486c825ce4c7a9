"""Tests of the identification report and the `legid identify` command."""

import argparse

import pytest
import yaml

from legid_ros.commands import identify as cmd


def test_identify_command_writes_urdf_yaml_report(tmp_path, run_a, biped):
    """`legid identify` on a recording writes a loadable URDF, YAML and a report with plot."""
    rec_path = tmp_path / 'run.npz'
    run_a.save_npz(rec_path)
    parser = argparse.ArgumentParser()
    cmd.add_arguments(parser)
    args = parser.parse_args(['--bag', str(rec_path), '--method', 'zmp_newton', '--param-set',
                              'reduced', '--out', str(tmp_path / 'out')])
    assert cmd.run(args) == 0
    out = tmp_path / 'out'
    doc = yaml.safe_load((out / 'parameters.yaml').read_text())
    assert abs(sum(v['mass_kg'] for v in doc['links'].values())
               - run_a.meta['total_mass_true_kg']) < 0.2
    from legid_ros.core.robot import load_robot
    ident = load_robot('biped', urdf=out / 'biped_identified.urdf')
    assert abs(ident.total_mass - doc['total_mass_kg']) < 1e-6
    report = (out / 'report.md').read_text()
    assert '| identified |' in report and '| truth |' in report and 'zmp.png' in report
    assert (out / 'zmp.png').stat().st_size > 10000
    # uncertainties in the YAML and the report
    unc = doc['uncertainty']
    assert set(unc['parameters']) >= {'m_trunk', 'lc_thigh'}
    assert all(v['std'] >= 0 for v in unc['parameters'].values())
    # each combination's flag follows its reported std (the data's and the held parameters'
    # pull): identifiable exactly when within 0.05 scale units
    assert unc['combinations'] and all(
        c['identifiable'] == (c['std_scale_units'] is not None and c['std_scale_units'] <= 0.05)
        for c in unc['combinations'])
    assert '## Uncertainty' in report and '| combination' in report


def test_inconsistent_set_report_and_yaml_say_so_at_their_top(tmp_path, run_a):
    """An inconsistent set (torque_ls on base parameters): run() returns 3, no URDF; the
    report opens with the failing links, their problems and a consistent method."""
    rec_path = tmp_path / 'run.npz'
    run_a.save_npz(rec_path)
    out = tmp_path / 'out'
    assert cmd.run(_args('--bag', str(rec_path), '--method', 'torque_ls', '--param-set', 'base',
                         '--out', str(out), '--quiet')) == cmd.EXIT_INCONSISTENT
    assert not list(out.glob('*.urdf'))
    doc = yaml.safe_load((out / 'parameters.yaml').read_text())
    assert doc['physically_consistent'] is False and 'sdp' in doc['advice']
    head = (out / 'report.md').read_text().split('```')[0]
    assert 'Not physically consistent: no URDF was written' in head
    assert all(f'`{link}`' in head for link in doc['inconsistent_links'])
    assert '--method sdp' in head


def test_recording_without_foot_wrench_refused_before_preparing(tmp_path, run_a, monkeypatch):
    """A .npz recording lacking a foot's wrench is refused for floating_qp (the option and the
    fix named) before any sample is prepared."""
    from legid_ros.core.errors import BadInputError
    from legid_ros.core.identification import prepare as prepare_module
    rec = run_a.slice(0, 300)
    rec.foot_wrench.pop('left')
    rec.save_npz(tmp_path / 'run.npz')
    monkeypatch.setattr(prepare_module, 'prepare', lambda *a, **k: pytest.fail('prepared'))
    with pytest.raises(BadInputError, match='--method floating_qp needs the 6-axis wrench'):
        cmd.run(_args('--bag', str(tmp_path / 'run.npz'), '--method', 'floating_qp',
                      '--out', str(tmp_path / 'o'), '--quiet'))
    assert not (tmp_path / 'o').exists()


def _args(*argv):
    parser = argparse.ArgumentParser()
    cmd.add_arguments(parser)
    return parser.parse_args(list(argv))
