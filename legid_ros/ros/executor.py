"""Shared spin helper of the legid nodes: the EventsExecutor when available, clean shutdown.

At 1 kHz per topic, rclpy's default ``SingleThreadedExecutor`` costs about 200 us of CPU per
message on this machine and drops messages; ``rclpy.experimental.EventsExecutor`` (rclpy >=
Jazzy) about 40 us. Humble has no EventsExecutor: the fallback is the SingleThreadedExecutor.
"""

from __future__ import annotations

import os
import sys
from typing import Callable, Optional

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor


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
         timeout_s: Optional[float] = None) -> None:
    """Spin ``node`` until shutdown, ``until()`` is true, or ``timeout_s`` [s] passes."""
    import time

    own = executor is None
    executor = executor or make_executor(context=node.context)
    executor.add_node(node)
    end = None if timeout_s is None else time.monotonic() + timeout_s
    try:
        while rclpy.ok(context=node.context):
            executor.spin_once(timeout_sec=0.5)
            if until is not None and until():
                break
            if end is not None and time.monotonic() > end:
                break
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        executor.remove_node(node)
        if own and hasattr(executor, 'shutdown'):
            try:
                executor.shutdown(timeout_sec=0.5)
            except Exception:  # noqa: BLE001  (the executor may be gone with the context)
                pass


def run_node(factory: Callable, args=None) -> int:
    """Entry point body of a node console script.

    Initialises rclpy, builds the node with ``factory()``, spins it with the fast executor,
    calls ``node.on_shutdown()`` if it exists (e.g. to save state) on Ctrl-C or SIGTERM,
    and tears everything down. Returns the process exit code.
    """
    args = sys.argv if args is None else args
    rclpy.init(args=args)
    node = None
    code = 0
    try:
        node = factory()
        spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
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
            node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
    return code
