"""Node processes of the robustness benches (``legid bench fuzz``, ``legid bench soak``).

Each node runs as ``python -m legid_ros.ros.<node>`` on a private, localhost-only ROS domain,
its stderr in a log file; :class:`NodeProcess` starts, kills (any signal) and restarts it and
reads its resident memory and CPU time from /proc. Every stopped process is reaped.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional

MODULES = {'sim': 'legid_ros.ros.sim_node', 'buffer': 'legid_ros.ros.buffer_node',
           'estimator': 'legid_ros.ros.estimator_node',
           'controller': 'legid_ros.ros.controller_node', 'ik': 'legid_ros.ros.ik_node'}


def bench_env(domain: int) -> Dict[str, str]:
    """Environment of a private, localhost-only ROS domain (one BLAS thread per process)."""
    return dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
                ROS_LOCALHOST_ONLY='1', OPENBLAS_NUM_THREADS='1', PYTHONUNBUFFERED='1')


def free_domain(offset: int = 0) -> int:
    """A ROS domain id no other process on this machine holds, held until this process ends
    (:func:`legid_ros.ros_domain.hold_domain`); every call gives another one. ``offset`` is
    kept for the callers and unused (the ids used to be derived from the pid + offset)."""
    from legid_ros.ros_domain import hold_domain

    del offset
    return hold_domain()


class NodeProcess:
    """One node process.

    Args:
        name: Node name (key of :data:`MODULES`).
        params: ``-p name:=value`` overrides.
        env: Process environment (:func:`bench_env`).
        log_dir: Directory of ``<name>.log`` (stderr, appended over restarts).
        remap_name: Run the node under another name (``-r __node:=...``).
    """

    def __init__(self, name: str, params: Dict[str, object], env: Dict[str, str],
                 log_dir: Path, remap_name: Optional[str] = None, module: Optional[str] = None):
        self.name = remap_name or name
        self.module = module or MODULES[name]
        self.params = dict(params)
        self.env = env
        self.log = Path(log_dir) / f'{self.name}.log'
        self.remap_name = remap_name
        self.proc: Optional[subprocess.Popen] = None
        self.starts = 0

    def command(self):
        """The command line."""
        cmd = [sys.executable, '-m', self.module, '--ros-args']
        if self.remap_name:
            cmd += ['-r', f'__node:={self.remap_name}']
        for k, v in self.params.items():
            value = str(v).lower() if isinstance(v, bool) else (str(v) if v != '' else "''")
            cmd += ['-p', f'{k}:={value}']
        return cmd

    def start(self) -> 'NodeProcess':
        """Start (or restart: a running one is killed and reaped first) the process."""
        self.kill()
        with open(self.log, 'a') as log:
            self.proc = subprocess.Popen(self.command(), stdout=subprocess.DEVNULL, stderr=log,
                                         env=self.env)
        self.starts += 1
        return self

    def alive(self) -> bool:
        """Whether the process runs."""
        return self.proc is not None and self.proc.poll() is None

    def send(self, sig: int) -> None:
        """Send ``sig`` if running."""
        if self.alive():
            self.proc.send_signal(sig)

    def stop(self, sig: int = signal.SIGINT, timeout_s: float = 30.0) -> Optional[int]:
        """Send ``sig`` and wait ``timeout_s`` [s]; then SIGTERM (if ``sig`` was another
        signal) and wait as long again; then SIGKILL. Returns the exit code (reaped)."""
        if self.proc is None:
            return None
        for s in dict.fromkeys((sig, signal.SIGTERM)):
            self.send(s)
            try:
                return self.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                pass
        self.proc.kill()
        return self.proc.wait()

    def kill(self) -> None:
        """SIGKILL and reap."""
        if self.alive():
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait()

    def rss_mb(self) -> float:
        """Resident memory [MB] (0 if not running)."""
        try:
            for line in Path(f'/proc/{self.proc.pid}/status').read_text().splitlines():
                if line.startswith('VmRSS:'):
                    return int(line.split()[1]) / 1024.0
        except (OSError, AttributeError):
            pass
        return 0.0

    def cpu_s(self) -> float:
        """User + system CPU time [s] (0 if not running)."""
        try:
            fields = Path(f'/proc/{self.proc.pid}/stat').read_text().rsplit(')', 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')
        except (OSError, AttributeError, IndexError):
            return 0.0

    def log_text(self) -> str:
        """The log so far."""
        try:
            return self.log.read_text(errors='replace')
        except OSError:
            return ''
