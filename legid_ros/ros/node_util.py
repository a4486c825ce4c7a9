"""QoS profiles shared by the legid nodes, and the check of their parameter file
(parameters: :mod:`legid_ros.ros.parameters`).

``launch_ros`` only warns about a ``parameters=[path]`` file that does not exist and starts the
nodes on their code defaults. The launch files therefore check ``config:=`` themselves
(:func:`parameter_file_problem`) and also give each node ``--config-file <path>``
(:data:`CONFIG_OPTION`, before ``--ros-args``), which
:func:`legid_ros.ros.executor.run_node` checks before anything starts
(:func:`config_file_problems`): a missing or unreadable file is refused in one line, exit 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Sequence

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

#: Command-line option naming the node parameter file the node must find [-].
CONFIG_OPTION = '--config-file'


def sensor_qos(depth: int) -> QoSProfile:
    """Reliable, keep-last ``depth``: lossless at 1 kHz as long as the reader keeps up."""
    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=depth,
                      reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.VOLATILE)


def latched_qos(depth: int = 1) -> QoSProfile:
    """Transient-local: late subscribers get the last message (ground truth, parameters)."""
    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=depth,
                      reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL)


def parameter_file_problem(path) -> Optional[str]:
    """Why ``path`` cannot be a node parameter file (``<node>: ros__parameters:``), or None.

    Checks that it exists, is a readable file and holds a YAML mapping."""
    import yaml

    text = str(path).strip()
    if not text:
        return 'no parameter file given (empty path)'
    file = Path(text)
    if not file.exists():
        return f'parameter file {text} does not exist'
    if not file.is_file():
        return f'parameter file {text} is not a file'
    try:
        data = yaml.safe_load(file.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        return f'parameter file {text} cannot be read ({type(exc).__name__}: {exc})'
    except yaml.YAMLError as exc:
        return f'parameter file {text} is not valid YAML ({" ".join(str(exc).split())})'
    if not isinstance(data, dict):
        return f'parameter file {text} holds no "<node>: ros__parameters:" mapping'
    return None


def refuse_parameter_file(path) -> None:
    """Raise ``RuntimeError('config:=PATH: why')`` when ``path`` cannot be a node parameter
    file (the launch files' check: launch_ros only warns and the nodes would run on their code
    defaults)."""
    problem = parameter_file_problem(path)
    if problem:
        raise RuntimeError(f'config:={path}: {problem}')


def config_file_problems(argv: Sequence[str]) -> List[str]:
    """The problems of each ``--config-file <path>`` among the arguments before ``--ros-args``.

    Args:
        argv: The command line (``sys.argv``).
    """
    args = list(argv[1:])
    if '--ros-args' in args:
        args = args[:args.index('--ros-args')]
    problems = []
    for i, arg in enumerate(args):
        if arg == CONFIG_OPTION:
            if i + 1 >= len(args):
                problems.append(f'{CONFIG_OPTION} needs a path')
                continue
            problem = parameter_file_problem(args[i + 1])
        elif arg.startswith(CONFIG_OPTION + '='):
            problem = parameter_file_problem(arg.split('=', 1)[1])
        else:
            continue
        if problem:
            problems.append(problem)
    return problems
