"""One way to declare a node's parameters: a table of :class:`Param` specs.

Each spec gives the name, the default (whose type is the parameter's type), a description
with units, a range where numeric and whether the value may change at run time.
:func:`declare_parameters` declares every spec with a ``ParameterDescriptor``: ``read_only``
unless the parameter is run-time, a ``FloatingPointRange`` / ``IntegerRange`` for numbers and
the allowed choices in ``additional_constraints``. rclpy itself then refuses ``ros2 param set``
on a read-only parameter, of the wrong type or out of range, with a reason. Run-time parameters
pass one on-set callback that also checks choices and the node's own rule (``check``), then
stores the value and hands it to the node (``apply``); a timer made with
:meth:`ParameterValues.timer` follows its period parameter. At start-up a value that cannot
work is refused in one line (:class:`ParameterRefusedError`).

Every float parameter must be finite: an open bound is declared as the largest finite float (a
``math.inf`` bound lets rclpy accept ``inf``, which ``math.isclose`` finds at the edge), and
:meth:`Param.refusal` refuses NaN and infinities (also inside float arrays). A period whose
timer cannot be made (too long for the nanosecond clock) is refused as well, and a run-time
change keeps the old timer running until the new one exists.
"""

from __future__ import annotations

import array
import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, Optional, Sequence, Tuple

from rcl_interfaces.msg import (FloatingPointRange, IntegerRange, ParameterDescriptor,
                                SetParametersResult)
from rclpy.exceptions import (InvalidParameterTypeException, InvalidParameterValueException,
                              ParameterImmutableException)
from rclpy.parameter import Parameter

from legid_ros.core.errors import BadInputError

#: Largest upper bound of an integer range (int64) [-].
INT_MAX = 2 ** 63 - 1
#: Largest finite float: the open bound of a float range (never ``math.inf``) [-].
FLOAT_MAX = sys.float_info.max

#: ``check(changes) -> reason or None``: the node's rule on a run-time change.
Check = Callable[[Dict[str, Any]], Optional[str]]
#: ``apply(changes)``: the node uses the new values (already stored in the values).
Apply = Callable[[Dict[str, Any]], None]


class ParameterRefusedError(BadInputError):
    """A node refuses a parameter value at start-up.

    Attributes:
        node: Node name.
        name: Parameter name.
        reason: Why the value cannot work.
    """

    def __init__(self, node: str, name: str, reason: str):
        super().__init__(f'{node}: parameter {name} refused: {reason}')
        self.node = node
        self.name = name
        self.reason = reason


@dataclass(frozen=True)
class Param:
    """Specification of one node parameter.

    Attributes:
        name: Parameter name.
        default: Default value; its type (bool, int, float, str or a list of them) is the
            parameter's type.
        description: What it is, with its unit (``'[s]'``, ``'[N.m/rad]'``, ``'[-]'``).
        low: Smallest allowed value (numbers only); None: no lower bound.
        high: Largest allowed value (numbers only); None: no upper bound.
        open_low: ``low`` itself is refused (the value must be > low).
        choices: Allowed values of a string parameter (empty: any).
        runtime: May change while the node runs (``ros2 param set``); otherwise read only.
    """

    name: str
    default: Any
    description: str
    low: Optional[float] = None
    high: Optional[float] = None
    open_low: bool = False
    choices: Tuple[str, ...] = ()
    runtime: bool = False

    def descriptor(self) -> ParameterDescriptor:
        """The ROS descriptor: description, type, range, choices, read_only."""
        kind = Parameter.Type.from_parameter_value(self.default)
        d = ParameterDescriptor(name=self.name, description=self.description,
                                type=kind.value, read_only=not self.runtime)
        notes = []
        if self.low is not None or self.high is not None:
            if kind == Parameter.Type.INTEGER:
                d.integer_range = [IntegerRange(
                    from_value=int(self.low) if self.low is not None else -INT_MAX,
                    to_value=int(self.high) if self.high is not None else INT_MAX, step=0)]
            elif kind == Parameter.Type.DOUBLE:
                d.floating_point_range = [FloatingPointRange(
                    from_value=_finite_bound(self.low, -FLOAT_MAX),
                    to_value=_finite_bound(self.high, FLOAT_MAX),
                    step=0.0)]
        if self.open_low:
            notes.append(f'> {self.low}')
        if self.choices:
            notes.append('one of: ' + ', '.join(repr(c) for c in self.choices))
        notes.append('settable at run time' if self.runtime else 'read at start-up only')
        d.additional_constraints = '; '.join(notes)
        return d

    def refusal(self, value) -> Optional[str]:
        """Why ``value`` is refused beyond type and range (which rclpy checks), or None."""
        numbers = value if isinstance(value, (list, tuple)) else [value]
        if any(isinstance(v, float) and not math.isfinite(v) for v in numbers):
            return f'{self.name} must be finite, got {value!r}'
        if self.open_low and value <= self.low:
            return f'{self.name} must be > {self.low}, got {value!r}'
        if self.choices and value not in self.choices:
            return (f'{self.name} must be one of {", ".join(map(repr, self.choices))}, '
                    f'got {value!r}')
        return None


def _finite_bound(bound: Optional[float], open_bound: float) -> float:
    """A float range bound: ``bound`` clipped to the finite floats, ``open_bound`` if None."""
    if bound is None:
        return open_bound
    return min(max(float(bound), -FLOAT_MAX), FLOAT_MAX)


def _plain(value):
    """Parameter values as plain Python (double/integer arrays arrive as ``array.array``)."""
    return list(value) if isinstance(value, array.array) else value


