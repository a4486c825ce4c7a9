"""``legid save [--node /estimator] [--timeout S] [--domain-id N]``: ask the estimator to save.

Calls the estimator's ``~/save`` (std_srvs/Trigger) without the ``ros2`` command line: the node
writes its state and, once it has identified a parameter set, ``<robot>_identified.urdf`` and
``.yaml`` into its ``output_dir``; the answer, naming the files, is printed. Exit codes: see
:mod:`legid_ros.commands.services` (0 saved, 1 refused, 2 bad arguments, 3 no such service).
"""

from __future__ import annotations

from legid_ros.commands import services


def add_arguments(parser) -> None:
    """Arguments of ``legid save``."""
    services.add_arguments(parser)


def run(args) -> int:
    """Call ``<node>/save``; returns the exit code."""
    return services.call('legid save', [args.node], 'save', args)
