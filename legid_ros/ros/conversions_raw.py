"""Serialized (CDR) messages <-> numpy, for the 1 kHz paths (buffer input, sim output).

Re-exported by :mod:`legid_ros.ros.conversions`. Little-endian CDR (XCDR1) as rmw_fastrtps
writes it: a 4-byte encapsulation header, then the fields aligned to their size relative to
the end of that header.
"""

from __future__ import annotations

import struct
from typing import Collection, Dict, List, Optional, Tuple

import numpy as np

from legid_ros.core.errors import BadInputError

# ------------------------------------------- serialized (raw) subscriptions
# The buffer subscribes with ``raw=True`` and decodes the CDR bytes here: about half the CPU
# of rclpy's deserialisation into Python message objects at 1 kHz per topic.
_U32 = struct.Struct('<I')
_STAMP = struct.Struct('<iI')


def _header(raw: bytes) -> Tuple[float, int]:
    """(stamp [s], offset after the header) of a CDR message starting with a std_msgs/Header."""
    if len(raw) < 16 or raw[1] != 1:
        raise BadInputError('not a little-endian CDR message')
    sec, nsec = _STAMP.unpack_from(raw, 4)
    (n,) = _U32.unpack_from(raw, 12)
    return sec + nsec * 1e-9, 16 + n


def header_frame(raw: bytes) -> str:
    """``header.frame_id`` of a CDR message starting with a std_msgs/Header."""
    _, end = _header(raw)
    if end > len(raw):
        raise BadInputError('truncated CDR message')
    return bytes(raw[16:max(end - 1, 16)]).decode()


def _align(off: int, k: int) -> int:
    rel = off - 4
    return off + (-rel) % k


def _doubles_at(raw: bytes, off: int, count: int) -> Tuple[np.ndarray, int]:
    off = _align(off, 8)
    end = off + 8 * count
    if end > len(raw):
        raise BadInputError('truncated CDR message')
    return np.frombuffer(raw, '<f8', count, off), end


def _sequence(raw: bytes, off: int) -> Tuple[np.ndarray, int]:
    off = _align(off, 4)
    (n,) = _U32.unpack_from(raw, off)
    if n == 0:
        return np.empty(0), off + 4
    return _doubles_at(raw, off + 4, n)


_names_cache: Dict[bytes, Tuple[Tuple[str, ...], int]] = {}


def decode_joint_state(raw: bytes):
    """(stamp [s], names, positions, velocities, efforts) of a serialized JointState."""
    t, off = _header(raw)
    off = _align(off, 4)
    (count,) = _U32.unpack_from(raw, off)
    start = off
    off += 4
    cached = None
    for key, value in _names_cache.items():
        if raw.startswith(key, start):
            cached = value
            break
    if cached is not None:
        names, off = cached[0], start + cached[1]
    else:
        names = []
        for _ in range(count):
            off = _align(off, 4)
            (n,) = _U32.unpack_from(raw, off)
            names.append(raw[off + 4:off + 3 + n].decode())
            off += 4 + n
        names = tuple(names)
        if len(_names_cache) < 8:
            _names_cache[bytes(raw[start:off])] = (names, off - start)
    pos, off = _sequence(raw, off)
    vel, off = _sequence(raw, off)
    eff, off = _sequence(raw, off)
    return t, names, pos, vel, eff


def decode_wrench(raw: bytes):
    """(stamp [s], [fx fy fz tx ty tz]) of a serialized WrenchStamped."""
    t, off = _header(raw)
    values, _ = _doubles_at(raw, off, 6)
    return t, values


def decode_imu(raw: bytes):
    """(stamp [s], quaternion [x y z w], angular velocity, specific force) of a serialized Imu."""
    t, off = _header(raw)
    values, _ = _doubles_at(raw, off, 4 + 9 + 3 + 9 + 3)
    return t, values[0:4], values[13:16], values[25:28]


