"""Method and parameter set that fit the robot, when the user names none.

One resolution for ``legid identify`` (``--method`` / ``--param-set`` omitted) and the
estimator node (``method`` / ``param_set`` left at ``''``). The kind of feet decides, with the
force sensing the description says is used (``force_sensing``, default ``'wrench'``):

========================================  ============  =============  =====================
feet                                      method        param_set      bench it comes from
========================================  ============  =============  =====================
point feet                                zmp_newton    grouped_sides  Solo12, bench/robots
flat feet with 6-axis F/T (``wrench``)    zmp_newton    grouped_sides  Talos, bench/robots
flat feet with sole sensors (``fsr``)     zmp_newton    reduced        biped, bench/accuracy
========================================  ============  =============  =====================

Where the choices come from (``bench/*.json``, ``legid bench ...``):

- ``zmp_newton`` for every kind: in ``bench/robots.json`` it is the best method on Talos (flat
  feet, F/T: validation ZMP deviation 1.03x the truth's) and Solo12 (point feet: 1.00x), where
  ``zmp_qp`` is not identifiable on Talos; in ``bench/conventions.json`` (Solo12 bags)
  ``floating_qp`` and ``sdp`` reach 18.5x the truth's deviation and ``zmp_newton`` 1.006x, so
  having 6-axis wrenches does not make ``floating_qp`` the default.
- ``grouped_sides`` on point feet and on flat feet with F/T: the set of ``bench/robots.json``
  on Solo12 and Talos (targets met); on Talos's standing data ``reduced`` and ``standard`` are
  not identifiable (``bench/autoset.json``: condition number 6e10).
- ``reduced`` on flat feet with sole sensors: Wu & Gao's set for their biped (the built-in
  ``biped``, sole force sensors), the set of ``bench/accuracy`` and ``bench/identify``. It is
  the only robot of that kind the benches hold.

The contact thresholds need no per-robot default: they are fractions of the robot's weight
(:mod:`legid_ros.core.contact.rule`), the same on Solo12 (2.5 kg) and Talos (90 kg).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

POINT = 'point feet'
FLAT_FT = 'flat feet with 6-axis F/T'
FLAT_SOLE = 'flat feet with sole sensors'
#: Foot kind -> (method, parameter set): see the module docstring for the benches.
KIND_DEFAULTS = {POINT: ('zmp_newton', 'grouped_sides'),
                 FLAT_FT: ('zmp_newton', 'grouped_sides'),
                 FLAT_SOLE: ('zmp_newton', 'reduced')}


@dataclass(frozen=True)
class Resolved:
    """A method and parameter set, and where they come from.

    Attributes:
        method: Identification method.
        param_set: Parameter set; None: the method's own (its solver's default).
        kind: The robot's foot kind (:func:`foot_kind`).
        method_given: Whether the user named the method.
        set_given: Whether the user named the parameter set.
    """

    method: str
    param_set: Optional[str]
    kind: str
    method_given: bool
    set_given: bool

    def line(self) -> str:
        """One log line, e.g. ``method zmp_newton, param_set grouped_sides (flat feet with
        6-axis F/T)``: what was chosen for the robot and why."""
        chosen = [] if self.method_given else ['method']
        chosen += [] if self.set_given or self.param_set is None else ['param_set']
        why = (f'{" and ".join(chosen)} from the robot: {self.kind}' if chosen
               else f'as given; the robot has {self.kind}')
        param_set = self.param_set or "the method's"
        return f'method {self.method}, param_set {param_set} ({why})'


def foot_kind(robot, sensing: Optional[str] = None) -> str:
    """The robot's foot kind: :data:`POINT` when any foot is a point foot, else flat feet with
    F/T or with sole sensors by ``sensing`` ('wrench' or 'fsr'; None or '': the description's
    ``force_sensing``, default 'wrench')."""
    if any(f.contact == 'point' for f in robot.feet.values()):
        return POINT
    sensing = sensing or str(robot.description.get('force_sensing') or 'wrench')
    return FLAT_SOLE if sensing == 'fsr' else FLAT_FT


def resolve(robot, method: Optional[str] = None, param_set: Optional[str] = None,
            sensing: Optional[str] = None) -> Resolved:
    """Method and parameter set for ``robot``: those given, else the defaults of its foot kind.

    Args:
        robot: The loaded robot (its feet and ``force_sensing``).
        method: The user's method; None or '': the robot's.
        param_set: The user's parameter set; None or '': the robot's when the method is the
            robot's method, else None (the method's own set).
        sensing: Force sensing used ('wrench', 'fsr'; None or '': the description's).
    """
    kind = foot_kind(robot, sensing)
    kind_method, kind_set = KIND_DEFAULTS[kind]
    chosen = method or kind_method
    if param_set:
        return Resolved(chosen, param_set, kind, bool(method), True)
    return Resolved(chosen, kind_set if chosen == kind_method else None, kind, bool(method),
                    False)
