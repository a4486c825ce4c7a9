"""``legid reset [--node /estimator] [--buffer [NODE]] [--timeout S] [--domain-id N]``.

Calls ``~/reset`` (std_srvs/Trigger) without the ``ros2`` command line: the estimator forgets
its statistics and solution (``--node /buffer`` resets the buffer alone). ``--buffer`` resets
the buffer node first, then the estimator: the final window the buffer sends at its reset (its
pending rows) is sent before its answer, so it normally reaches the estimator before the
estimator's reset and is forgotten with the rest. Exit codes: see
:mod:`legid_ros.commands.services` (0 reset, 1 refused, 2 bad arguments, 3 no such service);
a failure stops the sequence.
"""

from __future__ import annotations

from legid_ros.commands import services

#: Default node of ``--buffer`` [-].
BUFFER_NODE = '/buffer'


def add_arguments(parser) -> None:
    """Arguments of ``legid reset``."""
    services.add_arguments(parser)
    parser.add_argument('--buffer', nargs='?', const=BUFFER_NODE, default=None, metavar='NODE',
                        help=f'reset this buffer node first (default {BUFFER_NODE})')


def run(args) -> int:
    """Call ``<buffer>/reset`` (with ``--buffer``), then ``<node>/reset``; returns the exit
    code."""
    nodes = ([args.buffer] if args.buffer else []) + [args.node]
    return services.call('legid reset', nodes, 'reset', args)
