"""SIGINT and SIGTERM of the node executables, handled from their first line (stdlib only).

A node's console script (``buffer_node``, ...) starts with ``from legid_ros.ros.<node> import
main``: the first module it runs is this package's ``__init__``, which calls
:func:`install_early` before the node module's heavy imports (numpy, pinocchio, rclpy: seconds
on a loaded machine). From then on:

- a signal before :func:`legid_ros.ros.executor.run_node` takes over (during the imports)
  exits at once with code 0 and no traceback: there is nothing to save or shut down yet;
- once ``run_node`` runs (:func:`orderly`), the first signal only records the request: the
  spin loop ends, the node saves its state and shuts down in order, exit 0;
- any further signal (``launch`` sends SIGTERM after SIGINT when a node is slow to stop, a
  supervisor may repeat one) exits at once with code 0, without the rest of the shutdown;
- a node whose orderly stop does not end within :data:`STOP_GRACE_S` exits then with code 0
  and a line saying so (:meth:`StopSignals.watchdog`: a main thread blocked in a call that does
  not return never runs the handlers);
- SIGUSR1 writes every thread's Python stack to stderr and changes nothing else (a node that
  does not stop: ``kill -USR1 <pid>`` says where it waits).

This module imports nothing but the standard library, so it costs nothing before the guard is
in place. The interpreter's own start-up (before the script's first line) is not covered.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import signal
import sys
import threading
import time
from typing import Dict, Optional, Sequence

#: Console scripts of the nodes (``setup.py`` entry points) [-].
NODE_EXECUTABLES = frozenset(
    {'buffer_node', 'estimator_node', 'controller_node', 'ik_node', 'sim_node'})
#: The signals that stop a node [-].
SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: Time an orderly stop has before the process exits anyway [s] (the estimator saves its state
#: in well under a second; launch escalates to SIGTERM after 5 s, systemd to SIGKILL after 90 s)
STOP_GRACE_S = 20.0

_early: Optional['StopSignals'] = None


def exit_now(code: int = 0, note: str = '') -> None:
    """Leave the process at once with ``code`` (stdio flushed, ``note`` on stderr if given)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a write interrupted by the signal: reentrant
            stream.flush()
    if note:
        with contextlib.suppress(OSError):
            os.write(2, (note.rstrip('\n') + '\n').encode())
    os._exit(code)


class StopSignals:
    """Handlers of :data:`SIGNALS` that record the stop request.

    Args:
        orderly: True: the first signal only records (the caller's loop polls ``self()``), a
            second one exits at once. False: every signal exits at once (code 0).
        name: Who stops, in the note of an escalated exit.
        code: Exit code of an immediate exit (0 for a node; a command line tool may want 130).
    """

    def __init__(self, orderly: bool = True, name: str = 'legid node', code: int = 0):
        self.orderly = orderly
        self.name = name
        self.code = code
        self.received: Optional[int] = None
        self.count = 0
        self._previous: Dict[int, object] = {}
        self._watching = False

    def install(self) -> 'StopSignals':
        """Put the handlers in place (main thread only; elsewhere nothing changes)."""
        for sig in SIGNALS:
            try:
                self._previous[sig] = signal.signal(sig, self._on_signal)
            except ValueError:  # not the main thread: keep the present handling
                pass
        return self

    def _on_signal(self, signum, frame) -> None:
        self.count += 1
        if self.received is None:
            self.received = signum
        if not self.orderly:
            exit_now(self.code)
        if self.count > 1:
            exit_now(self.code, f'{self.name}: {signal.Signals(signum).name} after '
                        f'{signal.Signals(self.received).name}: exiting now')

    def __call__(self) -> bool:
        """Whether a stop was requested."""
        return self.received is not None

    def watchdog(self, grace_s: Optional[float] = None) -> bool:
        """Exit ``grace_s`` [s] after the first stop signal if the process is still there.

        The handlers above run only when the main thread runs Python: one blocked in a call that
        does not return (a DDS teardown, an executor's wait) never sees the stop. The signal is
        also written by the interpreter's C handler to a pipe (``signal.set_wakeup_fd``) that a
        daemon thread reads: from then on the orderly stop has ``grace_s``, then the process
        exits with ``code``, every thread's stack and a line saying so (``grace_s`` None:
        :data:`STOP_GRACE_S`). Main thread only; returns whether it runs."""
        grace_s = STOP_GRACE_S if grace_s is None else float(grace_s)
        if self._watching or threading.current_thread() is not threading.main_thread():
            return False
        r, w = os.pipe()
        os.set_blocking(w, False)
        try:
            signal.set_wakeup_fd(w, warn_on_full_buffer=False)
        except (ValueError, OSError):
            os.close(r)
            os.close(w)
            return False
        wanted = {int(sig) for sig in SIGNALS}

        def watch() -> None:
            while not wanted & set(os.read(r, 64)):
                pass
            time.sleep(grace_s)
            with contextlib.suppress(Exception):
                faulthandler.dump_traceback(all_threads=True)
            exit_now(self.code, f'{self.name}: still running {grace_s:g} s after the stop '
                                'signal (a call that does not return): exiting now')
        threading.Thread(target=watch, name='legid-stop-watchdog', daemon=True).start()
        self._watching = True
        return True

    def restore(self) -> None:
        """Put the previous handlers back (the early ones stay until the process exits)."""
        if self is _early:
            return
        for sig, handler in self._previous.items():
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(sig, handler)
        self._previous.clear()


def install_early(argv: Optional[Sequence[str]] = None) -> Optional[StopSignals]:
    """Exit-at-once handlers when this process is a node executable (else None).

    Args:
        argv: The command line (default ``sys.argv``); its first word names the executable.
    """
    global _early
    argv = getattr(sys, 'argv', None) if argv is None else argv
    if not argv:
        return None
    name = os.path.basename(str(argv[0])).removesuffix('.exe')
    if name not in NODE_EXECUTABLES or threading.current_thread() is not threading.main_thread():
        return None
    if _early is None:
        _early = StopSignals(orderly=False, name=name).install()
        with contextlib.suppress(Exception):  # a hung node's stacks: kill -USR1 <pid>
            faulthandler.register(signal.SIGUSR1, all_threads=True)
    return _early


def orderly(name: str = 'legid node') -> StopSignals:
    """The handlers of a running node: the early ones switched to orderly, or new ones.

    The caller calls :meth:`StopSignals.restore` when done: a no-op for the early handlers,
    which stay (a signal while the process exits then changes nothing)."""
    if _early is not None and threading.current_thread() is threading.main_thread():
        _early.orderly = True
        _early.name = name
        _early.watchdog()  # a node process: a stop it cannot finish still ends it
        return _early
    return StopSignals(orderly=True, name=name).install()
