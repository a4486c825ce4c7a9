"""Calling a node's ``std_srvs/Trigger`` service from a short-lived node (``legid save``,
``legid reset``): for machines with rclpy but without the ``ros2`` command line.

:class:`TriggerClient` opens a private rclpy context (optionally on a given domain id, with no
rclpy signal handlers: the caller polls its own), waits for the service to appear, calls it and
returns the answer. A request is resent every :data:`RESEND_S` while unanswered: DDS may lose a
reply sent before the server's reply writer matched this client (both services it serves are
idempotent). A service that never appears raises :class:`ServiceNotFoundError`, whose message
says what to check and names the visible services of the same name in other namespaces
(:func:`missing_service_hint`), so a namespaced ``/robot1/estimator/save`` is found without
``ros2 service list``.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import time
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Tuple

from legid_ros.core.errors import BadInputError, LegidError

#: The service type called [-].
TRIGGER_TYPE = 'std_srvs/srv/Trigger'
#: Interval between two sends of an unanswered request [s].
RESEND_S = 2.0
#: Spin step between two checks of the deadline and of the stop request [s].
POLL_S = 0.05
#: Visible services named in a hint, at most [-].
SHOWN = 5

#: (service name, its types) as ``Node.get_service_names_and_types`` returns them.
ServiceList = Sequence[Tuple[str, Sequence[str]]]


class ServiceNotFoundError(LegidError):
    """No server of a Trigger service appeared within the timeout.

    Attributes:
        service: The fully qualified service name waited for.
        timeout_s: How long it was waited for [s].
        domain_id: The ROS domain id searched.
        visible: The services served at the end of the wait (name, types), this node's own
            left out.
        suggestion: The node (``--node`` value) that most likely was meant, or None.
    """

    def __init__(self, service: str, timeout_s: float, domain_id: int, visible: ServiceList):
        hint, suggestion = missing_service_hint(service, visible)
        node = service.rsplit('/', 1)[0] or '/'
        super().__init__(
            f'no service {service} ({TRIGGER_TYPE}) appeared within {timeout_s:g} s on '
            f'ROS_DOMAIN_ID {domain_id}; {hint}; check that node {node} is running, with the '
            'same ROS_DOMAIN_ID and discovery settings (ROS_AUTOMATIC_DISCOVERY_RANGE, '
            'ROS_LOCALHOST_ONLY)')
        self.service = service
        self.timeout_s = timeout_s
        self.domain_id = domain_id
        self.visible = [(name, list(types)) for name, types in visible]
        self.suggestion = suggestion


class NoAnswerError(LegidError):
    """The service appeared but did not answer within the timeout.

    Attributes:
        service: The fully qualified service name.
        timeout_s: How long the answer was waited for [s].
        sent: Requests sent (one per :data:`RESEND_S`).
    """

    def __init__(self, service: str, timeout_s: float, sent: int):
        super().__init__(f'{service} did not answer within {timeout_s:g} s ({sent} request(s) '
                         'sent): is its node alive and spinning?')
        self.service = service
        self.timeout_s = timeout_s
        self.sent = sent


@dataclass(frozen=True)
class TriggerAnswer:
    """A Trigger service's answer.

    Attributes:
        service: The service called.
        success: Its ``success`` field.
        message: Its ``message`` field.
    """

    service: str
    success: bool
    message: str


def service_name(node: str, leaf: str) -> str:
    """The fully qualified name of service ``leaf`` of ``node`` (``estimator`` -> ``/estimator``).

    Raises:
        BadInputError: ``node`` is no valid fully qualified node name.
    """
    from rclpy.validate_full_topic_name import validate_full_topic_name

    text = str(node).strip()
    full = '/' + text.strip('/')
    name = f'{full}/{leaf}'
    if full == '/':
        raise BadInputError(f'--node {node!r} names no node')
    try:
        validate_full_topic_name(name, is_service=True)
    except Exception as exc:  # noqa: BLE001  (rclpy's InvalidServiceNameException and kin)
        raise BadInputError(f'--node {node!r} is no valid node name ({name!r}: '
                            f'{" ".join(str(exc).split())})') from exc
    return name


def missing_service_hint(service: str, visible: ServiceList) -> Tuple[str, Optional[str]]:
    """What the visible services say about a missing ``service``: (hint text, suggested node).

    Candidates are the Trigger services with the same last name (``.../save``). The one
    suggested is, first, one whose node has the same name in another namespace
    (``/robot1/estimator`` for ``/estimator``, the closest spelling first), else one spelled
    close to the name asked for (a renamed or mistyped node). Pure: no ROS call.
    """
    leaf = service.rsplit('/', 1)[-1]
    node = service.rsplit('/', 1)[0]
    base = node.rsplit('/', 1)[-1]
    same = sorted(name for name, types in visible
                  if name.rsplit('/', 1)[-1] == leaf and TRIGGER_TYPE in types and name != service)
    notes = []
    other = [t for name, types in visible if name == service for t in types]
    if other:
        notes.append(f'{service} exists but is of type {", ".join(other)}, not {TRIGGER_TYPE}')
    namesakes = [name for name in same if name.rsplit('/', 2)[-2] == base]
    ranked = difflib.get_close_matches(service, namesakes, n=1, cutoff=0.0) or \
        difflib.get_close_matches(service, same, n=1, cutoff=0.75)
    suggestion = ranked[0].rsplit('/', 1)[0] if ranked else None
    if same:
        shown = ', '.join(same[:SHOWN]) + (f' and {len(same) - SHOWN} more'
                                            if len(same) > SHOWN else '')
        notes.append((f'did you mean --node {suggestion}? ' if suggestion else '')
                     + f'(visible .../{leaf} services: {shown})')
    elif visible:
        notes.append(f'{len(visible)} service(s) visible, no Trigger service named .../{leaf}')
    else:
        notes.append('no service at all is visible on this domain')
    return '; '.join(notes), suggestion


class TriggerClient:
    """A short-lived node calling Trigger services, in a context of its own.

    Args:
        domain_id: ROS domain id (None: ``$ROS_DOMAIN_ID``, else 0).
        stop: Polled while waiting; when it returns true the wait ends with KeyboardInterrupt.
        name: Node name (default ``legid_cli_<pid>``: two invocations never share one).
    """

    def __init__(self, domain_id: Optional[int] = None,
                 stop: Optional[Callable[[], bool]] = None, name: Optional[str] = None):
        import rclpy
        from rclpy.signals import SignalHandlerOptions

        from legid_ros.ros.executor import make_executor

        self._rclpy = rclpy
        self.stop = stop or (lambda: False)
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain_id,
                   signal_handler_options=SignalHandlerOptions.NO)
        self.node = None
        self.executor = None
        try:
            self.node = rclpy.create_node(name or f'legid_cli_{os.getpid()}',
                                          context=self.context, start_parameter_services=False,
                                          enable_rosout=False)
            self.executor = make_executor(context=self.context)
            self.executor.add_node(self.node)
        except BaseException:
            self.close()
            raise

    @property
    def domain_id(self) -> int:
        """The domain id in use."""
        return int(self.context.get_domain_id())

    def visible_services(self) -> List[Tuple[str, List[str]]]:
        """The services served now by the visible nodes (name, types), this node left out.

        Asked node by node: the graph's plain service list also holds names that only have
        clients (this node's own client among them)."""
        own = self.node.get_fully_qualified_name()
        served = {}
        for name, namespace in self.node.get_node_names_and_namespaces():
            if f'{namespace.rstrip("/")}/{name}' == own:
                continue
            try:
                found = self.node.get_service_names_and_types_by_node(name, namespace)
            except Exception:  # noqa: BLE001  (the node left meanwhile)
                continue
            for service, types in found:
                served.setdefault(service, set()).update(types)
        return [(service, sorted(types)) for service, types in sorted(served.items())]

    def _step(self) -> None:
        if self.stop():
            raise KeyboardInterrupt
        self.executor.spin_once(timeout_sec=POLL_S)

    def call(self, service: str, timeout_s: float,
             on_waiting: Optional[Callable[[], None]] = None, note_after_s: float = 3.0
             ) -> TriggerAnswer:
        """Wait up to ``timeout_s`` [s] for ``service``, call it, wait as long for its answer.

        Args:
            service: Fully qualified service name (:func:`service_name`).
            timeout_s: Deadline of the wait for the service, and then of its answer [s].
            on_waiting: Called once when the service is not there after ``note_after_s`` [s].
            note_after_s: See ``on_waiting`` [s].

        Raises:
            ServiceNotFoundError: No server appeared in time (message: what to check).
            NoAnswerError: The server did not answer in time.
            KeyboardInterrupt: ``stop()`` became true.
        """
        from std_srvs.srv import Trigger

        client = self.node.create_client(Trigger, service)
        try:
            start = time.monotonic()
            noted = on_waiting is None
            while not client.service_is_ready():
                waited = time.monotonic() - start
                if waited >= timeout_s:
                    raise ServiceNotFoundError(service, timeout_s, self.domain_id,
                                               self.visible_services())
                if not noted and waited >= note_after_s:
                    noted = True
                    on_waiting()
                self._step()
            futures = []
            end = time.monotonic() + timeout_s
            last = -RESEND_S
            while True:
                done = next((f for f in futures if f.done() and f.result() is not None), None)
                if done is not None:
                    res = done.result()
                    return TriggerAnswer(service, bool(res.success), str(res.message))
                now = time.monotonic()
                if now >= end:
                    raise NoAnswerError(service, timeout_s, len(futures))
                if now - last >= RESEND_S and client.service_is_ready():
                    futures.append(client.call_async(Trigger.Request()))
                    last = now
                self._step()
        finally:
            with contextlib.suppress(Exception):
                self.node.destroy_client(client)

    def close(self) -> None:
        """Tear down the executor, the node and the context (safe to call twice)."""
        if self.executor is not None:
            with contextlib.suppress(Exception):
                self.executor.shutdown(timeout_sec=1.0)
            self.executor = None
        if self.node is not None:
            with contextlib.suppress(Exception):
                self.node.destroy_node()
            self.node = None
        with contextlib.suppress(Exception):
            self._rclpy.try_shutdown(context=self.context)

    def __enter__(self) -> 'TriggerClient':
        return self

    def __exit__(self, *exc) -> None:
        self.close()
