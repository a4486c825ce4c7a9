"""The buffer node's intake of serialized messages, taken and decoded in batches.

With ``raw_decoding`` the buffer node subscribes its sensor topics from a ``<name>_intake``
node that is never spun: a steady timer takes every serialized message the middleware holds
into one queue per input (no executor dispatch, no Python frame per message), and each
processing pass decodes the queues in batches (:class:`legid_ros.ros.conversions.RawBatch`)
and feeds the buffer. A batch that fails is retried one message at a time, so only the bad
messages are lost (counted). :class:`RawIntake` is a base of
:class:`legid_ros.ros.buffer_node.BufferNode`.
"""

from __future__ import annotations

from functools import partial


class RawIntake:
    """Methods taking and decoding the queued serialized messages (a base of ``BufferNode``).

    Uses the node's ``buffer``, its queues ``_queue`` (per input key; ``_js_queue``: the joint
    states'), ``_polled`` (subscription, queue) pairs, the decoders ``_dec_js``, ``_dec_imu``,
    ``_dec_wrench``, ``_frames`` (accepted frame ids per key), ``_ankle_keys``, ``_kind`` and
    ``_counted`` (messages received per input kind), ``_flush_at`` and ``_flush`` (a
    processing pass), ``_guard`` (a failure costs only that call), ``_count`` (counts a cause
    in the buffer's events) and the node's logger.
    """

    def _on_intake(self):
        """Take the waiting messages; a processing pass once enough joint states wait."""
        self._take_all()
        if len(self._js_queue) >= self._flush_at:
            self._flush(take=False)  # just taken

    def _take_all(self):
        """Move every serialized message the middleware holds for the polled subscriptions
        into their queues (one pybind call per message, no executor dispatch)."""
        for sub, queue in self._polled:
            take, kind = sub.handle.take_message, sub.msg_type
            try:
                got = take(kind, True)
                while got is not None:
                    queue.append(got[0])
                    got = take(kind, True)
            except Exception as exc:  # noqa: BLE001  (one topic's failure spares the others)
                self._count('take_error')
                self.get_logger().error(f'{sub.topic_name}: take failed: {exc!r}'[:300],
                                        throttle_duration_sec=10.0)

    def _decode_queued(self):
        """Decode every queued serialized message in batches and feed the buffer."""
        for key, raws in self._queue.items():
            if raws:
                taken = raws[:]  # the subscription appends to this very list: empty it in place
                del raws[:len(taken)]
                self._counted[self._kind[key]] += len(taken)
                self._guard(self._decode_key, key, taken)

    def _decode_key(self, key, raws):
        """Decode and add the queued messages of one input; a failing batch is retried one
        message at a time, so only the bad messages are lost."""
        buf = self.buffer
        frames = self._frames.get(key)
        if key == 'js':
            dec = self._dec_js
            for stamps, (names, p, v, e) in dec.decode(raws):
                if not self._guard(buf.add_joint_states, stamps, names, p, v, e):
                    for k in range(len(stamps)):
                        self._guard(buf.add_joint_states, stamps[k:k + 1], names, p[k:k + 1],
                                    v[k:k + 1], e[k:k + 1])
        elif key == 'imu':
            dec = self._dec_imu
            for stamps, (qq, g, a) in dec.decode(raws, frames):
                if not self._guard(buf.add_imus, stamps, qq, g, a):
                    for k in range(len(stamps)):
                        self._guard(buf.add_imus, stamps[k:k + 1], qq[k:k + 1], g[k:k + 1],
                                    a[k:k + 1])
        else:
            dec = self._dec_wrench
            if key in self._ankle_keys:
                add = partial(buf.add_ankle_fts, self._ankle_keys[key])
            elif isinstance(key, tuple):
                add = (lambda stamps, w, foot=key[0], k=key[1]:
                       buf.add_fsrs(foot, k, stamps, w[:, 2]))
            else:
                add = partial(buf.add_wrenches, key)
            for stamps, w in dec.decode(raws, frames):
                if not self._guard(add, stamps, w):
                    for k in range(len(stamps)):
                        self._guard(add, stamps[k:k + 1], w[k:k + 1])
        if dec.bad:
            self._count('undecodable_message', dec.bad)
        if dec.wrong_frame:
            self._count('wrong_frame_id', dec.wrong_frame)
