"""Publish a rosbag2 into the ROS graph with its original timing (no ``ros2 bag play`` needed).

Messages are read with ``rosbags`` and published as they are stored (serialized CDR, through
``Publisher.publish(bytes)``), at the bag's receive times scaled by ``rate``. Topics whose
names are not valid ROS 2 names (``/left_foot/fsr/0``: a token may not start with a digit)
are published under :func:`legid_ros.ros.conversions.ros_topic_name` (``.../sensor_0``).
Single-message topics (ground truth, CAD parameters, meta) are latched (transient local).
With ``loop`` the bag restarts from the beginning: the stamps jump back, as with
``ros2 bag play --loop``. With ``clock`` a ``/clock`` is published from the bag times.
A failed publish (``RCLError`` under load) costs that message only: it is counted per topic,
warned about at most once per :data:`WARN_PERIOD_S`, and the replay goes on; once the ROS
context is shut down (Ctrl-C) the replay stops. The wall time is recorded however it ends.
At the end, :meth:`BagReplay.wait_delivered` waits until every reader has acknowledged what
was published: a process that exits right after its last publish loses what is still in
flight (a CI run lost one joint state of 8000, the start settle of
:meth:`BagReplay.wait_for_subscribers` already in; which one was not recorded).
"""

from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional

from legid_ros.bag.recording_io import open_bag
from legid_ros.ros.conversions import ros_topic_name, sec_to_stamp
from legid_ros.ros.node_util import latched_qos, sensor_qos

LATCHED = ('/legid/sim/ground_truth', '/legid/sim/cad_parameters', '/legid/sim/meta')
#: Shortest time between two warnings about failed publishes [s].
WARN_PERIOD_S = 5.0


@dataclass
class ReplayStats:
    """What a replay did.

    Attributes:
        published: Messages published, per ROS topic.
        skipped_types: Message types that are not installed (their topics were skipped).
        loops: Passes over the bag.
        bag_span_s: Duration of the bag [s].
        wall_s: Wall time of the replay [s].
        max_lag_s: Largest delay of a message behind its scheduled time [s].
        publish_failures: Messages whose publish failed, per ROS topic (``/clock`` included).
        warnings: Warnings logged about failed publishes.
        unacknowledged: ROS topics whose readers had not acknowledged everything when
            :meth:`BagReplay.wait_delivered` gave up.
    """

    published: Dict[str, int] = field(default_factory=dict)
    skipped_types: Dict[str, str] = field(default_factory=dict)
    loops: int = 0
    bag_span_s: float = 0.0
    wall_s: float = 0.0
    max_lag_s: float = 0.0
    publish_failures: Dict[str, int] = field(default_factory=dict)
    warnings: int = 0
    unacknowledged: List[str] = field(default_factory=list)


def message_class(msgtype: str):
    """The Python class of a ROS type name such as ``sensor_msgs/msg/JointState``."""
    pkg, kind, name = msgtype.split('/')
    return getattr(importlib.import_module(f'{pkg}.{kind}'), name)


