"""SIGINT and SIGTERM stop a node executable cleanly at any moment: during its imports (exit 0,
no traceback), and a second signal ends a slow shutdown (launch's SIGTERM after SIGINT)."""

import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from legid_ros.ros.stop_signals import NODE_EXECUTABLES, StopSignals, install_early

from node_processes import BIN, node_env

pytestmark = pytest.mark.timeout(600)
DEADLINE_S = 120.0  # generous: the machine is shared and slow


def _domain() -> int:
    return int(os.environ.get('ROS_DOMAIN_ID', '0'))


def _catches(pid: int, sig: int) -> bool:
    """Whether process ``pid`` has a handler for ``sig`` (/proc/<pid>/status SigCgt)."""
    try:
        text = Path(f'/proc/{pid}/status').read_text()
    except OSError:
        return False
    mask = next(int(ln.split()[1], 16) for ln in text.splitlines() if ln.startswith('SigCgt'))
    return bool(mask >> (sig - 1) & 1)


def _loaded(pid: int, library: str) -> bool:
    """Whether process ``pid`` has mapped a file whose path holds ``library``."""
    try:
        return library in Path(f'/proc/{pid}/maps').read_text()
    except OSError:
        return False


def _wait_line(proc: subprocess.Popen, text: str, timeout_s: float) -> bool:
    """Read ``proc``'s stdout until a line holds ``text`` (True) or the deadline passes."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        ready, _, _ = select.select([proc.stdout], [], [], 0.1)
        if ready:
            line = proc.stdout.readline()
            if not line:
                return False
            if text in line:
                return True
    return False


@pytest.mark.skipif(not Path('/proc/self/status').exists(), reason='needs /proc')
@pytest.mark.parametrize('sig', [signal.SIGINT, signal.SIGTERM], ids=['SIGINT', 'SIGTERM'])
@pytest.mark.parametrize('exe', sorted(NODE_EXECUTABLES))
def test_signal_during_imports_exits_0_without_traceback(exe, sig, tmp_path):
    """A node signalled as soon as its handlers exist, before rclpy is loaded, exits 0 cleanly."""
    err = tmp_path / 'err'
    with open(err, 'w') as stderr:
        proc = subprocess.Popen([str(BIN / exe)], stdout=subprocess.DEVNULL, stderr=stderr,
                                env=node_env(_domain()))
    try:
        end = time.monotonic() + DEADLINE_S
        while not _catches(proc.pid, signal.SIGTERM) and proc.poll() is None \
                and time.monotonic() < end:
            time.sleep(0.002)
        early = not _loaded(proc.pid, 'rclpy')
        proc.send_signal(sig)
        code = proc.wait(timeout=DEADLINE_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = err.read_text()
    assert early, 'the handlers came only after rclpy was loaded'
    assert code == 0 and 'Traceback' not in text, (code, text[-2000:])


SLOW_NODE = textwrap.dedent('''
    import sys
    import time

    from rclpy.node import Node

    from legid_ros.ros.executor import run_node


    class SlowToStop(Node):
        def __init__(self):
            super().__init__('slow_to_stop')
            self.create_timer(0.05, lambda: print('spinning', flush=True))

        def on_shutdown(self):
            print('saving', flush=True)
            while True:  # a state save that never ends
                time.sleep(0.05)


    sys.exit(run_node(SlowToStop, ['slow_to_stop']))
''')


def test_sigterm_after_sigint_ends_a_slow_shutdown_with_exit_0():
    """SIGINT starts the orderly stop; a SIGTERM during a stuck shutdown exits 0 at once."""
    proc = subprocess.Popen([sys.executable, '-c', SLOW_NODE], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=node_env(_domain()))
    try:
        assert _wait_line(proc, 'spinning', DEADLINE_S)
        proc.send_signal(signal.SIGINT)
        assert _wait_line(proc, 'saving', DEADLINE_S)
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=DEADLINE_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = proc.stderr.read()
    assert code == 0 and 'Traceback' not in err, (code, err)
    assert 'SIGTERM after SIGINT' in err


def test_early_handlers_only_in_node_executables():
    """Importing the package elsewhere (tests, the legid CLI) installs no handler."""
    before = signal.getsignal(signal.SIGTERM)
    assert install_early(['/usr/bin/legid', 'replay']) is None
    assert install_early(['pytest']) is None
    assert signal.getsignal(signal.SIGTERM) is before


def test_orderly_handlers_record_first_signal_and_restore():
    """In orderly mode the first signal is only recorded; restore puts the old handler back."""
    before = signal.getsignal(signal.SIGTERM)
    stop = StopSignals(orderly=True).install()
    try:
        assert not stop()
        os.kill(os.getpid(), signal.SIGTERM)
        end = time.monotonic() + DEADLINE_S
        while not stop() and time.monotonic() < end:
            time.sleep(0.01)
        assert stop.received == signal.SIGTERM and stop.count == 1
    finally:
        stop.restore()
    assert signal.getsignal(signal.SIGTERM) is before


def test_second_signal_exits_with_the_given_code():
    """A second signal exits at once with the handlers' ``code`` (130 for a CLI), not 0."""
    script = textwrap.dedent('''
        import os, signal, time
        from legid_ros.ros.stop_signals import StopSignals
        stop = StopSignals(orderly=True, name='a tool', code=130).install()
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(60)
    ''')
    res = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True,
                         timeout=DEADLINE_S, check=False)
    assert res.returncode == 130, res.stderr
    assert 'a tool: SIGINT after SIGINT: exiting now' in res.stderr


def test_a_stop_the_main_thread_never_sees_ends_after_the_grace():
    """A node process whose main thread stays blocked after SIGTERM (its handler recorded the
    stop, nothing polls it) exits with code 0 after the grace, with every thread's stack and a
    line saying so; a process that stops in time never hears of it."""
    script = textwrap.dedent('''
        import sys, time
        import legid_ros.ros.stop_signals as s
        s.STOP_GRACE_S = 1.0
        s.install_early(['ik_node'])
        s.orderly('hung node')
        print('ready', flush=True)
        time.sleep(float(sys.argv[1]))
    ''')
    for sleep_s, hung in ((60.0, True), (0.2, False)):
        proc = subprocess.Popen([sys.executable, '-c', script, str(sleep_s)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert _wait_line(proc, 'ready', DEADLINE_S)
            t0 = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=DEADLINE_S)
            took = time.monotonic() - t0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        err = proc.stderr.read()
        assert code == 0, err
        if hung:
            assert 1.0 <= took < 30.0, took
            assert 'hung node: still running 1 s after the stop signal' in err, err
            assert 'most recent call first' in err, err
        else:
            assert 'still running' not in err, err
