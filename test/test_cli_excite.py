"""Tests of ``legid excite`` (legid_ros.commands.excite)."""

import re

import yaml

from legid_ros.cli import main
from legid_ros.core.robot import load_robot


def test_excite_writes_every_output(tmp_path, capsys):
    """A short biped design writes the YAML, CSV, reference bag, report (with the static
    ceiling) and plots, and the YAML's knots have one position per joint."""
    out = tmp_path / 'exc'
    code = main(['excite', '--robot', 'biped', '--duration', '40', '--budget', '3',
                 '--out', str(out)])
    assert code == 0
    for name in ('excitation.yaml', 'excitation.csv', 'identifiability.yaml',
                 'identifiability.txt', 'support_zmp.png', 'joint_ranges.png',
                 'predicted_std.png', 'reference/metadata.yaml'):
        assert (out / name).is_file(), name
    doc = yaml.safe_load((out / 'excitation.yaml').read_text())
    assert all(len(row) == len(doc['joint_names']) for row in doc['knots']['q'])
    header = (out / 'excitation.csv').read_text().splitlines()[0].split(',')
    assert len(header) == 1 + 3 * len(doc['joint_names'])
    assert 'quasi-static motion' in capsys.readouterr().out
    report = yaml.safe_load((out / 'identifiability.yaml').read_text())
    ceiling = report['static_ceiling']
    assert 0 < ceiling['rank'] < ceiling['combinations'] == report['designed']['combinations']
    assert 'static ceiling: at most' in (out / 'identifiability.txt').read_text()


def test_excite_unknown_robot_is_one_line(tmp_path, capsys):
    """An unknown robot ends with exit code 2 and one error line, no traceback."""
    code = main(['excite', '--robot', str(tmp_path / 'nope.yaml'), '--out', str(tmp_path)])
    assert code == 2
    assert 'Traceback' not in capsys.readouterr().err


def test_excite_plans_on_the_given_urdf(tmp_path):
    """--urdf (an identified model, here the biped with a 5 kg heavier trunk) is the model the
    design plans on: the YAML records it and its total mass; a missing one is one error line."""
    cad = load_robot('biped')
    text = cad.urdf_path.read_text()
    first = re.search(r'<mass value="([0-9.eE+-]+)"', text)
    heavier = text[:first.start(1)] + f'{float(first.group(1)) + 5.0:g}' + text[first.end(1):]
    urdf = tmp_path / 'identified.urdf'
    urdf.write_text(heavier)
    out = tmp_path / 'exc'
    code = main(['excite', '--robot', 'biped', '--urdf', str(urdf), '--duration', '40',
                 '--budget', '3', '--out', str(out)])
    assert code == 0
    doc = yaml.safe_load((out / 'excitation.yaml').read_text())
    assert doc['model']['urdf'] == str(urdf)
    assert abs(doc['model']['total_mass_kg'] - (cad.total_mass + 5.0)) < 1e-6
    assert main(['excite', '--robot', 'biped', '--urdf', str(tmp_path / 'nope.urdf'),
                 '--out', str(tmp_path / 'x')]) == 2
