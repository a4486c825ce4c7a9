"""Tests of the ``legid simulate`` and ``legid info`` commands, run as subprocesses."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np

from legid_ros.bag.recording_io import read_bag

LEGID = str(Path(sys.executable).parent / 'legid')


def _legid(*args, cwd=None):
    return subprocess.run([LEGID, *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def test_simulate_then_info(tmp_path):
    """simulate writes a readable bag of the asked length, rate and seed; info lists it.

    ``--out run.mcap`` writes the bag directory run/ holding run.mcap (as ros2 bag record).
    """
    out = tmp_path / 'run.mcap'
    res = _legid('simulate', '--robot', 'biped', '--duration', '1', '--rate', '200', '--seed',
                 '3', '--noise', 'none', '--out', str(out))
    assert res.returncode == 0, res.stderr
    assert 'wrote' in res.stdout and (tmp_path / 'run' / 'metadata.yaml').is_file()
    assert (tmp_path / 'run' / 'run.mcap').is_file() and not out.exists()
    rec = read_bag(out)
    assert rec.n == 200 and rec.meta['seed'] == 3 and rec.meta['noise']['fsr_std'] == 0.0
    assert abs(rec.rate - 200.0) < 1e-6
    np.testing.assert_allclose((rec.fsr['right'] @ [1, 1, -1, -1]) * 0.0625
                               / rec.fsr['right'].sum(axis=1), rec.zmp_true[:, 0], atol=1e-9)
    info = _legid('info', str(out))
    assert info.returncode == 0, info.stderr
    line = next(x for x in info.stdout.splitlines() if x.startswith('/joint_states'))
    assert line.split()[1:] == ['sensor_msgs/msg/JointState', '200', '200.00']
    raw = next(x for x in info.stdout.splitlines() if x.startswith('/left_foot/wrench_raw'))
    assert raw.split()[1:] == ['geometry_msgs/msg/WrenchStamped', '200', '200.00']
    assert sorted(rec.ankle_ft) == ['left', 'right'] and rec.ankle_ft['left'].shape == (200, 6)
    assert 'span:     0.995 s' in info.stdout


def test_simulate_sqlite3(tmp_path):
    """--storage sqlite3 writes a .db3 bag, --truth cad keeps CAD truth, reuse needs --force."""
    out = tmp_path / 'run'
    args = ['simulate', '--duration', '0.3', '--rate', '100', '--storage', 'sqlite3',
            '--truth', 'cad', '--out', str(out)]
    assert _legid(*args).returncode == 0
    assert list(out.glob('*.db3'))
    rec = read_bag(out)
    np.testing.assert_array_equal(rec.pi_true, rec.pi_cad)
    again = _legid(*args)
    assert again.returncode == 2 and 'exists' in again.stderr
    assert _legid(*args, '--force').returncode == 0


def test_bad_input_one_line(tmp_path):
    """Missing file, unknown robot, unreadable bag, non-biped: one line, exit 2, no traceback."""
    garbage = tmp_path / 'garbage'
    garbage.write_text('no bag here')
    cases = [('info', str(tmp_path / 'missing')), ('info', str(garbage)),
             ('simulate', '--robot', 'nosuchrobot', '--out', str(tmp_path / 'a')),
             ('simulate', '--robot', 'quadruped', '--out', str(tmp_path / 'b')),
             ('simulate', '--duration', '-2', '--out', str(tmp_path / 'c'))]
    for case in cases:
        res = _legid(*case)
        assert res.returncode == 2, case
        assert 'Traceback' not in res.stderr and len(res.stderr.strip().splitlines()) == 1, case
        assert res.stderr.startswith('legid: error:'), case


def test_engine_mujoco_dispatch(tmp_path):
    """--engine mujoco runs the MuJoCo helper when present, else fails with one clear line."""
    out = tmp_path / 'mj'
    res = _legid('simulate', '--engine', 'mujoco', '--duration', '0.3', '--out', str(out))
    if importlib.util.find_spec('legid_ros.core.sim.mujoco_biped') is None:
        assert res.returncode == 2 and 'not available' in res.stderr
    else:
        assert res.returncode == 0, res.stderr
        assert read_bag(out).meta['engine'] == 'mujoco'


def test_truth_option_accepts_table2_and_its_former_spelling():
    """--truth table2 (default) and its former spelling seed000 both select Wu & Gao's Table 2."""
    import argparse

    from legid_ros.commands.simulate import add_arguments
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert parser.parse_args([]).truth == 'table2'
    for value in ('table2', 'seed000', 'cad'):
        assert parser.parse_args(['--truth', value]).truth == value
