"""Tests of legid_ros.ros_domain: exclusive ROS domain ids through lock files."""

import subprocess
import sys
import textwrap

import pytest

from legid_ros import ros_domain
from legid_ros.ros_domain import NoFreeDomainError, acquire_domain

HOLDER = textwrap.dedent('''
    import sys
    from pathlib import Path
    from legid_ros.ros_domain import acquire_domain
    lease = acquire_domain(candidates=[int(c) for c in sys.argv[2].split(',')],
                           lock_dir=Path(sys.argv[1]))
    print(lease.domain, flush=True)
    sys.stdin.readline()  # hold the lease until told to go
''')


def _holder(lock_dir, candidates):
    """A second process holding a lease; returns (process, its domain)."""
    proc = subprocess.Popen([sys.executable, '-c', HOLDER, str(lock_dir),
                             ','.join(map(str, candidates))], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line.strip():
        _release(proc)
        pytest.fail('the holder printed no domain')
    return proc, int(line)


def _release(proc):
    """Let the holder go and reap it (killed if it does not go)."""
    try:
        proc.stdin.write('\n')
        proc.stdin.close()
        proc.wait(timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait()
    proc.stdout.close()


def test_two_leases_in_one_process_differ(tmp_path):
    """Two leases taken by one process never share an id, even from the same start."""
    with acquire_domain(lock_dir=tmp_path, seed=3) as a, \
            acquire_domain(lock_dir=tmp_path, seed=3) as b:
        assert a.domain != b.domain
        assert a.domain in ros_domain.DEFAULT_DOMAINS and b.domain in ros_domain.DEFAULT_DOMAINS


def test_leases_of_two_processes_differ(tmp_path):
    """A domain held by another process is skipped, and taken again once that one lets go."""
    proc, theirs = _holder(tmp_path, [40, 41])
    try:
        with acquire_domain(candidates=[40, 41], lock_dir=tmp_path) as mine:
            assert mine.domain != theirs
            with pytest.raises(NoFreeDomainError) as info:
                acquire_domain(candidates=[40, 41], lock_dir=tmp_path)
            assert sorted(info.value.tried) == [40, 41]
    finally:
        _release(proc)
    with acquire_domain(candidates=[theirs], lock_dir=tmp_path) as again:
        assert again.domain == theirs


def test_release_frees_the_id(tmp_path):
    """A released lease lets the same id be taken again; release twice is harmless."""
    lease = acquire_domain(candidates=[7], lock_dir=tmp_path)
    with pytest.raises(NoFreeDomainError):
        acquire_domain(candidates=[7], lock_dir=tmp_path)
    lease.release()
    lease.release()
    assert not lease.held
    with acquire_domain(candidates=[7], lock_dir=tmp_path) as again:
        assert again.domain == 7 and again.held


def test_default_ids_are_valid_for_the_default_port_mapping():
    """The ids tried are 1-101 and 215-232: not 0 (everyone's default), none above 232."""
    ids = set(ros_domain.DEFAULT_DOMAINS)
    assert ids == set(range(1, 102)) | set(range(215, 233))


def test_process_domain_is_held_and_stable():
    """process_domain() gives the same id on every call and another lease cannot take it."""
    domain = ros_domain.process_domain()
    assert ros_domain.process_domain() == domain
    with pytest.raises(NoFreeDomainError):
        acquire_domain(candidates=[domain])


def test_session_domain_is_held_by_this_test_process():
    """The test session's ROS_DOMAIN_ID (conftest) is locked: a second taker is refused."""
    import os
    domain = int(os.environ['ROS_DOMAIN_ID'])
    assert domain in ros_domain.DEFAULT_DOMAINS
    with pytest.raises(NoFreeDomainError):
        acquire_domain(candidates=[domain])