class RawBatch:
    """Decodes a batch of serialized messages of one type with numpy (no per-message Python).

    Messages of one topic normally share one byte layout (same frame id, same joint names and
    array lengths): the layout is found from the first message of each length, then every
    message of that layout is read as one structured array. Messages whose layout differs
    (other names, missing velocity) are decoded one by one.

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
        self._layouts: Dict[Tuple[int, bytes], tuple] = {}
        self._by_len: Dict[int, List[Tuple[bytes, tuple]]] = {}

    def _layout(self, raw: bytes):
        """(structured dtype, extra) for messages shaped like ``raw``, or None."""
        _, off = _header(raw)
        if self.kind == 'wrench':
            start = _align(off, 8)
            fields = [('v', '<f8', (6,))]
            offsets = [start]
            key_end = off
            extra = ()
        elif self.kind == 'imu':
            start = _align(off, 8)
            fields = [('v', '<f8', (28,))]
            offsets = [start]
            key_end = off
            extra = ()
        else:
            t, names, pos, vel, eff = decode_joint_state(raw)
            n = len(names)
            if n == 0 or len(pos) != n or len(vel) not in (0, n) or len(eff) not in (0, n):
                return None  # empty or inconsistent: decoded one by one (then refused)
            key_end = _align(off, 4)
            (count,) = _U32.unpack_from(raw, key_end)
            o = key_end + 4
            for _ in range(count):
                o = _align(o, 4)
                (ln,) = _U32.unpack_from(raw, o)
                o += 4 + ln
            key_end = o
            fields, offsets = [], []
            for name, arr in (('p', pos), ('v', vel), ('e', eff)):
                o = _align(o, 4) + 4
                if len(arr):
                    o = _align(o, 8)
                    fields.append((name, '<f8', (n,)))
                    offsets.append(o)
                    o += 8 * n
            extra = (names, len(vel) > 0, len(eff) > 0)
        dtype = np.dtype({'names': ['sec', 'nsec'] + [f[0] for f in fields],
                          'formats': ['<i4', '<u4'] + [(f[1], f[2]) for f in fields],
                          'offsets': [4, 8] + offsets, 'itemsize': len(raw)})
        return dtype, extra, key_end

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
            (names, positions (n, k), velocities (n, k) or empty, efforts or empty).
            Malformed messages are skipped and counted in :attr:`bad`.
        """
        self.bad = 0
        self.wrong_frame = 0
        groups: Dict[Tuple[int, bytes], List[bytes]] = {}
        for raw in raws:
            key = None
            for prefix, _ in self._by_len.get(len(raw), ()):
                if raw.startswith(prefix, 12):
                    key = (len(raw), prefix)
                    break
            if key is None:
                key = self._learn(raw)
            groups.setdefault(key, []).append(raw)
        out = []
        for key, members in groups.items():
            layout = self._layouts.get(key)
            if frames is not None and layout is not None:  # one layout: one frame
                if not self._in_frames(members[:1], frames):
                    self.wrong_frame += len(members) - 1
                    continue
            elif frames is not None:
                members = self._in_frames(members, frames)
            if layout is None:
                out += self._one_by_one(members)
                continue
            try:
                out.append(self._group(layout, members))
            except (ValueError, IndexError, KeyError, TypeError):
                out += self._one_by_one(members)
        return out

    def _in_frames(self, members: List[bytes], frames: Collection[str]) -> List[bytes]:
        """The members whose header frame is accepted; the others counted as wrong_frame."""
        kept = []
        for raw in members:
            try:
                frame = header_frame(raw)
            except (BadInputError, struct.error, UnicodeDecodeError):
                self.bad += 1
                continue
            if frame in frames:
                kept.append(raw)
            else:
                self.wrong_frame += 1
                self.last_wrong_frame = frame[:200]
        return kept

    def _group(self, layout, members: List[bytes]):
        """(stamps, values) of messages sharing one layout, read as one structured array."""
        dtype, extra, _ = layout
        arr = np.frombuffer(b''.join(members), dtype=dtype)
        stamps = arr['sec'] + arr['nsec'] * 1e-9
        if self.kind == 'wrench':
            return stamps, np.array(arr['v'])
        if self.kind == 'imu':
            v = arr['v']
            return stamps, (np.array(v[:, 0:4]), np.array(v[:, 13:16]), np.array(v[:, 25:28]))
        names, has_v, has_e = extra
        empty = np.empty((len(members), 0))
        return stamps, (names, np.array(arr['p']), np.array(arr['v']) if has_v else empty,
                        np.array(arr['e']) if has_e else empty)

    def _learn(self, raw: bytes):
        """Find the layout of ``raw``; returns its group key ((len, prefix) or an odd one)."""
        try:
            layout = self._layout(raw)
        except (BadInputError, struct.error, UnicodeDecodeError, IndexError, ValueError):
            layout = None
        if layout is None or len(self._layouts) >= 64:
            return (len(raw), b'\x00odd')
        prefix = bytes(raw[12:layout[2]])
        key = (len(raw), prefix)
        self._layouts[key] = layout
        self._by_len.setdefault(len(raw), []).append((prefix, layout))
        return key

    def _one_by_one(self, members):
        out = []
        for raw in members:
            try:
                if self.kind == 'wrench':
                    t, v = decode_wrench(raw)
                    out.append((np.array([t]), v[None, :]))
                elif self.kind == 'imu':
                    t, qq, g, a = decode_imu(raw)
                    out.append((np.array([t]), (qq[None], g[None], a[None])))
                else:
                    t, names, p, v, e = decode_joint_state(raw)
                    out.append((np.array([t]), (names, p[None], v[None], e[None])))
            except (BadInputError, struct.error, UnicodeDecodeError, IndexError, ValueError):
                self.bad += 1
        return out


