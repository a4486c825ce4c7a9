"""Fast sequential scan of the messages of MCAP files (uncompressed or zstd/lz4 chunks).

``rosbags`` reads MCAP message by message through a heap merge (about 15 us per message);
this scan walks the records once and only slices out ``(channel, log time, payload)``, which
is several times faster for the million-message bags of a 95 s run at 1 kHz. Anything it does
not understand raises :class:`McapScanError` and the caller falls back to ``rosbags``.
:mod:`legid_ros.bag.repair` walks damaged files with the same :class:`RecordScan`.
Record layouts follow the MCAP specification (https://mcap.dev/spec).
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Dict, List, Set, Tuple

import numpy as np

MAGIC = b'\x89MCAP0\r\n'
OP_HEADER, OP_SCHEMA = 0x01, 0x03
OP_CHANNEL, OP_MESSAGE, OP_CHUNK, OP_INDEX, OP_DATA_END, OP_FOOTER = (
    0x04, 0x05, 0x06, 0x07, 0x0F, 0x02)
_MSG_HEAD = 9 + 22  # record opcode + length, then channel, sequence, log and publish time
RECORD = struct.Struct('<BQ')  # opcode, length of the record body [bytes]
_MSG = struct.Struct('<HIQQ')
CHUNK_HEAD = struct.Struct('<QQQI')  # first/last log time, uncompressed size, CRC32


class McapScanError(Exception):
    """The file is not an MCAP this scanner handles."""


def read_string(buf, pos: int) -> Tuple[str, int]:
    """(string, offset after it) of the length-prefixed string at ``pos``."""
    (n,) = struct.unpack_from('<I', buf, pos)
    return bytes(buf[pos + 4:pos + 4 + n]).decode(), pos + 4 + n


def _zstd_stdlib():
    """The zstd module of Python 3.14 (``compression.zstd``) or its backport."""
    try:
        from compression import zstd
    except ImportError:
        try:
            from backports import zstd
        except ImportError as exc:
            raise McapScanError('zstd chunks need the zstandard or backports.zstd module') \
                from exc
    return zstd


def decompress(kind: str, data: bytes, size: int) -> bytes:
    """Records of a chunk compressed with ``kind`` ('', 'zstd' or 'lz4'), ``size`` bytes."""
    if kind == '':
        return data
    if kind == 'zstd':
        try:
            import zstandard
        except ImportError:
            return _zstd_stdlib().decompress(bytes(data))
        return zstandard.ZstdDecompressor().decompress(data, max_output_size=size)
    if kind == 'lz4':
        try:
            import lz4.frame
        except ImportError as exc:
            raise McapScanError('lz4 chunks need the lz4 module') from exc
        return lz4.frame.decompress(data)
    raise McapScanError(f'unknown chunk compression {kind!r}')


class EveryTopic:
    """Topic filter of a scan that keeps every topic."""

    def __contains__(self, topic) -> bool:
        return True


class RecordScan:
    """Sequential walk over MCAP records, keeping ``(log time, payload)`` of wanted topics.

    Also notes each channel's schema name and message encoding (``kinds``), which a scan of a
    file without summary (:mod:`legid_ros.bag.repair`) needs to name the message types.
    """

    def __init__(self, topics):
        self.topics = topics
        self.channels: Dict[int, str] = {}
        self.out: Dict[str, Tuple[List[int], List[bytes]]] = {}
        self.schemas: Dict[int, str] = {}
        self.kinds: Dict[int, Tuple[int, str]] = {}

    def records(self, buf, pos: int, end: int, top: bool) -> None:
        """Walk the records of ``buf[pos:end]``; ``top``: the file's data section (chunks are
        opened, Data End stops the walk), else the records inside a chunk.

        Raises:
            McapScanError: A record runs past ``end``, or a message precedes its channel.
        """
        unpack_rec, unpack_msg = RECORD.unpack_from, _MSG.unpack_from
        channels, out = self.channels, self.out
        while pos < end:
            if end - pos < 9:
                raise McapScanError('truncated record')
            op, length = unpack_rec(buf, pos)
            body = pos + 9
            pos = body + length
            if pos > end:
                raise McapScanError('record runs past the end of the data')
            if op == OP_MESSAGE:
                chan, _seq, log, _pub = unpack_msg(buf, body)
                topic = channels.get(chan)
                if topic is None:
                    raise McapScanError('message before its channel')
                entry = out.get(topic)
                if entry is not None:
                    entry[0].append(log)
                    entry[1].append(buf[body + 22:pos])
            elif op == OP_CHANNEL:
                chan, schema = struct.unpack_from('<HH', buf, body)
                topic, p = read_string(buf, body + 4)
                channels[chan] = topic
                self.kinds[chan] = (schema, read_string(buf, p)[0])
                if topic in self.topics:
                    out.setdefault(topic, ([], []))
            elif op == OP_SCHEMA:
                (schema,) = struct.unpack_from('<H', buf, body)
                self.schemas[schema] = read_string(buf, body + 2)[0]
            elif op == OP_CHUNK and top:
                _t0, _t1, size, _crc = CHUNK_HEAD.unpack_from(buf, body)
                kind, p = read_string(buf, body + CHUNK_HEAD.size)
                (n,) = struct.unpack_from('<Q', buf, p)
                inner = decompress(kind, bytes(buf[p + 8:p + 8 + n]) if kind else
                                    buf[p + 8:p + 8 + n], size)
                self.records(memoryview(inner), 0, len(inner), False)
            elif op in (OP_DATA_END, OP_FOOTER) and top:
                return


def _gather(chunk: np.ndarray, offsets: np.ndarray):
    """Payloads of the message records at ``offsets``: a (k, L) matrix if all have the same
    length, else a list of byte strings."""
    if offsets.size == 0:
        return np.zeros((0, 0), np.uint8)
    if offsets.max() + _MSG_HEAD > chunk.size or np.any(chunk[offsets] != OP_MESSAGE):
        raise McapScanError('message index points outside a message record')
    lens = chunk[offsets[:, None] + 1 + np.arange(8)].copy().view('<u8').ravel()
    if np.any(offsets + 9 + lens > chunk.size) or np.any(lens < 22):
        raise McapScanError('message record runs past its chunk')
    if np.all(lens == lens[0]):
        return chunk[(offsets + _MSG_HEAD)[:, None] + np.arange(int(lens[0]) - 22)]
    return [chunk[o + _MSG_HEAD:o + 9 + n].tobytes()
            for o, n in zip(offsets.tolist(), lens.tolist())]


def _summary_channels(fh, size: int) -> Dict[int, str]:
    """Channel id -> topic from the summary section of the open file ``fh`` of ``size``
    bytes (channels may live inside chunks)."""
    foot = size - 8 - 29
    if foot < 8:
        return {}
    fh.seek(foot)
    tail = fh.read(size - foot)
    if tail[-8:] != MAGIC or tail[0] != OP_FOOTER:
        return {}
    (summary_start,) = struct.unpack_from('<Q', tail, 9)
    if not 0 < summary_start < foot:
        return {}
    fh.seek(summary_start)
    data = fh.read(foot - summary_start)
    out = {}
    pos = 0
    while 0 <= pos < len(data) - 9:
        op, length = RECORD.unpack_from(data, pos)
        if op == OP_CHANNEL:
            (chan,) = struct.unpack_from('<H', data, pos + 9)
            out[chan] = read_string(data, pos + 13)[0]
        pos += 9 + length
    return out


def scan_mcap_indexed(paths: List[Path], topics: Set[str]) -> Dict[str, Tuple[np.ndarray, list]]:
    """``{topic: (log times ns, [payload blocks])}`` read through the chunks' message indexes.

    Each payload block is a (k, L) uint8 matrix (equal-length messages) or a list of bytes.
    Vectorised with numpy; raises :class:`McapScanError` when a chunk has no index.
    """
    channels: Dict[int, str] = {}
    logs: Dict[str, list] = {t: [] for t in topics}
    blocks: Dict[str, list] = {t: [] for t in topics}
    for path in paths:
        with open(path, 'rb') as fh:  # record by record: one chunk in memory at a time
            size_file = os.fstat(fh.fileno()).st_size
            if fh.read(8) != MAGIC:
                raise McapScanError(f'{path} is not an MCAP file')
            channels.update(_summary_channels(fh, size_file))
            fh.seek(8)
            pos, end = 8, size_file - 8
            chunk, indexed = None, True
            while pos < end:
                head = fh.read(9)
                if len(head) < 9:
                    raise McapScanError('truncated record')
                op, length = RECORD.unpack(head)
                pos += 9 + length
                if op not in (OP_CHANNEL, OP_CHUNK, OP_INDEX):
                    if op in (OP_DATA_END, OP_FOOTER):
                        break
                    fh.seek(length, os.SEEK_CUR)
                    continue
                data = fh.read(length)
                if len(data) < length:
                    raise McapScanError('record runs past the end of the file')
                if op == OP_CHANNEL:
                    (chan,) = struct.unpack_from('<H', data, 0)
                    channels[chan] = read_string(data, 4)[0]
                elif op == OP_CHUNK:
                    if not indexed:
                        raise McapScanError('chunk without message index')
                    _t0, _t1, size, _crc = CHUNK_HEAD.unpack_from(data, 0)
                    kind, p = read_string(data, CHUNK_HEAD.size)
                    (n,) = struct.unpack_from('<Q', data, p)
                    chunk = np.frombuffer(decompress(
                        kind, memoryview(data)[p + 8:p + 8 + n] if not kind else
                        data[p + 8:p + 8 + n], size), np.uint8)
                    indexed = False
                else:  # message index of the chunk just read
                    (chan,) = struct.unpack_from('<H', data, 0)
                    if chunk is None or chan not in channels:
                        raise McapScanError('message index before its chunk or channel')
                    indexed = True
                    topic = channels[chan]
                    if topic not in topics:
                        continue
                    (nbytes,) = struct.unpack_from('<I', data, 2)
                    pairs = np.frombuffer(data, '<u8', nbytes // 8, 6).reshape(-1, 2)
                    logs[topic].append(pairs[:, 0].astype(np.int64))
                    blocks[topic].append(_gather(chunk, pairs[:, 1].astype(np.int64)))
            if chunk is not None and not indexed:
                raise McapScanError('chunk without message index')
    return {t: (np.concatenate(logs[t]) if logs[t] else np.zeros(0, np.int64), blocks[t])
            for t in topics if t in channels.values()}


def scan_mcap(paths: List[Path], topics: Set[str]) -> Dict[str, Tuple[List[int], list]]:
    """``{topic: ([log time ns], [payload memoryview])}`` of the wanted topics.

    Raises:
        McapScanError: Not an MCAP file, or a feature this scanner does not handle.
    """
    scan = RecordScan(set(topics))
    for path in paths:
        data = Path(path).read_bytes()
        if data[:8] != MAGIC:
            raise McapScanError(f'{path} is not an MCAP file')
        buf = memoryview(data)
        scan.records(buf, 8, len(data) - 8, True)
    return scan.out
