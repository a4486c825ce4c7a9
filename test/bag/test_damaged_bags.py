"""Tests of damaged bags: MCAP files cut short (power loss, full disk) and messages whose
bytes do not deserialise (legid_ros.bag.repair, legid_ros.bag.codec.decode_topic)."""

import logging
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from rosbags.rosbag2 import (CompressionFormat, CompressionMode, Reader, StoragePlugin,
                             Writer)
from rosbags.typesys import Stores, get_typestore

from legid_ros.bag.codec import TYPES, FixedLayout
from legid_ros.bag.recording_io import EPOCH_NS, bag_info, read_bag, write_bag
from legid_ros.core.errors import BadInputError
from legid_ros.core.robot import load_robot
from legid_ros.core.synthetic import NoiseModel, SyntheticConfig, simulate_biped

TS = get_typestore(Stores.ROS2_HUMBLE)
LEGID = str(Path(sys.executable).parent / 'legid')


@pytest.fixture(scope='module')
def robot():
    return load_robot('biped')


@pytest.fixture(scope='module')
def whole(tmp_path_factory, robot):
    """A 3 s, 1 kHz bag (several 1 MB chunks), its storage bytes and its Recording."""
    rec = simulate_biped(SyntheticConfig(duration_s=3.0, rate_hz=1000.0, seed=6,
                                         noise=NoiseModel()), robot)
    path = write_bag(rec, tmp_path_factory.mktemp('whole') / 'run', robot=robot)
    return path, (path / 'run.mcap').read_bytes(), read_bag(path, robot)


def _cut(tmp_path, whole, size, name='cut'):
    """Copy of the bag directory with its MCAP cut to ``size`` bytes."""
    path = tmp_path / name
    shutil.copytree(whole[0], path)
    (path / 'run.mcap').write_bytes(whole[1][:size])
    return path


def test_whole_bag_has_no_damage_facts(whole):
    """A whole bag carries no recovery or undecodable facts anywhere."""
    assert 'bag_recovery' not in whole[2].meta and 'undecodable_messages' not in whole[2].meta
    info = bag_info(whole[0])
    assert info.recovery is None and 'damaged' not in info.table()


@pytest.mark.parametrize('fraction', [0.05, 0.3, 0.5, 0.77, 0.95])
def test_cut_bag_reads_its_complete_prefix(tmp_path, whole, robot, fraction):
    """A bag cut at any point reads the joint states before the cut exactly, and says so."""
    size = int(len(whole[1]) * fraction)
    back = read_bag(_cut(tmp_path, whole, size), robot)
    ref, n = whole[2], back.n
    assert 0 < n < ref.n
    np.testing.assert_array_equal(back.t, ref.t[:n])
    for name in ('q', 'qd', 'tau'):
        np.testing.assert_array_equal(getattr(back, name), getattr(ref, name)[:n])
    np.testing.assert_array_equal(back.imu_gyro[:-1], ref.imu_gyro[:n - 1])
    np.testing.assert_array_equal(back.pi_true, ref.pi_true)
    rep = back.meta['bag_recovery']
    assert rep['bytes_total'] == size and 0 <= rep['bytes_unread'] < 2 ** 20
    assert rep['messages'] >= 16 * (n - 1) and 'file ends inside' in rep['reason']
    assert rep['end_ns'] - rep['start_ns'] == pytest.approx(ref.t[n - 1] * 1e9, abs=1e6)
    assert back.meta['seed'] == 6


def test_more_bytes_recover_more(tmp_path, whole):
    """Recovered messages grow with the bytes kept; only the record cut stays unread."""
    counts = []
    for k, size in enumerate(range(200_000, len(whole[1]), 450_000)):
        info = bag_info(_cut(tmp_path, whole, size, f'c{k}'))
        rep = info.recovery
        assert info.message_count == rep.messages and rep.bytes_total == size
        assert rep.bytes_unread < 20_000, rep  # a cut message or message index record
        counts.append(rep.messages)
    assert counts == sorted(counts) and len(set(counts)) == len(counts)


def test_cut_after_last_record_and_in_footer(tmp_path, whole, robot):
    """A file ending in its summary or footer loses nothing: every message is read."""
    for size in (len(whole[1]) - 1, len(whole[1]) - 40):
        back = read_bag(_cut(tmp_path, whole, size, f's{size}'), robot)
        np.testing.assert_array_equal(back.q, whole[2].q)
        assert 'bag_recovery' not in back.meta


@pytest.mark.parametrize('size', [0, 3, 8, 12, 30, 120])
def test_cut_in_header_is_bad_input(tmp_path, whole, robot, size):
    """A file cut inside its magic, header or first schemas gives BadInputError, both APIs."""
    path = _cut(tmp_path, whole, size)
    for read in (bag_info, lambda p: read_bag(p, robot)):
        with pytest.raises(BadInputError, match='cannot read bag'):
            read(path)
        with pytest.raises(BadInputError, match='cannot read bag'):
            read(path / 'run.mcap')


