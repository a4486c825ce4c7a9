"""Tests of the paths a bag is written to and read from: suffixes, bare storage files,
recorder directories without metadata.yaml (legid_ros.bag.discover)."""

import shutil
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

import legid_ros.bag.recording_io as recording_io
from legid_ros.bag.discover import locate_bag, output_bag
from legid_ros.bag.recording_io import bag_info, read_bag, write_bag
from legid_ros.core.errors import BadInputError
from legid_ros.core.robot import load_robot
from legid_ros.core.synthetic import NoiseModel, SyntheticConfig, simulate_biped

SIGNALS = ('t', 'q', 'qd', 'tau', 'imu_quat', 'imu_gyro', 'imu_acc', 'zmp_true',
           'base_pose_true', 'pi_true', 'pi_cad')


@pytest.fixture(scope='module')
def robot():
    return load_robot('biped')


@pytest.fixture(scope='module')
def rec(robot):
    return simulate_biped(SyntheticConfig(duration_s=0.4, rate_hz=500.0, seed=5,
                                          noise=NoiseModel()), robot)


@pytest.fixture(scope='module')
def bag(tmp_path_factory, rec, robot):
    """A bag directory written by write_bag and its Recording read back."""
    path = write_bag(rec, tmp_path_factory.mktemp('bag') / 'run', robot=robot)
    return path, read_bag(path, robot)


def assert_same(got, ref):
    """Every signal, foot entry and meta fact (except the source path) is equal."""
    for name in SIGNALS:
        np.testing.assert_array_equal(getattr(got, name), getattr(ref, name), err_msg=name)
    for name in ('foot_wrench', 'fsr', 'ankle_ft'):
        assert sorted(getattr(got, name)) == sorted(getattr(ref, name)), name
        for foot, values in getattr(ref, name).items():
            np.testing.assert_array_equal(getattr(got, name)[foot], values)
    strip = {'source'}
    assert {k: v for k, v in got.meta.items() if k not in strip} == \
        {k: v for k, v in ref.meta.items() if k not in strip}


def test_mcap_suffix_names_the_bag_directory(tmp_path, rec, robot):
    """write_bag('run.mcap') writes run/run.mcap and returns run/; every spelling reads it."""
    out = write_bag(rec, tmp_path / 'run.mcap', robot=robot)
    assert out == tmp_path / 'run' and not (tmp_path / 'run.mcap').exists()
    assert sorted(p.name for p in out.iterdir()) == ['metadata.yaml', 'run.mcap']
    ref = read_bag(out, robot)
    for spelling in (tmp_path / 'run.mcap', out / 'run.mcap', str(out)):
        assert_same(read_bag(spelling, robot), ref)
        assert bag_info(spelling).path == str(out)


def test_db3_suffix_writes_sqlite3(tmp_path, rec, robot):
    """write_bag('run.db3') picks sqlite3 and writes run/run.db3; a contradicting storage fails."""
    out = write_bag(rec, tmp_path / 'run.db3', robot=robot)
    assert (out / 'run.db3').is_file() and bag_info(tmp_path / 'run.db3').storage == 'sqlite3'
    with pytest.raises(BadInputError, match='ends in .mcap'):
        write_bag(rec, tmp_path / 'other.mcap', storage='sqlite3', robot=robot)
    assert output_bag('x/run', None) == (Path('x/run'), 'mcap')
    assert output_bag('run.mcap', 'mcap') == (Path('run'), 'mcap')


def test_overwrite_keeps_its_meaning_with_suffixes(tmp_path, rec, robot):
    """An existing bag needs overwrite; overwrite replaces it; a non-bag directory is kept."""
    write_bag(rec.slice(0, 20), tmp_path / 'run.mcap', robot=robot)
    with pytest.raises(BadInputError, match='exists'):
        write_bag(rec.slice(0, 20), tmp_path / 'run.mcap', robot=robot)
    write_bag(rec.slice(0, 10), tmp_path / 'run.mcap', robot=robot, overwrite=True)
    assert read_bag(tmp_path / 'run.mcap', robot).n == 10
    (tmp_path / 'notes').mkdir()
    (tmp_path / 'notes' / 'keep.txt').write_text('mine')
    with pytest.raises(BadInputError, match='not a rosbag2'):
        write_bag(rec, tmp_path / 'notes.mcap', robot=robot, overwrite=True)
    assert (tmp_path / 'notes' / 'keep.txt').read_text() == 'mine'


