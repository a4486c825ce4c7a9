"""Exception hierarchy of legid_ros. Every error carries the data that explains it."""

from __future__ import annotations

from typing import Optional, Sequence


class LegidError(Exception):
    """Base class of every error raised on purpose by legid_ros."""


class BadInputError(LegidError, ValueError):
    """Input data or arguments are malformed (wrong shape, NaN, unknown name, ...)."""


class RobotDescriptionError(LegidError):
    """A robot's URDF or description YAML is missing or inconsistent.

    Attributes:
        path: File at fault, if any.
    """

    def __init__(self, message: str, path: Optional[str] = None):
        super().__init__(message if path is None else f'{message} ({path})')
        self.path = path


class NotIdentifiableError(LegidError):
    """The data does not excite the parameters enough to identify them.

    Attributes:
        condition_number: Condition number of the (scaled) regressor.
        directions: Names or descriptions of the poorly excited parameter directions.
    """

    def __init__(self, message: str, condition_number: float = float('inf'),
                 directions: Sequence[str] = ()):
        dirs = ', '.join(directions)
        super().__init__(f'{message} (condition number {condition_number:.3g}'
                         + (f'; poorly excited: {dirs})' if dirs else ')'))
        self.condition_number = condition_number
        self.directions = list(directions)


class InfeasibleProblemError(LegidError):
    """Constraints (bounds, equalities) admit no solution.

    Attributes:
        details: What was found infeasible.
    """

    def __init__(self, message: str, details: str = ''):
        super().__init__(message + (f': {details}' if details else ''))
        self.details = details


class SolverError(LegidError):
    """A numerical solver failed or did not converge.

    Attributes:
        status: The solver's own status string.
        iterations: Iterations done.
        last_state: Last iterate, when available.
    """

    def __init__(self, message: str, status: str = '', iterations: int = 0, last_state=None):
        super().__init__(f'{message} (status {status!r}, {iterations} iterations)')
        self.status = status
        self.iterations = iterations
        self.last_state = last_state


class SolverNotConvergedError(SolverError):
    """A solver stopped short of its tolerance (iteration limit, inaccurate solution).

    The iterate it stopped at is in ``last_state``; it is not reported as a solution.
    """


class InconsistentParametersError(LegidError):
    """A parameter set is not physically consistent.

    Attributes:
        report: The :class:`legid_ros.core.inertial.ConsistencyReport` that failed.
    """

    def __init__(self, message: str, report=None):
        super().__init__(message)
        self.report = report


class UnreachableTargetError(LegidError):
    """An inverse-kinematics target lies outside the leg's workspace.

    Attributes:
        leg: Leg name.
        time: Time of the target [s] (or sample index if no time was given).
        distance: Distance from the target to the workspace [m].
    """

    def __init__(self, leg: str, time: float, distance: float, detail: str = ''):
        super().__init__(f'target of leg {leg!r} at t = {time:.4f} s is unreachable: '
                         f'{distance * 1000:.1f} mm outside the workspace'
                         + (f' ({detail})' if detail else ''))
        self.leg = leg
        self.time = time
        self.distance = distance
