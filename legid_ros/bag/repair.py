"""Read what a damaged MCAP bag still holds: a recording cut short by a power loss, a full disk
or a crashed recorder (the file ends mid-chunk, without summary or footer), a chunk gone bad
on the disk, or any MCAP that ``rosbags`` refuses to open.

The files are walked record by record with the scanner of :mod:`legid_ros.bag.mcap_scan`;
the walk keeps every complete record and stops at the first one cut by the end of the file.
Records of a chunk cut short are kept when the chunk is uncompressed; a compressed chunk is
kept only whole. A whole chunk that cannot be read (checksum, records) is skipped when a
record follows it, and the walk stops at anything else unreadable. :class:`ScannedMcap`
offers the part of ``rosbags``' Reader that :mod:`legid_ros.bag.recording_io` uses, and says
what was recovered in :class:`BagRecovery`. Record layouts follow the MCAP specification
(https://mcap.dev/spec).
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

import numpy as np

from legid_ros.bag.discover import BagSource
from legid_ros.bag.mcap_scan import (CHUNK_HEAD, MAGIC, OP_CHUNK, OP_DATA_END, OP_FOOTER,
                                     OP_HEADER, RECORD, EveryTopic, McapScanError, RecordScan,
                                     decompress, read_string)
from legid_ros.core.errors import BadInputError

_MALFORMED = (McapScanError, struct.error, UnicodeDecodeError, ValueError, IndexError)


class NotMcapError(BadInputError):
    """A storage file is not MCAP at all (no damage to report).

    Attributes:
        path: The file.
    """

    def __init__(self, path: Path, what: str):
        super().__init__(f'{Path(path).name} is not an MCAP file ({what})')
        self.path = Path(path)


@dataclass
class BagRecovery:
    """What a read of a damaged MCAP bag kept.

    Attributes:
        damaged_files: Storage files that end early or hold an unreadable record.
        reason: Where and why the first damaged file stops.
        messages: Messages recovered (every topic).
        start_ns: First log time recovered [ns since the epoch].
        end_ns: Last log time recovered [ns since the epoch].
        bytes_total: Size of the bag's storage files [bytes].
        bytes_unread: Bytes that gave no record: after the last complete record of a file
            cut short, and unreadable chunks skipped [bytes].
    """

    damaged_files: List[str]
    reason: str
    messages: int
    start_ns: int
    end_ns: int
    bytes_total: int
    bytes_unread: int

    @property
    def duration_s(self) -> float:
        """Time span recovered [s]."""
        return (self.end_ns - self.start_ns) * 1e-9

    def summary(self) -> str:
        """One line: what was recovered and what was lost."""
        return (f'damaged MCAP ({self.reason}): recovered {self.messages} messages over '
                f'{self.duration_s:.3f} s; {self.bytes_unread} of {self.bytes_total} bytes '
                f'unread')


@dataclass(frozen=True)
class ScannedConnection:
    """One topic of a scanned MCAP (the fields of ``rosbags``' Connection that are used).

    Attributes:
        id: Index of the topic in the scan.
        topic: Topic name.
        msgtype: Schema name (``<encoding>:<schema>`` for messages not CDR-encoded).
        msgcount: Messages recovered.
    """

    id: int
    topic: str
    msgtype: str
    msgcount: int


def _complete_prefix(buf, pos: int, end: int) -> int:
    """Offset after the last record of ``buf[pos:end]`` that ends before ``end``."""
    while end - pos >= 9:
        (length,) = struct.unpack_from('<Q', buf, pos + 1)
        if pos + 9 + length > end:
            break
        pos += 9 + length
    return pos


def _records(scan: RecordScan, buf, pos: int, end: int) -> bool:
    """Scan complete records; on a malformed one, undo what they added and return False."""
    sizes = {topic: len(logs) for topic, (logs, _) in scan.out.items()}
    try:
        scan.records(buf, pos, end, False)
    except _MALFORMED:
        for topic, (logs, payloads) in scan.out.items():
            del logs[sizes.get(topic, 0):], payloads[sizes.get(topic, 0):]
        return False
    return True


def _chunk(scan: RecordScan, buf, pos: int, end: int) -> bool:
    """Scan the records of a whole chunk record; False if it is unreadable."""
    try:
        _t0, _t1, size, crc = CHUNK_HEAD.unpack_from(buf, pos + 9)
        kind, p = read_string(buf, pos + 9 + CHUNK_HEAD.size)
        (n,) = struct.unpack_from('<Q', buf, p)
        if p + 8 + n > end:
            return False
        inner = decompress(kind, bytes(buf[p + 8:p + 8 + n]), size)
    except Exception:  # corrupt data: the decompressors raise many types
        return False
    if len(inner) != size or (crc and zlib.crc32(inner) != crc):
        return False
    return _records(scan, memoryview(inner), 0, len(inner))


def _cut_chunk(scan: RecordScan, buf, pos: int, size: int) -> int:
    """Scan the complete records of an uncompressed chunk cut by the end of the file.

    Returns:
        Offset after the last record kept (``pos`` when none).
    """
    try:
        kind, p = read_string(buf, pos + 9 + CHUNK_HEAD.size)
    except _MALFORMED:
        return pos
    start = p + 8
    if kind or start > size:
        return pos
    stop = _complete_prefix(buf, start, size)
    return stop if stop > start and _records(scan, buf, start, stop) else pos


def _plausible(buf, pos: int, size: int) -> bool:
    """Whether a record of a known opcode starts at ``pos`` (or the file ends there)."""
    return pos == size or 0x01 <= buf[pos] <= 0x0F


def scan_file(path: Path, scan: RecordScan) -> Tuple[int, int, str]:
    """Walk one MCAP file into ``scan``, keeping every complete record.

    A whole chunk that is unreadable (bad checksum or records) is skipped when a record
    follows it; the walk stops at a record cut by the end of the file, or at anything else
    unreadable.

    Returns:
        (file size [bytes], bytes that gave no record [bytes], first reason the file is
        damaged, '' when it is whole).

    Raises:
        NotMcapError: Not an MCAP file.
        BadInputError: Unreadable file.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise BadInputError(f'{Path(path).name}: {exc.strerror}') from exc
    size = len(data)
    if data[:8] != MAGIC:
        if MAGIC.startswith(data):
            return size, size, 'empty file' if not size else 'file ends inside the MCAP magic'
        raise NotMcapError(path, 'bad magic')
    buf, pos = memoryview(data), 8
    if size - pos < 9 or pos + 9 + RECORD.unpack_from(buf, pos)[1] > size:
        return size, size, 'file ends inside the MCAP header'
    if buf[pos] != OP_HEADER:
        raise NotMcapError(path, 'no header record')
    skipped, reasons = 0, []
    while pos < size:
        if size - pos < 9:
            return size, skipped + size - pos, (reasons + [
                f'file ends inside a record at byte {pos}'])[0]
        op, length = RECORD.unpack_from(buf, pos)
        end = pos + 9 + length
        if op in (OP_DATA_END, OP_FOOTER):
            return size, skipped, (reasons + [''])[0]
        if end > size:
            kept = _cut_chunk(scan, buf, pos, size) if op == OP_CHUNK else pos
            what = 'chunk' if op == OP_CHUNK else f'record (opcode 0x{op:02x})'
            return size, skipped + size - kept, (reasons + [
                f'file ends inside a {what} at byte {pos}'])[0]
        try:  # one record outside a chunk: a failure leaves nothing half-added
            ok = _chunk(scan, buf, pos, end) if op == OP_CHUNK else (
                scan.records(buf, pos, end, False) or True)
        except _MALFORMED:
            ok = False
        if not ok:
            reasons.append(f'unreadable record (opcode 0x{op:02x}) at byte {pos}')
            if op != OP_CHUNK or not _plausible(buf, end, size):
                return size, skipped + size - pos, reasons[0]
            skipped += end - pos
        pos = end
    return size, skipped, (reasons + [f'file ends at byte {size} without its summary and '
                                      f'footer'])[0]


class ScannedMcap:
    """MCAP files read by a sequential walk, as a minimal ``rosbags`` Reader.

    Args:
        source: The bag (its storage files must be MCAP).

    Attributes:
        path: The bag's name.
        connections: One :class:`ScannedConnection` per topic.
        recovery: What was lost (None when every file is complete).
        storage_files: ``('', [])``: the messages are read already (see
            :func:`legid_ros.bag.codec.collect`).

    Raises:
        BadInputError: A file is not MCAP, or a damaged bag holds no complete message.
    """

    storage_files: Tuple[str, list] = ('', [])

    def __init__(self, source: BagSource):
        self.path = source.path
        scan = RecordScan(EveryTopic())
        total = unread = 0
        damaged, reasons = [], []
        for f in source.files:
            size, lost, reason = scan_file(f, scan)
            total, unread = total + size, unread + lost
            if reason:
                damaged.append(str(f))
                bare = list(source.files) == [source.path]  # the file names the bag
                reasons.append(reason if bare else f'{Path(f).name}: {reason}')
        # log times are uint64 in MCAP: read as int64 like the indexed scan (a damaged one wraps)
        self._data: Dict[str, Tuple[np.ndarray, list]] = {
            topic: (np.array(logs, np.uint64).view(np.int64), payloads)
            for topic, (logs, payloads) in scan.out.items()}
        types: Dict[str, str] = {}
        for chan, topic in scan.channels.items():
            schema, encoding = scan.kinds.get(chan, (0, ''))
            name = scan.schemas.get(schema, '')
            types.setdefault(topic, name if encoding == 'cdr' else f'{encoding}:{name}')
        self.connections = [ScannedConnection(k + 1, topic, types.get(topic, ''), len(logs))
                            for k, (topic, (logs, _)) in enumerate(self._data.items())]
        seen = [logs for logs, _ in self._data.values() if len(logs)]
        count = sum(len(logs) for logs in seen)
        self.start_time = min(int(logs.min()) for logs in seen) if seen else 0
        self.end_time = max(int(logs.max()) for logs in seen) + 1 if seen else 0
        self.recovery: Optional[BagRecovery] = None
        if damaged:
            if not count:
                raise BadInputError(f'{"; ".join(reasons)}; no complete message in it')
            self.recovery = BagRecovery(damaged, '; '.join(reasons), count, self.start_time,
                                        self.end_time - 1, total, unread)

    def messages(self, connections=None, start: Optional[int] = None,
                 stop: Optional[int] = None) -> Iterator[Tuple[ScannedConnection, int, bytes]]:
        """(connection, log time [ns], payload) with ``start <= log time < stop``, in log-time
        order (file order among equal times), as ``rosbags`` yields them."""
        chosen = [(c, self._data.get(c.topic, (np.zeros(0, np.int64), [])))
                  for c in (self.connections if connections is None else connections)]
        sizes = [len(logs) for _, (logs, _) in chosen]
        logs = np.concatenate([logs for _, (logs, _) in chosen] + [np.zeros(0, np.int64)])
        which = np.repeat(np.arange(len(chosen)), sizes)
        index = np.concatenate([np.arange(n) for n in sizes] + [np.zeros(0, np.int64)])
        keep = np.ones(len(logs), bool)
        if start is not None:
            keep &= logs >= start
        if stop is not None:
            keep &= logs < stop
        picked = np.flatnonzero(keep)
        for k in picked[np.argsort(logs[picked], kind='stable')].tolist():
            conn, (_, payloads) = chosen[which[k]]
            yield conn, int(logs[k]), bytes(payloads[index[k]])

    def __enter__(self) -> 'ScannedMcap':
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Release the scanned data."""
        self._data = {}

