"""The one CDR decoder of legid_ros: fixed-layout ROS 2 messages <-> numpy, in batches.

Used by the bag reader (:mod:`legid_ros.bag.codec`) and by the live raw subscriptions of the
buffer node (re-exported by :mod:`legid_ros.ros.conversions_raw`). Little-endian CDR (XCDR1)
as rmw_fastrtps and ``rosbags`` write it: a 4-byte encapsulation header, then the fields
aligned to their size relative to the end of that header.

A stamped message whose strings and array lengths do not change (same frame, same joint
names) has the same bytes in every sample except the stamp and the float64 fields.
:meth:`CdrLayout.learn` reads that layout from one message; :meth:`CdrLayout.unpack_rows`
then checks every other byte of a whole batch against it and reads the stamps and values with
one structured numpy view (no per-message Python). No ROS import here.
"""

from __future__ import annotations

import struct
from typing import Collection, Dict, List, Optional, Tuple

import numpy as np

from legid_ros.core.errors import BadInputError

#: Float64 count of the fixed-size types after their header (Imu: orientation, its
#: covariance, angular velocity, its covariance, linear acceleration, its covariance).
_DOUBLES = {'wrench': 6, 'imu': 28, 'point': 3, 'pose': 7}
#: Columns of those doubles forming the values ("slots") of a sample.
_SLOTS = {'wrench': np.arange(6), 'imu': np.r_[0:4, 13:16, 25:28], 'point': np.arange(3),
          'pose': np.arange(7)}
#: Layouts kept per decoder (memory bound); messages beyond are decoded one by one.
MAX_LAYOUTS = 64
_U32 = struct.Struct('<I')
_STAMP = struct.Struct('<iI')
_ERRORS = (BadInputError, struct.error, UnicodeDecodeError, IndexError, ValueError)


def _align(off: int, k: int) -> int:
    return off + (-(off - 4)) % k


def _header(raw) -> Tuple[str, int]:
    """(frame id, offset after the header) of a CDR message starting with a std_msgs/Header."""
    if len(raw) < 16 or raw[1] != 1:
        raise BadInputError('not a little-endian CDR message')
    (n,) = _U32.unpack_from(raw, 12)
    if 16 + n > len(raw):
        raise BadInputError('truncated CDR message')
    return bytes(raw[16:max(15 + n, 16)]).decode(), 16 + n


def header_frame(raw) -> str:
    """``header.frame_id`` of a CDR message starting with a std_msgs/Header."""
    return _header(raw)[0]


def _parse(kind: str, raw) -> dict:
    """Field offsets of one CDR message of ``kind`` (stamp, frame, names, float64 blocks).

    Raises:
        BadInputError: Not little-endian CDR of that kind, or truncated.
    """
    frame, off = _header(raw)
    out = {'frame': frame, 'blocks': [], 'names': ()}
    if kind in _DOUBLES:
        start = _align(off, 8)
        out['blocks'].append(('v', start, _DOUBLES[kind]))
        end = start + 8 * _DOUBLES[kind]
    elif kind == 'joint_state':
        off = _align(off, 4)
        (count,) = _U32.unpack_from(raw, off)
        off += 4
        names = []
        for _ in range(count):
            off = _align(off, 4)
            (ln,) = _U32.unpack_from(raw, off)
            names.append(bytes(raw[off + 4:off + 3 + ln]).decode())
            off += 4 + ln
        out['names'] = tuple(names)
        for field in ('p', 'v', 'e'):
            off = _align(off, 4)
            (ln,) = _U32.unpack_from(raw, off)
            off += 4
            if ln:
                off = _align(off, 8)
            out['blocks'].append((field, off, ln))
            off += 8 * ln
        end = off
    else:
        raise BadInputError(f'no CDR layout for {kind!r}')
    if end > len(raw):
        raise BadInputError('truncated CDR message')
    return out


def _stamp(raw) -> float:
    sec, nsec = _STAMP.unpack_from(raw, 4)
    return sec + nsec * 1e-9


def _block(raw, block) -> np.ndarray:
    _, off, count = block
    return np.frombuffer(raw, '<f8', count, off) if count else np.empty(0)


def decode_joint_state(raw):
    """(stamp [s], names, positions, velocities, efforts) of a serialized JointState."""
    info = _parse('joint_state', raw)
    p, v, e = (_block(raw, b) for b in info['blocks'])
    return _stamp(raw), info['names'], p, v, e


def decode_wrench(raw):
    """(stamp [s], [fx fy fz tx ty tz]) of a serialized WrenchStamped."""
    return _stamp(raw), _block(raw, _parse('wrench', raw)['blocks'][0])