class ParameterValues(Mapping):
    """Values in force of one node's declared parameters (``p['name']`` or ``p.name``)."""

    def __init__(self, node, specs: Sequence[Param]):
        self._node = node
        self._specs = {s.name: s for s in specs}
        self._values: Dict[str, Any] = {}
        self._timers: Dict[str, list] = {}

    def __getitem__(self, name: str):
        return self._values[name]

    def __getattr__(self, name: str):
        try:
            return self.__dict__['_values'][name]
        except KeyError:
            raise AttributeError(name) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    @property
    def specs(self) -> Dict[str, Param]:
        """The specs, by name."""
        return dict(self._specs)

    def timer(self, name: str, callback: Callable[[], None], clock=None):
        """A node timer whose period [s] is parameter ``name``; a run-time change of the
        parameter replaces the timer (the new period starts then). Returns the timer.

        Raises:
            ParameterRefusedError: The period cannot make a timer (e.g. too long).
        """
        try:
            timer = self._node.create_timer(self[name], callback, clock=clock)
        except (OverflowError, ValueError, TypeError, RuntimeError) as exc:
            raise ParameterRefusedError(self._node.get_name(), name,
                                        _timer_reason(name, self[name], exc)) from None
        self._timers[name] = [timer, callback, clock]
        return timer

    def timer_of(self, name: str):
        """The timer in force made by :meth:`timer` for parameter ``name`` (None if none)."""
        entry = self._timers.get(name)
        return entry[0] if entry else None

    def _new_timers(self, names) -> Dict[str, Any]:
        """New timers at the periods now in the values (the old ones keep running).

        Raises:
            ValueError: A period cannot make a timer (the timers made so far are destroyed).
        """
        made = {}
        for name in sorted(names & self._timers.keys()):
            _, callback, clock = self._timers[name]
            try:
                made[name] = self._node.create_timer(self[name], callback, clock=clock)
            except (OverflowError, ValueError, TypeError, RuntimeError) as exc:
                self._drop_timers(made.values())
                raise ValueError(_timer_reason(name, self[name], exc)) from None
        return made

    def _drop_timers(self, timers) -> None:
        for timer in timers:
            timer.cancel()
            self._node.destroy_timer(timer)

    def _on_set(self, check: Optional[Check], apply: Optional[Apply], params
                ) -> SetParametersResult:
        """On-set callback: rclpy has checked read_only, type and range; the rest is here.

        Never raises (an exception would leave the SetParameters reply without results):
        anything unexpected refuses the change with its reason, the previous values and
        timers stay in force."""
        try:
            return self._set(check, apply, params)
        except Exception as exc:  # noqa: BLE001  (a parameter request must never break)
            return SetParametersResult(successful=False,
                                       reason=f'{type(exc).__name__}: {exc}'[:500])

    def _set(self, check: Optional[Check], apply: Optional[Apply], params
             ) -> SetParametersResult:
        changes = {p.name: _plain(p.value) for p in params if p.name in self._specs}
        if not changes:
            return SetParametersResult(successful=True)
        for name, value in changes.items():
            spec = self._specs[name]
            reason = spec.refusal(value) if spec.runtime else f'{name} is read at start-up only'
            if reason:
                return SetParametersResult(successful=False, reason=reason)
        reason = check(changes) if check is not None else None
        if reason:
            return SetParametersResult(successful=False, reason=reason)
        before = {name: self._values[name] for name in changes}
        self._values.update(changes)
        made = {}
        try:
            made = self._new_timers(changes.keys())
            if apply is not None:
                apply(changes)
        except (BadInputError, ValueError) as exc:
            self._drop_timers(made.values())
            self._values.update(before)
            return SetParametersResult(successful=False, reason=str(exc))
        except BaseException:
            self._drop_timers(made.values())
            self._values.update(before)
            raise
        for name, timer in made.items():
            self._drop_timers([self._timers[name][0]])
            self._timers[name][0] = timer
        return SetParametersResult(successful=True)


def _timer_reason(name: str, period, exc: Exception) -> str:
    """Why period ``name`` [s] makes no timer."""
    return f'{name} = {period!r} s makes no timer ({type(exc).__name__}: {exc})'


def declare_parameters(node, specs: Sequence[Param], check: Optional[Check] = None,
                       apply: Optional[Apply] = None) -> ParameterValues:
    """Declare ``specs`` on ``node``; return their values (overrides applied).

    Args:
        node: The rclpy node.
        specs: The parameter table.
        check: Node rule on a run-time change (called after type, range and choices):
            returns the reason of a refusal, or None.
        apply: Uses accepted run-time changes (gains, estimator weights, ...; timers made with
            :meth:`ParameterValues.timer` follow by themselves); raising BadInputError or
            ValueError refuses the change and restores the previous values.

    Raises:
        ParameterRefusedError: An override of the wrong type, out of range or not among the
            choices.
    """
    values = ParameterValues(node, specs)
    name = node.get_name()
    for spec in specs:
        try:
            got = node.declare_parameter(spec.name, spec.default, spec.descriptor()).value
        except (InvalidParameterTypeException, InvalidParameterValueException,
                ParameterImmutableException) as exc:
            reason = str(exc).removesuffix(f': {spec.name}')  # rclpy appends the name
            raise ParameterRefusedError(name, spec.name, reason) from None
        got = _plain(got)
        reason = spec.refusal(got)
        if reason:
            raise ParameterRefusedError(name, spec.name, reason)
        values._values[spec.name] = got
    if any(s.runtime for s in specs):
        node.add_on_set_parameters_callback(lambda params: values._on_set(check, apply, params))
    return values
