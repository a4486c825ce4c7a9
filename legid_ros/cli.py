"""The ``legid`` command: one entry point, one module per subcommand.

Each subcommand lives in ``legid_ros/commands/<name>.py`` and defines
``add_arguments(parser)`` and ``run(args) -> int``. Each benchmark lives in
``legid_ros/bench/<name>.py`` with the same two functions (``run`` returns the results
dict, which ``legid bench`` prints, or dumps as JSON with ``--json``, and writes to a file).
Our own errors (:class:`legid_ros.core.errors.LegidError`) and bad files end as one clear
line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from pathlib import Path

COMMANDS = {
    'simulate': 'write a rosbag2 of a simulated robot (synthetic or MuJoCo)',
    'info': 'print topics, counts, rates and time span of a rosbag2',
    'identify': 'identify inertial parameters from a rosbag2',
    'replay': 'publish a rosbag2 into the ROS graph with its original timing',
    'demo': 'run the whole pipeline on the simulated robot and print a report',
    'describe': 'write a starting robot description YAML from a URDF or an MJCF',
    'check': 'check a robot description against a rosbag2 recording',
    'save': 'ask the running estimator to write its identified URDF, YAML and state',
    'reset': 'reset the running estimator (and with --buffer the buffer) to start afresh',
    'excite': 'design a whole-body excitation that identifies the legs of a described robot',
}
BENCHES = {
    'identify': 'ZMP protocol (Wu & Gao 2021) on synthetic runs: accuracy of every method',
    'friction': 'friction models, two-step vs unified, robust LS, excitation',
    'feedforward': 'closed-loop tracking in MuJoCo with PD / CV / two-step feedforward',
    'ik': 'extended-Jacobian IK vs GPM vs pink: speed, drift, foot error',
    'accuracy': 'end-to-end accuracy on MuJoCo physics data',
    'pipeline': 'buffer throughput and latency, estimator update time vs history',
    'solvers': 'bound-constrained Newton vs an independent solver on random and biped problems',
    'fuzz': 'bad input, kills and damaged files thrown at the running nodes',
    'soak': 'the simulated pipeline at 1 kHz for --minutes: memory, CPU, crashes, drops',
    'online': 'replay -> buffer -> estimator against the batch result; yaw, payload, consistency',
    'peers': 'legid_ros against FIGAROH on the same MuJoCo recordings',
    'robots': 'robots we did not design (Talos, Solo12): describe, simulate, identify',
    'honesty': 'reported std against MuJoCo truths: z of what the data determine, coverage',
    'perf': 'timing figures in one run (<= ~3 min): online update, identify vs read, buffer CPU',
    'autoset': 'the parameter set chosen by the data on a humanoid with a shifted thigh COM',
    'conventions': 'bags of setups we did not write (Solo12, Talos; 12 of issue 24\'s '
                   'conventions): describe --bag, identify, check, online',
    'excitation': 'designed whole-body excitations executed in MuJoCo and identified',
}


class _CliError(Exception):
    pass


def _load(package: str, name: str):
    try:
        return importlib.import_module(f'legid_ros.{package}.{name}')
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith(f'legid_ros.{package}.{name}'):
            raise _CliError(f'"{name}" is not available in this build') from exc
        raise


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (subcommand modules are imported only when run)."""
    parser = argparse.ArgumentParser(prog='legid', description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest='command', metavar='COMMAND')
    for name, help_text in COMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    bench = sub.add_parser('bench', help='run a benchmark and write its results')
    bench.add_argument('name', choices=list(BENCHES) + ['all'], help='benchmark')
    return parser


def _run_bench(name: str, rest) -> int:
    names = list(BENCHES) if name == 'all' else [name]
    status = 0
    for bname in names:
        module = _load('bench', bname)
        parser = argparse.ArgumentParser(prog=f'legid bench {bname}', description=BENCHES[bname])
        parser.add_argument('--json', action='store_true', help='print the results as JSON')
        parser.add_argument('--out', default='bench', help='directory for result files')
        module.add_arguments(parser)
        args = parser.parse_args(rest)
        results = module.run(args)
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / f'{bname}.json').write_text(json.dumps(results, indent=2, default=float))
        if args.json:
            print(json.dumps(results, indent=2, default=float))
        if results.get('passed') is False:
            status = 1
    return status


def main(argv=None) -> int:
    """Entry point of the ``legid`` console script."""
    from legid_ros.core.errors import LegidError

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if not argv or argv[0] in ('-h', '--help'):
        parser.print_help()
        return 0 if argv else 2
    try:
        if argv[0] == 'bench':
            if len(argv) < 2 or argv[1] not in list(BENCHES) + ['all']:
                parser.parse_args(argv)  # prints usage and exits 2
            return _run_bench(argv[1], argv[2:])
        if argv[0] not in COMMANDS:
            parser.parse_args(argv)
        module = _load('commands', argv[0])
        sub = argparse.ArgumentParser(prog=f'legid {argv[0]}', description=COMMANDS[argv[0]])
        module.add_arguments(sub)
        return int(module.run(sub.parse_args(argv[1:])) or 0)
    except (LegidError, _CliError, FileNotFoundError, IsADirectoryError,
            PermissionError) as exc:
        print(f'legid: error: {exc}', file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print('legid: interrupted', file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Output piped into a reader that closed early (e.g. `| head`): not an error.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == '__main__':
    sys.exit(main())
