"""Tests of legid_ros.core.description.hand_edits (hand-edit counts of descriptions and URDFs)."""

import base64
import hashlib
import sys

import pytest

from legid_ros.core.description.hand_edits import (describe_command, hand_edited_lines,
                                                   urdf_hand_edits)
from legid_ros.core.errors import BadInputError


def test_hand_edited_lines_counts_changed_added_and_removed_lines_not_comments():
    """A changed line counts twice (old and new), added and removed lines once, comments never."""
    generated = 'a: 1\nb: 2\n# note\nc: 3\n'
    edited = 'a: 1\nb: 5\n# other note\nd: 4\n'
    assert hand_edited_lines(generated, generated) == 0
    assert hand_edited_lines(generated, edited) == 4


def test_describe_command_reads_the_first_line_and_refuses_other_text():
    """The recorded command comes back as arguments; a file without one is refused."""
    text = '# written by `legid describe --urdf r.urdf --feet a,b --lock \'arm_*=0\'`.\nx: 1\n'
    assert describe_command(text) == ['legid', 'describe', '--urdf', 'r.urdf', '--feet', 'a,b',
                                      '--lock', 'arm_*=0']
    with pytest.raises(BadInputError):
        describe_command('robot: x\n')


def test_urdf_hand_edits_compares_against_the_installing_distribution(tmp_path, monkeypatch):
    """An installed URDF is 0 edits as installed, 1 once changed; an unlisted file is unknown."""
    site = tmp_path / 'site'
    urdf = site / 'fake_robots' / 'robot.urdf'
    urdf.parent.mkdir(parents=True)
    urdf.write_text('<robot name="r"/>\n')
    digest = base64.urlsafe_b64encode(hashlib.sha256(urdf.read_bytes()).digest())
    info = site / 'fake_robots-1.0.dist-info'
    info.mkdir()
    (info / 'METADATA').write_text('Metadata-Version: 2.1\nName: fake-robots\nVersion: 1.0\n')
    (info / 'RECORD').write_text(f'fake_robots/robot.urdf,sha256={digest.rstrip(b"=").decode()},'
                                 f'{urdf.stat().st_size}\n')
    monkeypatch.setattr(sys, 'path', [str(site)] + sys.path)
    assert urdf_hand_edits(urdf) == 0
    urdf.write_text('<robot name="r"><link name="added"/></robot>\n')
    assert urdf_hand_edits(urdf) == 1
    other = tmp_path / 'mine.urdf'
    other.write_text('<robot name="m"/>\n')
    assert urdf_hand_edits(other) is None
