"""The conventions benchmark removes its work directory (bags, ~600 MB) unless asked to keep it."""
import argparse
import shutil
from pathlib import Path

import pytest

from legid_ros.bench import conventions


def _args(keep: bool) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    conventions.add_arguments(parser)
    return parser.parse_args(['--keep'] if keep else [])


@pytest.mark.parametrize('keep', [False, True])
def test_work_directory_removed_unless_kept(monkeypatch, keep):
    """A run that fails half-way still removes its directory; --keep leaves it."""
    seen = []

    def fake_run_in(args, root: Path):
        (root / 'bag').mkdir()
        seen.append(root)
        raise RuntimeError('half-way')

    monkeypatch.setattr(conventions, '_run_in', fake_run_in)
    with pytest.raises(RuntimeError):
        conventions.run(_args(keep))
    assert seen[0].exists() == keep
    if keep:
        shutil.rmtree(seen[0])
