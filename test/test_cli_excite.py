"""Tests of ``legid excite`` (legid_ros.commands.excite)."""

import yaml

from legid_ros.cli import main


def test_excite_writes_every_output(tmp_path, capsys):
    """A short biped design writes the YAML, CSV, reference bag, report and plots, and the
    YAML's knots have one position per joint."""
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
    assert 'combinations determined' in capsys.readouterr().out


def test_excite_unknown_robot_is_one_line(tmp_path, capsys):
    """An unknown robot ends with exit code 2 and one error line, no traceback."""
    code = main(['excite', '--robot', str(tmp_path / 'nope.yaml'), '--out', str(tmp_path)])
    assert code == 2
    assert 'Traceback' not in capsys.readouterr().err
