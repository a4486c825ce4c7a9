"""What keeps a legid node alive on any input: guarded callbacks, counted causes, limited output.

- :func:`guarded` wraps a subscription, timer or service callback: any exception costs that one
  call, is counted under a cause (``callback_error.<ExceptionType>``) and never reaches the
  executor (whose ``[FATAL] Exception in ... callback`` would stop the node). Once the context
  is shut down the call is dropped silently (a callback racing a Ctrl-C).
- :class:`ProblemCounts` counts rejected input per cause, logs the first occurrence of each
  cause once, and keeps at most ``max_causes`` causes (later new ones are summed under
  ``other``): memory stays bounded whatever the input.
- :class:`DiagnosticsGate` lets a node publish ``/diagnostics`` at most once per period: the
  periodic status, or an early one when a new problem appears and the last publication is
  older than a period (the periodic timer then restarts from that publication).
- :class:`BoundedCache` is a small least-recently-used map for per-name lookups.
"""

from __future__ import annotations

import inspect
import time
from collections import OrderedDict
from typing import Any, Callable, Dict, Hashable, Optional

from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node

#: Most causes kept by name in :class:`ProblemCounts` [-].
MAX_CAUSES = 64


class ProblemCounts:
    """Counts of rejected input per cause, and a first-occurrence log line per cause.

    Args:
        logger: rclpy logger (``node.get_logger()``); None: no log.
        max_causes: Causes kept by name; further new causes are counted under ``other``.
    """

    def __init__(self, logger=None, max_causes: int = MAX_CAUSES):
        self.logger = logger
        self.max_causes = max_causes
        self.counts: Dict[str, int] = {}
        self.last_message = ''
        self._new = False

    def add(self, cause: str, message: str = '', n: int = 1) -> bool:
        """Count ``n`` occurrences of ``cause``; returns True when the cause is new."""
        if cause not in self.counts and len(self.counts) >= self.max_causes:
            cause = 'other'
        first = cause not in self.counts
        self.counts[cause] = self.counts.get(cause, 0) + n
        if message:
            self.last_message = message[:500]
        if first:
            self._new = True
            if self.logger is not None:
                self.logger.warning(f'{cause}: {message[:500]} (counted in /diagnostics)'
                                    if message else f'{cause} (counted in /diagnostics)')
        return first

    def take_new(self) -> bool:
        """Whether a new cause appeared since the last call."""
        new, self._new = self._new, False
        return new

    @property
    def total(self) -> int:
        """Occurrences of every cause [-]."""
        return sum(self.counts.values())

    def summary(self) -> str:
        """``cause xN, ...`` sorted by cause."""
        return ', '.join(f'{k} x{v}' for k, v in sorted(self.counts.items()))

    def clear(self) -> None:
        """Forget every count."""
        self.counts.clear()
        self.last_message = ''
        self._new = False


class DiagnosticsGate:
    """At most one ``/diagnostics`` publication per period.

    Args:
        period_s: Period [s] (monotonic wall time: also with ``use_sim_time``).
    """

    def __init__(self, period_s: float):
        self.period_s = float(period_s)
        self.last = -float('inf')
        self.publications = 0

    def allow(self, now: Optional[float] = None) -> bool:
        """An early publication: True (and recorded) when the last one is a period old.

        The caller then restarts its periodic timer, so the next periodic publication is a
        period later too."""
        now = time.monotonic() if now is None else now
        if now - self.last < self.period_s:
            return False
        self.mark(now)
        return True

    def mark(self, now: Optional[float] = None) -> None:
        """Record a periodic publication (its timer keeps the spacing)."""
        self.last = time.monotonic() if now is None else now
        self.publications += 1


class BoundedCache:
    """A least-recently-used map holding at most ``size`` entries.

    Args:
        size: Most entries kept [-].
    """

    def __init__(self, size: int = 16):
        self.size = max(int(size), 1)
        self._data: OrderedDict = OrderedDict()

    def get(self, key: Hashable, default=None):
        """The value of ``key`` (now the most recent), or ``default``."""
        try:
            self._data.move_to_end(key)
        except KeyError:
            return default
        return self._data[key]

    def put(self, key: Hashable, value: Any) -> None:
        """Store ``key``; the least recently used entry goes when the map is full."""
        self._data[key] = value
        self._data.move_to_end(key)
        while len(self._data) > self.size:
            self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        """Drop every entry."""
        self._data.clear()