class BagReplay:
    """Publishes a bag through a node.

    Args:
        node: rclpy node that owns the publishers.
        bag: rosbag2 directory, its .mcap/.db3 file, a bare .mcap, or an MCAP cut short
            (see :func:`legid_ros.bag.recording_io.read_bag`).
        rate: Playback speed (1 = original timing; <= 0 = as fast as possible).
        loop: Restart at the end.
        clock: Publish ``/clock`` from the bag's receive times.
        clock_period_s: Bag time between two ``/clock`` messages [s].
    """

    def __init__(self, node, bag, rate: float = 1.0, loop: bool = False, clock: bool = False,
                 clock_period_s: float = 0.01, queue_depth: int = 1000):
        self.node = node
        self.path = Path(bag)
        self.rate = float(rate)
        self.loop = loop
        self.clock_period = clock_period_s
        self.stats = ReplayStats()
        self._last_warning = -float('inf')
        self._stopped = False
        self.pubs = {}
        with open_bag(self.path) as reader:
            self.stats.bag_span_s = (reader.end_time - reader.start_time) * 1e-9
            for conn in reader.connections:
                if conn.topic in self.pubs:
                    continue
                try:
                    cls = message_class(conn.msgtype)
                except (ImportError, AttributeError, ValueError):
                    self.stats.skipped_types[conn.topic] = conn.msgtype
                    continue
                qos = latched_qos() if conn.topic in LATCHED else sensor_qos(queue_depth)
                topic = ros_topic_name(conn.topic)
                self.pubs[conn.topic] = (topic, node.create_publisher(cls, topic, qos))
        self.clock_pub = None
        if clock:
            from rosgraph_msgs.msg import Clock
            self.clock_pub = node.create_publisher(Clock, '/clock', 10)
            self._clock_cls = Clock

    def wait_for_subscribers(self, topic: str = '/joint_states', timeout_s: float = 5.0,
                             settle_s: float = 0.5) -> bool:
        """Wait until ``topic`` has a subscriber (or the timeout) [s], then ``settle_s`` [s]
        more: the publisher can see a reader before the reader has matched it (and the
        other topics' readers may come a moment later), and what is published in between is
        lost (volatile durability; seen: one joint state of 8000 on a loaded machine)."""
        entry = self.pubs.get(topic)
        if entry is None:
            return False
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if entry[1].get_subscription_count() > 0:
                time.sleep(settle_s)
                return True
            time.sleep(0.02)
        return False

    def wait_delivered(self, timeout_s: float = 5.0) -> bool:
        """Wait until the readers of every topic have acknowledged what was published (reliable
        QoS), at most ``timeout_s`` [s] in all; topics still waiting go to
        ``stats.unacknowledged``. Returns whether everything was acknowledged."""
        from rclpy.duration import Duration

        end = time.monotonic() + timeout_s
        pending = []
        for topic, pub in list(self.pubs.values()) + [('/clock', self.clock_pub)]:
            if pub is None or not self.node.context.ok():
                continue
            left = max(end - time.monotonic(), 0.0)
            try:
                done = pub.wait_for_all_acked(Duration(nanoseconds=int(left * 1e9)))
            except Exception:  # noqa: BLE001  (a publisher gone with the context: nothing to wait)
                done = True
            if not done:
                pending.append(topic)
        self.stats.unacknowledged = pending
        return not pending

    def run(self, stop: Optional[Callable[[], bool]] = None, max_loops: Optional[int] = None
            ) -> ReplayStats:
        """Publish the bag (once, or until ``stop()`` / ``max_loops`` when looping).

        The wall time is in the stats also when an exception (KeyboardInterrupt) ends it."""
        self._wall0 = None
        start = time.monotonic()
        lap_offset = 0.0
        try:
            while True:
                self._one_pass(lap_offset, stop)
                self.stats.loops += 1
                lap_offset += self.stats.bag_span_s + 1e-3
                if not self.loop or self._stopped or (stop is not None and stop()):
                    break
                if max_loops is not None and self.stats.loops >= max_loops:
                    break
        finally:
            self.stats.wall_s = time.monotonic() - start
        return self.stats

    def _publish(self, pub, topic: str, msg) -> bool:
        """Publish ``msg``; a failure is counted and warned about (rate-limited), not raised.

        Returns whether it was published; after the context is shut down the replay stops."""
        try:
            pub.publish(msg)
            return True
        except Exception as exc:  # noqa: BLE001  (rclpy's RCLError: drop this message only)
            if not self.node.context.ok():
                self._stopped = True
                return False
            failures = self.stats.publish_failures
            failures[topic] = failures.get(topic, 0) + 1
            now = time.monotonic()
            if now - self._last_warning >= WARN_PERIOD_S:
                self._last_warning = now
                self.stats.warnings += 1
                self.node.get_logger().warning(
                    f'publish to {topic} failed ({type(exc).__name__}: '
                    f'{" ".join(str(exc).split())[:200]}); {sum(failures.values())} '
                    f'message(s) dropped so far, the replay goes on')
            return False

    def _one_pass(self, lap_offset: float, stop) -> None:
        next_clock = None
        with open_bag(self.path) as reader:
            t0 = reader.start_time
            conns = [c for c in reader.connections if c.topic in self.pubs]
            for i, (conn, stamp_ns, raw) in enumerate(reader.messages(connections=conns)):
                bag_t = (stamp_ns - t0) * 1e-9
                if self._wall0 is None:
                    self._wall0 = time.monotonic()
                if self.rate > 0:
                    target = self._wall0 + (lap_offset + bag_t) / self.rate
                    delay = target - time.monotonic()
                    if delay > 0.001:
                        time.sleep(delay - 0.0005)
                    self.stats.max_lag_s = max(self.stats.max_lag_s, -delay)
                topic, pub = self.pubs[conn.topic]
                if self._publish(pub, topic, bytes(raw)):
                    self.stats.published[topic] = self.stats.published.get(topic, 0) + 1
                if self.clock_pub is not None and (next_clock is None or bag_t >= next_clock):
                    self._publish(self.clock_pub, '/clock',
                                  self._clock_cls(clock=sec_to_stamp(stamp_ns * 1e-9)))
                    next_clock = bag_t + self.clock_period
                if self._stopped or (stop is not None and i % 200 == 0 and stop()):
                    return
