"""Summary of a rosbag2: topics with type, count, rate and time span (``legid info``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Union

from legid_ros.bag.discover import locate_bag
from legid_ros.bag.reader import read_with
from legid_ros.bag.repair import BagRecovery


@dataclass
class TopicInfo:
    """One topic of a bag.

    Attributes:
        name: Topic name.
        msgtype: Message type.
        count: Number of messages.
        rate_hz: Mean message rate [Hz] (0 for fewer than 2 messages).
        start_ns: First receive time [ns since the epoch].
        end_ns: Last receive time [ns since the epoch].
    """

    name: str
    msgtype: str
    count: int
    rate_hz: float
    start_ns: int
    end_ns: int


@dataclass
class BagInfo:
    """Summary of a bag.

    Attributes:
        path: Bag directory.
        storage: 'mcap' or 'sqlite3'.
        start_ns: First message time [ns since the epoch].
        end_ns: Last message time [ns since the epoch].
        message_count: Total messages.
        topics: Per topic facts, sorted by name.
        recovery: What a damaged (truncated) MCAP still held; None for a whole bag.
    """

    path: str
    storage: str
    start_ns: int
    end_ns: int
    message_count: int
    topics: List[TopicInfo] = field(default_factory=list)
    recovery: Optional[BagRecovery] = None

    @property
    def duration_s(self) -> float:
        """Time span [s]."""
        return (self.end_ns - self.start_ns) * 1e-9

    def table(self) -> str:
        """Readable table of the topics."""
        width = max([len(t.name) for t in self.topics] + [5])
        twidth = max([len(t.msgtype) for t in self.topics] + [4])
        lines = [f'bag:      {self.path}', f'storage:  {self.storage}',
                 f'span:     {self.duration_s:.3f} s  (start {self.start_ns * 1e-9:.3f} s, '
                 f'end {self.end_ns * 1e-9:.3f} s)', f'messages: {self.message_count}']
        if self.recovery is not None:
            lines.append(f'damaged:  {self.recovery.summary()}')
        lines += ['', f'{"topic":<{width}}  {"type":<{twidth}}  {"count":>8}  {"rate [Hz]":>10}']
        for t in self.topics:
            lines.append(f'{t.name:<{width}}  {t.msgtype:<{twidth}}  {t.count:>8d}  '
                         f'{t.rate_hz:>10.2f}')
        return '\n'.join(lines)


def bag_info(path: Union[str, Path]) -> BagInfo:
    """Topics with type, count, rate [Hz] and time span of a bag.

    ``path`` as for :func:`legid_ros.bag.recording_io.read_bag`; a damaged MCAP gives what
    it still holds
    (``BagInfo.recovery``).

    Raises:
        BadInputError: Missing or unreadable bag.
    """
    source = locate_bag(path)

    def summarise(reader) -> BagInfo:
        first, last, count, types = {}, {}, {}, {}
        by_topic = {}
        for conn in reader.connections:
            types[conn.topic] = conn.msgtype
            count[conn.topic] = count.get(conn.topic, 0) + int(conn.msgcount)
            by_topic.setdefault(conn.topic, []).append(conn)
        _first_last(reader, by_topic, first, last)
        topics = []
        for name in sorted(types):
            n = count[name]
            f_ns, l_ns = first.get(name, 0), last.get(name, 0)
            rate = (n - 1) * 1e9 / (l_ns - f_ns) if n > 1 and l_ns > f_ns else 0.0
            topics.append(TopicInfo(name, types[name], n, rate, int(f_ns), int(l_ns)))
        starts = [t.start_ns for t in topics if t.count]
        ends = [t.end_ns for t in topics if t.count]
        return BagInfo(str(source.path), source.storage, min(starts, default=0),
                       max(ends, default=0), sum(count.values()), topics,
                       getattr(reader, 'recovery', None))

    return read_with(source, summarise)


def _first_last(reader, by_topic: dict, first: dict, last: dict,
                window_ns: int = 10 ** 9) -> None:
    """First and last receive time [ns] per topic: scan 1 s windows at the bag's ends, then
    the whole bag only for the topics not seen there."""
    start, end = reader.start_time, reader.end_time
    for conn, stamp, _raw in reader.messages(start=start, stop=start + window_ns):
        first.setdefault(conn.topic, stamp)
        first[conn.topic] = min(first[conn.topic], stamp)
    for conn, stamp, _raw in reader.messages(start=max(start, end - window_ns), stop=end + 1):
        last[conn.topic] = max(last.get(conn.topic, stamp), stamp)
    rest = [c for topic, conns in by_topic.items() if topic not in first or topic not in last
            for c in conns]
    if rest:
        for conn, stamp, _raw in reader.messages(connections=rest):
            first[conn.topic] = min(first.get(conn.topic, stamp), stamp)
            last[conn.topic] = max(last.get(conn.topic, stamp), stamp)