class RawPacker:
    """Serializes many messages of one fixed layout at once (numpy), for 1 kHz publishing.

    A template message is serialized once by rclpy; :meth:`pack` writes the stamps and float
    fields of N messages into copies of it. ``Publisher.publish(bytes)`` sends them as they are.

    Args:
        kind: 'joint_state', 'imu' or 'wrench'.
        template: A message of that type with the final frame id (and joint names).
    """

    def __init__(self, kind: str, template):
        from rclpy.serialization import serialize_message

        raw = serialize_message(template)
        layout = RawBatch(kind)._layout(raw)
        if layout is None:
            raise BadInputError(f'no fixed layout for this {kind} template')
        self.kind = kind
        self.dtype = layout[0]
        self.template = np.frombuffer(raw, np.uint8)

    def restamp(self, rows: np.ndarray, stamps: np.ndarray) -> None:
        """Write new ``stamps`` [s] into messages made by :meth:`pack`, in place."""
        arr = rows.view(self.dtype).reshape(len(rows))
        ns = np.round(np.asarray(stamps, float) * 1e9).astype(np.int64)
        arr['sec'], arr['nsec'] = np.divmod(ns, 10 ** 9)

    def pack(self, stamps: np.ndarray, **fields) -> np.ndarray:
        """(N, bytes) serialized messages; fields: wrench ``v`` (N, 6); imu ``quat``, ``gyro``,
        ``acc``; joint_state ``p``, ``v``, ``e`` (N, nj)."""
        n = len(stamps)
        rows = np.tile(self.template, (n, 1))
        arr = rows.view(self.dtype).reshape(n)
        ns = np.round(np.asarray(stamps, float) * 1e9).astype(np.int64)
        arr['sec'], arr['nsec'] = np.divmod(ns, 10 ** 9)
        if self.kind == 'imu':
            v = np.zeros((n, 28))
            v[:, 0:4], v[:, 13:16], v[:, 25:28] = fields['quat'], fields['gyro'], fields['acc']
            arr['v'] = v
        else:
            for key, value in fields.items():
                arr[key] = value
        return rows
