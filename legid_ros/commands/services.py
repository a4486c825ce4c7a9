"""What ``legid save`` and ``legid reset`` share: their arguments, and calling the nodes'
``std_srvs/Trigger`` services (:mod:`legid_ros.ros.trigger_client`) with their exit codes.

Exit codes: 0 every service answered ``success: true`` (its message on stdout); 1 one answered
``success: false`` (its message on stderr); 2 bad arguments; 3 a service did not appear, or did
not answer, within ``--timeout`` (one line: the service, what to check, the nearest visible
match); 130 interrupted by SIGINT (Ctrl-C; 143: SIGTERM) while waiting.
"""

from __future__ import annotations

import sys
from typing import Sequence

from legid_ros.core.errors import BadInputError
from legid_ros.ros_domain import VALID_DOMAINS

#: Exit codes [-].
OK, REFUSED, BAD_ARGUMENTS, NOT_FOUND, INTERRUPTED = 0, 1, 2, 3, 130
#: Default of ``--timeout`` [s].
DEFAULT_TIMEOUT_S = 10.0


def add_arguments(parser) -> None:
    """``--node``, ``--timeout`` and ``--domain-id``."""
    parser.add_argument('--node', default='/estimator',
                        help='fully qualified name of the node (default /estimator; '
                             'e.g. /robot1/estimator)')
    parser.add_argument('--timeout', type=float, default=DEFAULT_TIMEOUT_S,
                        help='wait this long for the service to appear, then as long for its '
                             f'answer [s] (default {DEFAULT_TIMEOUT_S:g})')
    parser.add_argument('--domain-id', type=int, default=None,
                        help='ROS_DOMAIN_ID of the node (default: $ROS_DOMAIN_ID, else 0)')


def check_arguments(args) -> None:
    """Refuse a timeout that is not positive and finite, or an unusable domain id.

    Raises:
        BadInputError: The argument at fault and why (``legid`` exits 2).
    """
    if not 0.0 < args.timeout < float('inf'):
        raise BadInputError(f'--timeout {args.timeout:g}: must be a positive number of seconds')
    if args.domain_id is not None and args.domain_id not in VALID_DOMAINS:
        raise BadInputError(f'--domain-id {args.domain_id}: must be 0-101 or 215-232 (the ids '
                            'valid with the default DDS port mapping)')


def call(prog: str, nodes: Sequence[str], leaf: str, args) -> int:
    """Call service ``leaf`` of each node in turn (stopping at the first failure).

    Args:
        prog: Name in the messages (``legid save``).
        nodes: Node names, called in this order.
        leaf: Service name under each node (``save``, ``reset``).
        args: The parsed arguments (``timeout``, ``domain_id``).

    Returns:
        The exit code (module docstring).
    """
    from legid_ros.ros.stop_signals import StopSignals
    from legid_ros.ros.trigger_client import (NoAnswerError, ServiceNotFoundError,
                                              TriggerClient, service_name)

    check_arguments(args)
    services = [service_name(node, leaf) for node in nodes]
    stop = StopSignals(orderly=True, name=prog, code=INTERRUPTED).install()
    try:
        with TriggerClient(domain_id=args.domain_id, stop=stop) as client:
            for service in services:
                answer = client.call(service, args.timeout, on_waiting=lambda s=service: print(
                    f'{prog}: waiting up to {args.timeout:g} s for {s} on ROS_DOMAIN_ID '
                    f'{client.domain_id} ...', file=sys.stderr, flush=True))
                if not answer.success:
                    print(f'{prog}: {service} refused: {answer.message}', file=sys.stderr)
                    return REFUSED
                print(f'{service}: {answer.message}', flush=True)
        return OK
    except (ServiceNotFoundError, NoAnswerError) as exc:
        print(f'{prog}: error: {exc}', file=sys.stderr)
        return NOT_FOUND
    except KeyboardInterrupt:
        print(f'{prog}: interrupted', file=sys.stderr)
        return 128 + (stop.received or INTERRUPTED - 128)
    finally:
        stop.restore()
