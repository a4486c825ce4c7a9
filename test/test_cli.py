"""Tests of the legid command's dispatcher (subcommands have their own tests), and of what
`legid identify` refuses before reading a bag and after identifying."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

LEGID = [str(Path(sys.executable).parent / 'legid')]


def _run(*args):
    return subprocess.run(LEGID + list(args), capture_output=True, text=True, timeout=120,
                          check=False)


def test_help_lists_every_command():
    """`legid --help` exits 0 and names every subcommand and bench."""
    out = _run('--help')
    assert out.returncode == 0
    for name in ('simulate', 'info', 'identify', 'replay', 'demo', 'save', 'reset', 'bench'):
        assert name in out.stdout


def test_unknown_command_and_bench_fail_cleanly():
    """An unknown subcommand or benchmark exits 2 with a usage line and no traceback."""
    for args in (('frobnicate',), ('bench', 'nothing'), ()):
        out = _run(*args)
        assert out.returncode == 2, args
        assert 'Traceback' not in out.stderr


@pytest.fixture(scope='module')
def short_bag(tmp_path_factory):
    """A 6 s synthetic biped bag (`legid simulate --duration 6`)."""
    bag = tmp_path_factory.mktemp('cli') / 'run6'
    out = _run('simulate', '--duration', '6', '--out', str(bag))
    assert out.returncode == 0, out.stderr
    return bag


def test_inconsistent_identification_writes_no_urdf_and_exits_3(short_bag, tmp_path):
    """torque_ls on base parameters (negative masses on a 6 s bag) writes the YAML and the
    report, both saying at their top it is not consistent, no URDF, one stderr line, exit 3."""
    out = tmp_path / 'ident'
    res = _run('identify', '--bag', str(short_bag), '--method', 'torque_ls', '--param-set',
               'base', '--out', str(out), '--quiet')
    assert res.returncode == 3, res.stderr
    assert not list(out.glob('*.urdf'))
    line = [x for x in res.stderr.splitlines() if 'URDF not written' in x]
    assert len(line) == 1 and 'mass' in line[0] and '--method sdp' in line[0]
    doc = yaml.safe_load((out / 'parameters.yaml').read_text())
    assert list(doc)[0] == 'physically_consistent' and doc['physically_consistent'] is False
    assert any(m['mass_kg'] < 0 for m in doc['links'].values())
    report = (out / 'report.md').read_text().splitlines()
    assert 'Not physically consistent' in report[2] and 'sdp' in '\n'.join(report[:20])
    assert 'Traceback' not in res.stderr
    assert 'exit status' in _run('identify', '--help').stdout


def test_primitives_without_primitives_exits_2_before_reading_the_bag(short_bag, tmp_path):
    """--method primitives on a description without primitive bodies ends with exit 2 and
    one line naming the fix, before the bag is read (its .mcap here is garbage)."""
    garbage = tmp_path / 'garbage'
    garbage.mkdir()
    (garbage / 'metadata.yaml').write_text((short_bag / 'metadata.yaml').read_text())
    (garbage / f'{short_bag.name}.mcap').write_bytes(b'\x00not an mcap' * 100)
    res = _run('identify', '--bag', str(garbage), '--robot', 'quadruped', '--method',
               'primitives', '--out', str(tmp_path / 'o'))
    assert res.returncode == 2
    assert res.stderr.count('\n') == 1 and "'primitives:' section" in res.stderr
    assert '--method primitives' in res.stderr and 'cannot read bag' not in res.stderr
    assert not (tmp_path / 'o').exists()
    # the same bag with a method it can run on is read, and fails as garbage
    res = _run('identify', '--bag', str(garbage), '--method', 'zmp_newton', '--out',
               str(tmp_path / 'o'))
    assert res.returncode == 2 and 'cannot read bag' in res.stderr
    # the accelerometer's base acceleration without the IMU: refused before the read too
    res = _run('identify', '--bag', str(garbage), '--base-acc', 'imu', '--no-imu', '--out',
               str(tmp_path / 'o'))
    assert res.returncode == 2 and '--base-acc imu' in res.stderr, res.stderr
    assert 'cannot read bag' not in res.stderr


def test_preparation_options_reach_the_samples_and_the_yaml(short_bag, tmp_path):
    """--base-acc imu and --min-contacts are used by the data preparation and written in
    parameters.yaml's `prepare` section (with the base and margin used); an unknown --base-acc
    or a negative --transition-s exits 2."""
    out = tmp_path / 'imu'
    res = _run('identify', '--bag', str(short_bag), '--base-acc', 'imu', '--min-contacts', '1',
               '--out', str(out), '--quiet')
    assert res.returncode in (0, 3), res.stderr
    doc = yaml.safe_load((out / 'parameters.yaml').read_text())
    assert doc['prepare']['base_acc'] == 'imu' and doc['prepare']['min_contacts'] == 1
    assert doc['prepare']['base'] == 'support' and doc['prepare']['transition_s'] == 0.0
    # the biped's protocol stands on one foot: asking for two leaves nothing, and says why
    res = _run('identify', '--bag', str(short_bag), '--min-contacts', '2', '--out',
               str(tmp_path / 'two'), '--quiet')
    assert res.returncode == 2 and 'fewer than 2 feet in contact' in res.stderr, res.stderr
    assert _run('identify', '--bag', str(short_bag), '--base-acc', 'gps').returncode == 2
    res = _run('identify', '--bag', str(short_bag), '--transition-s', '-0.5')
    assert res.returncode == 2 and "seconds >= 0 or 'auto'" in res.stderr, res.stderr