def test_bags_of_the_old_naming_still_read(tmp_path, rec, robot, bag):
    """A directory run.mcap/ holding run.mcap.mcap (the former naming) reads as before."""
    with mock.patch.object(recording_io, 'output_bag', lambda p, s: (Path(p), s or 'mcap')):
        old = write_bag(rec, tmp_path / 'run.mcap', robot=robot)
    assert (old / 'run.mcap.mcap').is_file()
    assert_same(read_bag(old, robot), bag[1])
    assert_same(read_bag(old / 'run.mcap.mcap', robot), bag[1])
    assert bag_info(old).path == str(old)


def test_bare_mcap_reads_like_its_bag(tmp_path, robot, bag):
    """An .mcap copied alone gives the Recording and topic table of its bag directory."""
    path, ref = bag
    bare = tmp_path / 'copy.mcap'
    shutil.copy(path / 'run.mcap', bare)
    assert_same(read_bag(bare, robot), ref)
    info, ref_info = bag_info(bare), bag_info(path)
    assert info.path == str(bare) and info.storage == 'mcap' and info.recovery is None
    assert info.topics == ref_info.topics and info.message_count == ref_info.message_count


def test_bare_mcap_goes_through_the_fast_scan(tmp_path, robot, bag):
    """The bare file is read by the indexed MCAP scan, as a bag directory is."""
    import legid_ros.bag.codec as codec

    bare = tmp_path / 'copy.mcap'
    shutil.copy(bag[0] / 'run.mcap', bare)
    seen = []
    real = codec.scan_mcap_indexed
    with mock.patch.object(codec, 'scan_mcap_indexed',
                           lambda files, topics: seen.append(files) or real(files, topics)):
        read_bag(bare, robot)
    assert seen == [[bare]]


def test_mcap_without_suffix_and_bare_db3(tmp_path, rec, robot, bag):
    """An MCAP named without suffix (found by its magic) and a bare .db3 both read."""
    nameless = tmp_path / 'capture'
    shutil.copy(bag[0] / 'run.mcap', nameless)
    assert locate_bag(nameless).reader_path is None
    assert_same(read_bag(nameless, robot), bag[1])
    assert bag_info(nameless).message_count == bag_info(bag[0]).message_count
    db = write_bag(rec, tmp_path / 'sq', storage='sqlite3', robot=robot)
    shutil.copy(db / 'sq.db3', tmp_path / 'alone.db3')
    assert_same(read_bag(tmp_path / 'alone.db3', robot), bag[1])
    assert bag_info(tmp_path / 'alone.db3').storage == 'sqlite3'


def test_recorder_directories_without_metadata(tmp_path, rec, robot, bag):
    """A directory without metadata.yaml (recorder stopped hard) reads its storage files, split
    files in order."""
    one = tmp_path / 'one'
    one.mkdir()
    shutil.copy(bag[0] / 'run.mcap', one / 'one_0.mcap')
    assert_same(read_bag(one, robot), bag[1])
    split = tmp_path / 'split'
    split.mkdir()
    for k, (a, b) in enumerate([(0, 100), (100, 150), (150, rec.n)]):
        part = write_bag(rec.slice(a, b), tmp_path / f'part{k}', robot=robot)
        shutil.copy(part / f'part{k}.mcap', split / f'split_{[0, 2, 10][k]}.mcap')
    got = read_bag(split, robot)
    np.testing.assert_array_equal(got.q, bag[1].q)
    np.testing.assert_allclose(got.t, bag[1].t, atol=1e-9)
    assert bag_info(split).topics[0].count == bag_info(bag[0]).topics[0].count


def test_paths_that_are_no_bag(tmp_path):
    """Missing paths, empty or foreign directories and text files give BadInputError."""
    with pytest.raises(BadInputError, match='not found'):
        read_bag(tmp_path / 'none.mcap')
    (tmp_path / 'empty').mkdir()
    with pytest.raises(BadInputError, match='not a rosbag2'):
        bag_info(tmp_path / 'empty')
    (tmp_path / 'text').write_text('hello')
    with pytest.raises(BadInputError, match='not a rosbag2'):
        bag_info(tmp_path / 'text')
    (tmp_path / 'text.mcap').write_text('hello')
    with pytest.raises(BadInputError, match='cannot read bag'):
        read_bag(tmp_path / 'text.mcap')
