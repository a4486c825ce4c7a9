"""Private ROS 2 domain ids on this machine, one exclusive lock file per id.

Two test sessions, demos or benches running at the same time on one machine must not share a
ROS domain (their nodes would talk to each other). A process takes a domain by holding an
exclusive ``fcntl.flock`` on ``<lock_dir>/legid_ros_domain_<id>.lock`` for as long as it uses
the domain; the kernel drops the lock when the process ends, however it ends, so a crashed
run never leaves a domain taken. Child processes (the nodes) use their parent's domain and
need no lock of their own: the parent holds it for them.

The ids tried are those valid with the default DDS port mapping: 1-101 and 215-232 (0, the
default domain of every unconfigured ROS 2 process, is left out unless asked for). This module
imports no ROS package.
"""

from __future__ import annotations

import fcntl
import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Sequence

from legid_ros.core.errors import LegidError

LOCK_DIR = Path('/tmp')
LOCK_NAME = 'legid_ros_domain_{}.lock'
VALID_DOMAINS = tuple(range(0, 102)) + tuple(range(215, 233))
DEFAULT_DOMAINS = tuple(d for d in VALID_DOMAINS if d != 0)


class NoFreeDomainError(LegidError):
    """Every candidate ROS domain id is held by another process.

    Attributes:
        tried: The domain ids tried.
        lock_dir: Directory of the lock files.
    """

    def __init__(self, tried: Sequence[int], lock_dir: Path):
        super().__init__(f'no free ROS domain: all {len(tried)} ids are held by other '
                         f'processes (lock files {lock_dir}/{LOCK_NAME.format("<id>")})')
        self.tried = list(tried)
        self.lock_dir = Path(lock_dir)


@dataclass
class DomainLease:
    """A ROS domain id held by this process until :meth:`release` (or the process ends).

    Attributes:
        domain: The ROS_DOMAIN_ID.
        lock_path: The lock file held.
    """

    domain: int
    lock_path: Path
    _fd: Optional[int] = field(default=None, repr=False)

    @property
    def held(self) -> bool:
        """Whether the lock is still held."""
        return self._fd is not None

    def release(self) -> None:
        """Drop the lock (the file stays: removing it would race with another taker)."""
        if self._fd is not None:
            os.close(self._fd)  # closing the last descriptor releases the flock
            self._fd = None

    def __enter__(self) -> 'DomainLease':
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def _try_lock(path: Path) -> Optional[int]:
    """An open descriptor holding an exclusive lock on ``path``, or None if it is held."""
    try:
        # read-only is enough for flock and works on a file another user created
        fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o666)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def acquire_domain(candidates: Sequence[int] = DEFAULT_DOMAINS,
                   lock_dir: Optional[Path] = None, seed: Optional[int] = None) -> DomainLease:
    """Take a domain id no other process holds (nor this one, through another lease).

    The candidates are tried from a random starting point (so runs do not all crowd the low
    ids that other tools may use) and in order from there.

    Args:
        candidates: Domain ids to choose from.
        lock_dir: Directory of the lock files (default :data:`LOCK_DIR`).
        seed: Seed of the starting point (default: random).

    Returns:
        The lease; keep it referenced for as long as the domain is used.

    Raises:
        NoFreeDomainError: Every candidate is held.
    """
    ids = list(candidates)
    folder = Path(lock_dir) if lock_dir is not None else LOCK_DIR
    if not ids:
        raise NoFreeDomainError(ids, folder)
    start = random.Random(seed).randrange(len(ids)) if seed is not None else \
        random.SystemRandom().randrange(len(ids))
    for domain in ids[start:] + ids[:start]:
        path = folder / LOCK_NAME.format(domain)
        fd = _try_lock(path)
        if fd is not None:
            return DomainLease(domain, path, fd)
    raise NoFreeDomainError(ids, folder)


_HELD: List[DomainLease] = []  # leases kept for the whole life of the process
_OWN: List[DomainLease] = []  # the one of process_domain()


def hold_domain(**kwargs) -> int:
    """A new domain id (:func:`acquire_domain`) held until this process ends."""
    lease = acquire_domain(**kwargs)
    _HELD.append(lease)
    return lease.domain


def process_domain() -> int:
    """This process's own domain id: taken on the first call, the same one afterwards."""
    if not _OWN:
        _OWN.append(acquire_domain())
    return _OWN[0].domain
