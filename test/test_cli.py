"""Tests of the legid command's dispatcher (subcommands have their own tests)."""

import subprocess
import sys
from pathlib import Path

LEGID = [str(Path(sys.executable).parent / 'legid')]


def _run(*args):
    return subprocess.run(LEGID + list(args), capture_output=True, text=True, timeout=120,
                          check=False)


def test_help_lists_every_command():
    """`legid --help` exits 0 and names every subcommand and bench."""
    out = _run('--help')
    assert out.returncode == 0
    for name in ('simulate', 'info', 'identify', 'replay', 'demo', 'bench'):
        assert name in out.stdout


def test_unknown_command_and_bench_fail_cleanly():
    """An unknown subcommand or benchmark exits 2 with a usage line and no traceback."""
    for args in (('frobnicate',), ('bench', 'nothing'), ()):
        out = _run(*args)
        assert out.returncode == 2, args
        assert 'Traceback' not in out.stderr