def decode_imu(raw):
    """(stamp [s], quaternion [x y z w], angular velocity, specific force) of a serialized Imu."""
    values = _block(raw, _parse('imu', raw)['blocks'][0])
    return _stamp(raw), values[0:4], values[13:16], values[25:28]


class CdrLayout:
    """Byte layout shared by the messages shaped like one (same frame, names, lengths).

    Attributes:
        kind: 'joint_state', 'imu', 'wrench', 'point' or 'pose'.
        itemsize: Bytes per message.
        dtype: Structured dtype: 'sec', 'nsec' and the float64 blocks ('v', or 'p'/'v'/'e').
        frame: Header frame id.
        names: Joint names (JointState), else ().
        has: Whether each of positions, velocities, efforts is present (JointState).
        slots: Values per sample (JointState: 3 x joints, missing arrays read as NaN).
    """

    def __init__(self, kind: str, raw):
        info = _parse(kind, raw)
        self.kind = kind
        self.itemsize = len(raw)
        self.frame = info['frame']
        self.names = info['names']
        blocks = [b for b in info['blocks'] if b[2]]
        self.has = tuple(b[2] > 0 for b in info['blocks'])
        n = len(self.names)
        if kind == 'joint_state' and (n == 0 or not self.has[0] or any(
                b[2] != n for b in blocks)):
            raise BadInputError('joint state without one value per name')
        self.slots = 3 * n if kind == 'joint_state' else len(_SLOTS[kind])
        self.dtype = np.dtype({'names': ['sec', 'nsec'] + [b[0] for b in blocks],
                               'formats': ['<i4', '<u4'] + [('<f8', (b[2],)) for b in blocks],
                               'offsets': [4, 8] + [b[1] for b in blocks],
                               'itemsize': self.itemsize})
        self.template = np.frombuffer(bytes(raw), np.uint8).copy()
        mask = np.ones(self.itemsize, bool)
        mask[4:12] = False
        for _, off, count in blocks:
            mask[off:off + 8 * count] = False
        self._fixed = np.flatnonzero(mask)
        self._expected = self.template[self._fixed]

    @classmethod
    def learn(cls, kind: str, raw) -> Optional['CdrLayout']:
        """The layout of ``raw``, or None when it is not a usable message of ``kind``."""
        try:
            return cls(kind, raw)
        except _ERRORS:
            return None

    def matches(self, rows: np.ndarray) -> np.ndarray:
        """Which rows of an (N, itemsize) uint8 matrix have this layout's fixed bytes."""
        return np.all(rows[:, self._fixed] == self._expected, axis=1)

    def read(self, rows: np.ndarray):
        """(sec (N,), nsec (N,), structured array) of matching rows (N, itemsize)."""
        arr = np.ascontiguousarray(rows).view(self.dtype).reshape(len(rows))
        return arr['sec'], arr['nsec'], arr

    def values(self, arr) -> np.ndarray:
        """(N, slots) values of a structured array from :meth:`read` (NaN: missing array)."""
        if self.kind != 'joint_state':
            return arr['v'][:, _SLOTS[self.kind]]
        nan = np.full((len(arr), len(self.names)), np.nan)
        return np.hstack([arr[f] if h else nan for f, h in zip('pve', self.has)])

    def unpack_rows(self, raws) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(mask of the messages matching the layout, their stamps [ns], their values).

        ``raws``: list of serialised messages, or an (N, L) uint8 matrix of them.
        """
        n = len(raws)
        if isinstance(raws, np.ndarray):
            ok = np.full(n, raws.ndim == 2 and raws.shape[1] == self.itemsize)
            rows = raws if ok.all() else np.zeros((0, self.itemsize), np.uint8)
        else:
            ok = np.fromiter(map(len, raws), np.int64, n) == self.itemsize
            kept = raws if ok.all() else [r for r, k in zip(raws, ok) if k]
            rows = np.frombuffer(b''.join(kept), np.uint8).reshape(len(kept), self.itemsize)
        same = self.matches(rows)
        if not same.all():
            ok[np.flatnonzero(ok)[~same]] = False
            rows = rows[same]
        sec, nsec, arr = self.read(rows)
        return ok, sec.astype(np.int64) * 10 ** 9 + nsec.astype(np.int64), self.values(arr)

    def pack(self, stamps_ns: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Serialised messages of this layout, one (N, itemsize) uint8 row per sample."""
        values = np.asarray(values, float)
        n = len(stamps_ns)
        if values.shape != (n, self.slots):
            raise BadInputError(f'{self.kind}: values have shape {values.shape}, '
                                f'expected {(n, self.slots)}')
        rows = np.tile(self.template, (n, 1))
        arr = rows.view(self.dtype).reshape(n)
        arr['sec'], arr['nsec'] = np.divmod(np.asarray(stamps_ns, np.int64), 10 ** 9)
        if self.kind == 'joint_state':
            nj = len(self.names)
            for k, (f, h) in enumerate(zip('pve', self.has)):
                if h:
                    arr[f] = values[:, k * nj:(k + 1) * nj]
        else:
            v = arr['v'].copy()
            v[:, _SLOTS[self.kind]] = values
            arr['v'] = v
        return rows