def _refuse_the_rest(request, response, exc: Exception) -> None:
    """A failed SetParameters call: one refused result for each parameter left without one."""
    reason = f'failed: {type(exc).__name__}: {exc}'[:500]
    while len(response.results) < len(request.parameters):
        response.results.append(SetParametersResult(successful=False, reason=reason))


def guarded(fn: Callable, problems: ProblemCounts, context, service: bool = False
            ) -> Callable:
    """``fn`` that never raises: an exception is counted (cause ``callback_error.<Type>``).

    Args:
        fn: The callback.
        problems: Where the failure is counted.
        context: The node's rclpy context; once it is shut down failures are dropped silently.
        service: ``fn(request, response)`` of a service: on failure the response is returned
            with ``success = False`` and the reason (std_srvs/Trigger style); a SetParameters
            reply gets one refused result (with the reason) per parameter left without one.
    """

    def call(*args):
        try:
            return fn(*args)
        except Exception as exc:  # noqa: BLE001  (input must never stop a node)
            if context is not None and not context.ok():
                return args[-1] if service else None
            problems.add(f'callback_error.{type(exc).__name__}', f'{fn.__name__}: {exc}')
            if service:
                response = args[-1]
                if hasattr(response, 'success'):
                    response.success = False
                    response.message = f'failed: {exc}'[:500]
                elif hasattr(response, 'results') and hasattr(args[0], 'parameters'):
                    _refuse_the_rest(args[0], response, exc)
                return response
            return None

    call.__name__ = getattr(fn, '__name__', 'callback')
    return call


class GuardedNode(Node):
    """A node whose every subscription, timer and service callback is :func:`guarded`.

    Failures are counted in :attr:`problems` (the node adds them to its ``/diagnostics``);
    :attr:`diag_gate` limits ``/diagnostics`` to one publication per period.

    Args:
        name: Node name.
        **kwargs: Passed to ``rclpy.node.Node``.
    """

    def __init__(self, name: str, **kwargs):
        self.problems = ProblemCounts()  # before Node.__init__: it creates services
        self.diag_gate = DiagnosticsGate(1.0)
        super().__init__(name, **kwargs)
        self.problems.logger = self.get_logger()

    def create_subscription(self, msg_type, topic, callback, qos_profile, **kwargs):
        """``Node.create_subscription`` with a guarded callback."""
        return super().create_subscription(
            msg_type, topic, guarded(callback, self.problems, self.context), qos_profile,
            **kwargs)

    def create_timer(self, timer_period_sec, callback, *args, **kwargs):
        """``Node.create_timer`` with a guarded callback."""
        safe = guarded(callback, self.problems, self.context)
        # rclpy's executor reads a timer callback's signature at every call (for a TimerInfo
        # argument): a preset one spares inspect.signature its work (a few us) per tick
        safe.__signature__ = inspect.Signature()
        return super().create_timer(timer_period_sec, safe, *args, **kwargs)

    def publish_diagnostics_now(self, **kwargs) -> bool:
        """Publish ``/diagnostics`` at once if the gate allows (then the periodic timer restarts).

        The node defines ``_publish_diagnostics(**kwargs)`` and its parameters ``self.p`` carry
        ``diagnostics_period_s``. Returns whether it published.
        """
        if not self.diag_gate.allow():
            return False
        self._publish_diagnostics(**kwargs)
        timer = self.p.timer_of('diagnostics_period_s')
        if timer is not None:
            timer.reset()
        return True

    def _on_diag_timer(self) -> None:
        """The periodic ``/diagnostics`` publication."""
        self.diag_gate.mark()
        self._publish_diagnostics()

    def create_service(self, srv_type, srv_name, callback, **kwargs):
        """``Node.create_service`` with a guarded callback (failure: success = False)."""
        return super().create_service(
            srv_type, srv_name, guarded(callback, self.problems, self.context, service=True),
            **kwargs)
