"""Serialized (CDR) messages <-> numpy, for the 1 kHz paths (buffer input, sim output).

Re-exported by :mod:`legid_ros.ros.conversions`. Decoding is the one CDR decoder of
:mod:`legid_ros.bag.cdr` (shared with the bag reader); this module adds :class:`RawPacker`,
which serializes with a template made by rclpy.
"""

from __future__ import annotations

import numpy as np

from legid_ros.bag.cdr import (CdrLayout, RawBatch, decode_imu,  # noqa: F401 (re-exported)
                               decode_joint_state, decode_wrench, header_frame)
from legid_ros.core.errors import BadInputError


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

        if kind not in ('joint_state', 'imu', 'wrench'):
            raise BadInputError(f'no raw packer for {kind!r}')
        raw = serialize_message(template)
        layout = CdrLayout.learn(kind, raw)
        if layout is None:
            raise BadInputError(f'no fixed layout for this {kind} template')
        self.kind = kind
        self.dtype = layout.dtype
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