class RawBatch:
    """Decodes batches of serialized messages of one type (the buffer node's raw input).

    Messages are grouped by length; each group is checked against the layouts learnt so far
    with numpy, a message of an unknown shape teaches a new layout (at most
    :data:`MAX_LAYOUTS`), and one that has none (malformed, inconsistent arrays) is decoded
    alone.

    Args:
        kind: 'joint_state', 'imu' or 'wrench'.
    """

    def __init__(self, kind: str):
        if kind not in ('joint_state', 'imu', 'wrench'):
            raise BadInputError(f'no raw decoder for {kind!r}')
        self.kind = kind
        self.bad = 0
        self.wrong_frame = 0
        self.last_wrong_frame = ''
        self._layouts: Dict[int, List[CdrLayout]] = {}
        self._count = 0

    def decode(self, raws: List[bytes], frames: Optional[Collection[str]] = None):
        """Decode a list of serialized messages.

        Args:
            raws: Serialized messages of this kind.
            frames: Accepted header ``frame_id`` values; None: any. A message in another
                frame is skipped and counted in :attr:`wrong_frame` (its frame in
                :attr:`last_wrong_frame`).

        Returns:
            A list of groups ``(stamps [s] (n,), values)``: for 'wrench' values (n, 6); for
            'imu' (quat (n, 4), gyro (n, 3), acc (n, 3)); for 'joint_state'
            (names, positions (n, k), velocities (n, k) or (n, 0), efforts likewise).
            Malformed messages are skipped and counted in :attr:`bad`.
        """
        self.bad = 0
        self.wrong_frame = 0
        if not raws:
            return []
        lens = np.fromiter(map(len, raws), np.int64, len(raws))
        out = []
        for length in np.unique(lens):
            if (lens == length).all():
                idx, members = None, raws
            else:
                idx = np.flatnonzero(lens == length)
                members = [raws[i] for i in idx]
            rows = np.frombuffer(b''.join(members), np.uint8).reshape(len(members), int(length))
            left = np.ones(len(members), bool)
            for layout in self._layouts.get(int(length), ()):
                self._take(layout, rows, left, frames, out)
            while left.any():
                first = int(np.argmax(left))
                layout = self._learn(members[first])
                if layout is None:
                    left[first] = False
                    out += self._one_by_one([members[first]], frames)
                else:
                    self._take(layout, rows, left, frames, out)
        return out

    def _learn(self, raw) -> Optional[CdrLayout]:
        if self._count >= MAX_LAYOUTS:
            return None
        layout = CdrLayout.learn(self.kind, raw)
        if layout is not None:
            self._layouts.setdefault(layout.itemsize, []).append(layout)
            self._count += 1
        return layout

    def _take(self, layout: CdrLayout, rows, left, frames, out) -> None:
        """Decode the rows still ``left`` that match ``layout`` into ``out``."""
        hit = layout.matches(rows) & left
        count = int(hit.sum())
        if not count:
            return
        left &= ~hit
        if frames is not None and layout.frame not in frames:
            self.wrong_frame += count
            self.last_wrong_frame = layout.frame[:200]
            return
        sec, nsec, arr = layout.read(rows[hit])
        stamps = sec + nsec * 1e-9
        if self.kind == 'wrench':
            out.append((stamps, np.array(arr['v'])))
        elif self.kind == 'imu':
            v = arr['v']
            out.append((stamps, (v[:, 0:4].copy(), v[:, 13:16].copy(), v[:, 25:28].copy())))
        else:
            empty = np.empty((count, 0))
            p, v, e = (np.array(arr[f]) if h else empty for f, h in zip('pve', layout.has))
            out.append((stamps, (layout.names, p, v, e)))

    def _one_by_one(self, members, frames) -> list:
        out = []
        for raw in members:
            try:
                if frames is not None:
                    frame = header_frame(raw)
                    if frame not in frames:
                        self.wrong_frame += 1
                        self.last_wrong_frame = frame[:200]
                        continue
                if self.kind == 'wrench':
                    t, v = decode_wrench(raw)
                    out.append((np.array([t]), v[None, :]))
                elif self.kind == 'imu':
                    t, q, g, a = decode_imu(raw)
                    out.append((np.array([t]), (q[None], g[None], a[None])))
                else:
                    t, names, p, v, e = decode_joint_state(raw)
                    out.append((np.array([t]), (names, p[None], v[None], e[None])))
            except _ERRORS:
                self.bad += 1
        return out
