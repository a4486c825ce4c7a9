"""Tests of the identification report and the `legid identify` command."""

import argparse

import yaml

from legid_ros.commands import identify as cmd


def test_identify_command_writes_urdf_yaml_report(tmp_path, run_a, biped):
    """`legid identify` on a recording writes a loadable URDF, YAML and a report with plot."""
    rec_path = tmp_path / 'run.npz'
    run_a.save_npz(rec_path)
    parser = argparse.ArgumentParser()
    cmd.add_arguments(parser)
    args = parser.parse_args(['--bag', str(rec_path), '--method', 'zmp_qp', '--out',
                              str(tmp_path / 'out')])
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
    assert any(c['identifiable'] for c in unc['combinations'])
    assert '## Uncertainty' in report and '| combination' in report
