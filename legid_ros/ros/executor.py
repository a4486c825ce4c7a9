"""Shared spin helper of the legid nodes: the EventsExecutor when available, clean shutdown.

At 1 kHz per topic, rclpy's default ``SingleThreadedExecutor`` costs about 200 us of CPU per
message on this machine and drops messages; ``rclpy.experimental.EventsExecutor`` (rclpy >=
Jazzy) about 40 us. Humble has no EventsExecutor: the fallback is the SingleThreadedExecutor.
:func:`run_node` handles SIGINT and SIGTERM itself: every node stops with exit 0, no traceback;
a second signal exits at once (:mod:`legid_ros.ros.stop_signals`, whose handlers the node
executables install before their imports).
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Callable, Optional

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.signals import SignalHandlerOptions

from legid_ros.ros.node_util import config_file_problems
from legid_ros.ros.stop_signals import StopSignals, orderly

__all__ = ['StopSignals', 'make_executor', 'run_node', 'spin']

#: Longest single ``spin_until_future_complete`` call of :func:`spin` [s].
SPIN_ROUND_S = 60.0


def make_executor(kind: str = 'auto', context=None):
    """An executor: 'events' (raises if unavailable), 'single', or 'auto' (events if present).

    ``$LEGID_EXECUTOR`` overrides 'auto'.
    """
    if kind == 'auto':
        kind = os.environ.get('LEGID_EXECUTOR', 'auto')
    if kind in ('auto', 'events'):
        try:
            from rclpy.experimental import EventsExecutor
            return EventsExecutor(context=context)
        except ImportError:
            if kind == 'events':
                raise
    return SingleThreadedExecutor(context=context)


def spin(node, executor=None, until: Optional[Callable[[], bool]] = None,
         timeout_s: Optional[float] = None, poll_s: float = 0.1) -> None:
    """Spin ``node`` until shutdown, ``until()`` is true, or ``timeout_s`` [s] passes.

    ``until`` is checked every ``poll_s`` [s] by a steady-clock timer of the node (it fires
    with ``use_sim_time`` and no ``/clock`` too); between two checks the executor serves
    callbacks on its own (the events executor in C++, no Python between two messages), which
    at 1 kHz per topic costs a fraction of one ``spin_once`` per message. One
    ``spin_until_future_complete`` call per :data:`SPIN_ROUND_S`: every call keeps about 30
    bytes (rclpy 9's events executor), 0.6 MB per half hour at one call per ``poll_s``.
    """
    import time

    from rclpy.clock import Clock, ClockType
    from rclpy.task import Future

    own = executor is None
    executor = executor or make_executor(context=node.context)
    executor.add_node(node)
    end = None if timeout_s is None else time.monotonic() + timeout_s
    done = Future()

    def check() -> None:
        if done.done():
            return
        if (not rclpy.ok(context=node.context) or (until is not None and until())
                or (end is not None and time.monotonic() >= end)):
            done.set_result(True)

    timer = node.create_timer(poll_s, check, clock=Clock(clock_type=ClockType.STEADY_TIME))
    try:
        check()
        while not done.done() and rclpy.ok(context=node.context):
            # a finite round: the events executor never serves its timers without one
            executor.spin_until_future_complete(done, timeout_sec=SPIN_ROUND_S)
            check()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        with contextlib.suppress(Exception):  # the node may be gone with the context
            node.destroy_timer(timer)
        with contextlib.suppress(Exception):  # the executor may be gone with the context
            executor.remove_node(node)
        if own and hasattr(executor, 'shutdown'):
            with contextlib.suppress(Exception):
                executor.shutdown(timeout_sec=0.5)


def run_node(factory: Callable, args=None) -> int:
    """Entry point body of a node console script.

    Initialises rclpy (without its signal handlers), builds the node with ``factory()``,
    spins it with the fast executor until SIGINT or SIGTERM, then calls ``node.on_shutdown()``
    if it exists (e.g. to save state), destroys the node and shuts rclpy down: exit 0 and no
    traceback on Ctrl-C or SIGTERM, since no callback runs on a context being shut down. A
    second signal (e.g. launch's SIGTERM after SIGINT) exits at once with code 0.

    Returns:
        The process exit code: 0 after a signal, 2 when the node refuses to start (one line on
        stderr: which parameter and why, or a ``--config-file`` that is missing or
        unreadable), 1 on any other failure.
    """
    from legid_ros.core.errors import LegidError

    args = sys.argv if args is None else args
    exe = os.path.basename(str(args[0])) if args else 'legid node'
    problems = config_file_problems(args)
    if problems:  # launch's config:= missing: refuse rather than run on the code defaults
        print(f'{exe}: cannot start: {problems[0]}', file=sys.stderr, flush=True)
        return 2
    stop = orderly(exe)
    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    except Exception as exc:  # noqa: BLE001  (malformed --ros-args: one line, no traceback)
        print(f'cannot start: {" ".join(str(exc).split())}', file=sys.stderr, flush=True)
        stop.restore()
        return 2
    from legid_ros.core.identification.threads import limit_blas_threads
    # one process per node, small matrices: a multi-threaded BLAS on a busy computer spends
    # 10-200x the work synchronising (threads.py)
    limit_blas_threads(1)
    node = None
    code = 0
    try:
        node = factory()
        if not stop():
            spin(node, until=stop)
    except KeyboardInterrupt:
        pass
    except LegidError as exc:  # a start-up refusal: one line, no traceback
        text = ' '.join(str(exc).split())
        name = getattr(node, 'get_name', None)
        print(f'{name()}: {text}' if name else text, file=sys.stderr, flush=True)
        code = 2
    except Exception as exc:  # noqa: BLE001  (report, still shut down cleanly)
        print(f'{getattr(node, "get_name", lambda: "node")()}: fatal: {exc!r}', file=sys.stderr)
        code = 1
    finally:
        if node is not None:
            hook = getattr(node, 'on_shutdown', None)
            if hook is not None:
                try:
                    hook()
                except Exception as exc:  # noqa: BLE001
                    print(f'shutdown hook failed: {exc!r}', file=sys.stderr)
            with contextlib.suppress(Exception):
                node.destroy_node()
        with contextlib.suppress(Exception):
            if rclpy.ok():
                rclpy.shutdown()
        stop.restore()
    return code
