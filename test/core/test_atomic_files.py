"""Atomic writes, damaged files moved aside, safe names (legid_ros.core.atomic_files)."""

import os

import numpy as np
import pytest

from legid_ros.core.atomic_files import (atomic_path, inside, quarantine, remove_stale_temps,
                                         safe_stem, temp_path, write_text)
from legid_ros.core.errors import BadInputError


def test_atomic_write_replaces_whole_file_and_leaves_no_temp(tmp_path):
    """The destination holds the new content and no temporary file remains."""
    path = tmp_path / 'sub' / 'a.yaml'
    write_text(path, 'old')
    write_text(path, 'new')
    assert path.read_text() == 'new'
    assert sorted(p.name for p in path.parent.iterdir()) == ['a.yaml']


def test_failed_write_keeps_the_old_file(tmp_path):
    """An exception inside the block leaves the previous file untouched and removes the temp."""
    path = tmp_path / 'state.npz'
    np.savez(path, x=np.arange(3))
    with pytest.raises(RuntimeError):
        with atomic_path(path) as tmp:
            tmp.write_bytes(b'partial')
            raise RuntimeError('killed')
    with np.load(path) as z:
        assert z['x'].tolist() == [0, 1, 2]
    assert [p.name for p in tmp_path.iterdir()] == ['state.npz']


def test_numpy_writes_exactly_at_the_temp_path(tmp_path):
    """The temporary path keeps the suffix, so numpy.savez adds nothing to it."""
    path = tmp_path / 'state.npz'
    with atomic_path(path) as tmp:
        assert tmp.suffix == '.npz' and tmp.parent == tmp_path
        np.savez(tmp, y=np.ones(2))
    with np.load(path) as z:
        assert z['y'].tolist() == [1.0, 1.0]


def test_stale_temps_of_a_killed_writer_are_removed(tmp_path):
    """Temporary files left next to a path are found and deleted; other files stay."""
    path = tmp_path / 'state.npz'
    temp_path(path).write_bytes(b'x')
    (tmp_path / 'other.npz').write_bytes(b'y')
    assert remove_stale_temps(path) == 1
    assert [p.name for p in tmp_path.iterdir()] == ['other.npz']


def test_quarantine_renames_with_a_time_tag_and_never_overwrites(tmp_path):
    """A damaged file becomes <name>.corrupt-<time>; a second one gets its own name."""
    path = tmp_path / 'state.npz'
    path.write_bytes(b'truncated')
    first = quarantine(path, now=0.0)
    path.write_bytes(b'again')
    second = quarantine(path, now=0.0)
    assert first.name == 'state.npz.corrupt-19700101T000000Z'
    assert second != first and second.read_bytes() == b'again' and not path.exists()


@pytest.mark.parametrize('name, stem', [('../../escaped', 'escaped'), ('my robot', 'my_robot'),
                                        ('/etc/passwd', 'etc_passwd'), ('..', 'robot'),
                                        ('biped', 'biped'), ('a..b', 'a_b')])
def test_safe_stem_keeps_names_inside_a_directory(name, stem):
    """Names from input lose separators, leading dots and '..'."""
    assert safe_stem(name) == stem
    assert os.sep not in safe_stem(name)


def test_inside_refuses_paths_that_leave_the_directory(tmp_path):
    """A relative path climbing out of the output directory is refused."""
    assert inside(tmp_path, 'a/b.urdf') == (tmp_path / 'a' / 'b.urdf').resolve()
    with pytest.raises(BadInputError):
        inside(tmp_path, '../../escaped_identified.urdf')