def test_cut_bare_file_and_one_line_warning(tmp_path, whole, robot, caplog):
    """A bare cut .mcap reads too; the loss is one warning line naming what was recovered,
    once however often the bag is read."""
    bare = tmp_path / 'cut.mcap'
    bare.write_bytes(whole[1][:len(whole[1]) // 2])
    with caplog.at_level(logging.WARNING, logger='legid_ros.bag'):
        back = read_bag(bare, robot)
        assert read_bag(bare, robot).n == back.n and bag_info(bare).recovery is not None
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and '\n' not in lines[0]
    assert 'recovered' in lines[0] and 'bytes unread' in lines[0] and str(bare) in lines[0]
    np.testing.assert_array_equal(back.q, whole[2].q[:back.n])


def test_cut_zstd_bag_keeps_whole_chunks(tmp_path, whole, robot):
    """With zstd chunks a cut keeps the complete chunks; the values match the whole bag."""
    path = tmp_path / 'z'
    writer = Writer(path, version=9, storage_plugin=StoragePlugin.MCAP)
    writer.set_compression(CompressionMode.STORAGE, CompressionFormat.ZSTD)
    writer.open()
    conns = {}
    with Reader(whole[0]) as reader:
        for conn, log, raw in reader.messages():
            if conn.topic not in conns:
                conns[conn.topic] = writer.add_connection(conn.topic, conn.msgtype,
                                                          typestore=TS)
            writer.write(conns[conn.topic], log, raw)
    writer.close()
    full = read_bag(path, robot)
    np.testing.assert_array_equal(full.q, whole[2].q)
    data = (path / 'z.mcap').read_bytes()
    (path / 'z.mcap').write_bytes(data[:int(len(data) * 0.6)])
    back = read_bag(path, robot)
    assert 0 < back.n < full.n
    np.testing.assert_array_equal(back.q, full.q[:back.n])
    assert 'chunk' in back.meta['bag_recovery']['reason']


def test_cli_info_on_cut_bags(tmp_path, whole):
    """`legid info` lists a cut bag with a damaged line (exit 0); a cut header: one line, 2."""
    half = _cut(tmp_path, whole, len(whole[1]) // 2, 'half')
    res = subprocess.run([LEGID, 'info', str(half)], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    assert 'damaged:  damaged MCAP' in res.stdout and 'Traceback' not in res.stderr
    head = _cut(tmp_path, whole, 20, 'head')
    res = subprocess.run([LEGID, 'info', str(head)], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert res.stderr.startswith('legid: error: cannot read bag')


def _header(k, frame=''):
    ns = EPOCH_NS + k * 2_000_000
    return TS.types['std_msgs/msg/Header'](
        stamp=TS.types['builtin_interfaces/msg/Time'](sec=ns // 10 ** 9, nanosec=ns % 10 ** 9),
        frame_id=frame)


def test_undecodable_messages_cost_only_themselves(tmp_path, robot, caplog):
    """Bad CDR in single messages drops just those messages and counts them per topic."""
    names = robot.actuated_joint_names
    n = 50
    layout = FixedLayout(TS, TYPES['joint_state'], '', names=names)
    stamps = EPOCH_NS + np.arange(n) * 2_000_000
    values = np.arange(n * 36, dtype=float).reshape(n, 36)
    rows = [bytes(r) for r in layout.pack(stamps, values)]
    bad_js = {0: b'\x00\x01\x00\x00garbage', 17: rows[17][:40], 31: b''}
    imu_layout = FixedLayout(TS, TYPES['imu'], 'imu_link')
    imu_vals = np.tile([0, 0, 0, 1.0, 1, 2, 3, 0, 0, 9.81], (n, 1))
    imu_rows = [bytes(r) for r in imu_layout.pack(stamps, imu_vals)]
    path = tmp_path / 'bad'
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        js = writer.add_connection('/joint_states', TYPES['joint_state'], typestore=TS)
        imu = writer.add_connection('/imu', TYPES['imu'], typestore=TS)
        meta = writer.add_connection('/legid/sim/meta', TYPES['string'], typestore=TS)
        writer.write(meta, int(stamps[0]), b'\x00\x01\x00\x00\xff\xff\xff\x7f')
        for k in range(n):
            writer.write(js, int(stamps[k]), bad_js.get(k, rows[k]))
            writer.write(imu, int(stamps[k]), imu_rows[k] + (b'\x00' * 9 if k == 5 else b''))
    with caplog.at_level(logging.WARNING, logger='legid_ros.bag'):
        back = read_bag(path, robot)
    keep = [k for k in range(n) if k not in bad_js]
    assert back.n == n - 3
    np.testing.assert_array_equal(back.q, values[keep, :12])
    np.testing.assert_array_equal(back.tau, values[keep, 24:])
    np.testing.assert_allclose(back.t, (stamps[keep] - stamps[keep[0]]) * 1e-9, atol=1e-12)
    np.testing.assert_array_equal(back.imu_gyro, np.tile([1.0, 2, 3], (n - 3, 1)))
    assert back.meta['undecodable_messages'] == {'/joint_states': 3, '/imu': 1,
                                                 '/legid/sim/meta': 1}
    assert len(caplog.records) == 1 and '5 undecodable' in caplog.records[0].getMessage()


def test_open_bag_yields_a_cut_bag_in_time_order(tmp_path, whole):
    """open_bag on a cut bag yields what rosbags yields for the whole bag, up to the cut."""
    from legid_ros.bag.recording_io import open_bag

    path = _cut(tmp_path, whole, len(whole[1]) // 3)
    with open_bag(path) as reader:
        assert type(reader).__name__ == 'ScannedMcap'
        got = [(c.topic, log, bytes(raw)) for c, log, raw in reader.messages()]
        start = reader.start_time
    with Reader(whole[0]) as ref_reader:
        ref = [(c.topic, log, bytes(raw)) for c, log, raw in ref_reader.messages()]
    assert start == ref[0][1] and [log for _, log, _ in got] == sorted(x[1] for x in got)
    stop = got[-1][1]  # messages of the sample being written when the file was cut may miss
    assert sorted(x for x in got if x[1] < stop) == sorted(x for x in ref if x[1] < stop)
    assert set(got) <= set(ref)


def _chunk_offsets(data):
    """Offsets of the chunk records of an MCAP file."""
    import struct
    pos, out = 8, []
    while pos + 9 <= len(data):
        op, length = struct.unpack_from('<BQ', data, pos)
        if op == 0x06:
            out.append(pos)
        if op in (0x0F, 0x02):
            break
        pos += 9 + length
    return out


def test_bad_chunk_under_intact_summary_is_skipped(tmp_path, whole, robot, caplog):
    """A chunk gone bad in a whole file costs that chunk only: later chunks still read."""
    import struct
    data = bytearray(whole[1])
    chunks = _chunk_offsets(data)
    assert len(chunks) >= 4
    at = chunks[1]
    (klen,) = struct.unpack_from('<I', data, at + 9 + 28)
    inner = at + 9 + 28 + 4 + klen + 8
    data[inner + 1:inner + 9] = struct.pack('<Q', 2 ** 40)  # first record now runs past it
    path = _cut(tmp_path, (whole[0], bytes(data)), len(data))
    with caplog.at_level(logging.WARNING, logger='legid_ros.bag'):
        back = read_bag(path, robot)
    ref = whole[2]
    lost = ref.n - back.n
    assert 0 < lost < ref.n // 2
    rows = {tuple(r) for r in ref.q}
    assert all(tuple(r) in rows for r in back.q)
    np.testing.assert_array_equal(back.q[-100:], ref.q[-100:])
    rep = back.meta['bag_recovery']
    assert rep['bytes_unread'] == struct.unpack_from('<Q', whole[1], at + 1)[0] + 9
    assert f'unreadable record (opcode 0x06) at byte {at}' in rep['reason']
    assert bag_info(path).recovery.messages == rep['messages']
    assert any('recovered' in r.getMessage() for r in caplog.records)


def _joint_state_bag(path, robot, renamed):
    """50 joint states at 500 Hz; those in ``renamed`` name other joints."""
    names = robot.actuated_joint_names
    stamps = EPOCH_NS + np.arange(50) * 2_000_000
    values = np.arange(50 * 36, dtype=float).reshape(50, 36)
    rows = [bytes(r) for r in FixedLayout(TS, TYPES['joint_state'], '', names=names).pack(
        stamps, values)]
    other = [bytes(r) for r in FixedLayout(TS, TYPES['joint_state'], '',
                                           names=[n + 'x' for n in names]).pack(stamps, values)]
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        js = writer.add_connection('/joint_states', TYPES['joint_state'], typestore=TS)
        for k in range(50):
            writer.write(js, int(stamps[k]), other[k] if k in renamed else rows[k])
    return values


def test_a_few_joint_states_with_other_names_are_left_out(tmp_path, robot):
    """Joint states naming other joints cost themselves when few (even the first), else fail."""
    values = _joint_state_bag(tmp_path / 'few', robot, {0, 30})
    back = read_bag(tmp_path / 'few', robot)
    assert back.n == 48 and back.meta['foreign_joint_states'] == 2
    np.testing.assert_array_equal(back.q, np.delete(values, [0, 30], axis=0)[:, :12])
    _joint_state_bag(tmp_path / 'mixed', robot, set(range(0, 50, 2)))
    with pytest.raises(BadInputError, match='joint names change'):
        read_bag(tmp_path / 'mixed', robot)
