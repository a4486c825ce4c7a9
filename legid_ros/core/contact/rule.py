"""The contact rule: which feet are on the ground, from their normal forces.

One rule for the buffer (streaming, chunk by chunk), ``prepare`` (batch) and the online
folding. Per foot, a two-threshold state machine on the normal force relative to the robot's
weight ``m g`` (total mass from the robot model):

- a foot off the ground touches down when its normal force rises above ``on_fraction m g``;
- a foot on the ground lifts off when it falls below ``off_fraction m g`` (``off < on``);
- in between, and where the force is unknown (NaN), the foot keeps its state; before any
  evidence a foot is off the ground.

The hysteresis keeps a force chattering around one threshold from toggling the state. The
thresholds are fractions of the whole weight: a lifting foot whose sensor keeps 1-2 N (issue 24:
1.5 N, 6.1 % of Solo12's 24.5 N) must leave the measured centre of pressure, which with its
contact point moving away otherwise gets ~17 mm spikes at every lift-off; and a quadruped's
stance foot may carry little for long (Solo12 in MuJoCo, ``legid_ros.core.sim.described``: 5 %
of a stance foot's samples under 8-16 % of the weight, the least loaded one down to 3 %), so
the touch-down threshold must stay low. Defaults: on 10 %, off 7 % (Solo12: touch-down above
2.45 N, lift-off below 1.72 N; Talos, 90 kg: 89 N and 62 N). On a 45 s Solo12 run with a sensor
that keeps 1.5 N in the air, the CoP's mean deviation from MuJoCo's contact-force CoP away from
the flagged transitions (0.5 s) is 0.40 mm (0.28 mm without the artefact), against 4.7 mm with
a single 5 % threshold and 1.8 mm with on 15 % / off 8 % (stance feet under 15 % left out);
Talos's is 0.33 mm with all three. The states are computed with numpy (a step per sample only
inside ``np.maximum.accumulate``), so the 1 kHz buffer pays nothing per sample in Python.

Samples near a change of any foot's state (impacts, load transfer, the loads the thresholds cut
off) are flagged by :func:`near_transitions` for the identification to leave out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from legid_ros.core.errors import BadInputError

GRAVITY = 9.81  # [m/s^2]
ON_FRACTION = 0.10  # touch-down above this fraction of the robot's weight [-]
OFF_FRACTION = 0.07  # lift-off below this fraction of the robot's weight [-]


@dataclass
class ContactThresholds:
    """Touch-down and lift-off thresholds of the rule.

    Attributes:
        weight_n: The robot's weight ``m g`` [N] (> 0).
        on_fraction: Touch-down above this fraction of the weight [-] (0 < off <= on).
        off_fraction: Lift-off below this fraction of the weight [-].
    """

    weight_n: float
    on_fraction: float = ON_FRACTION
    off_fraction: float = OFF_FRACTION

    def __post_init__(self):
        if not (np.isfinite(self.weight_n) and self.weight_n > 0):
            raise BadInputError(f'the robot weight must be > 0 N, got {self.weight_n}')
        if not 0.0 < self.off_fraction <= self.on_fraction < 1.0:
            raise BadInputError('contact fractions need 0 < off <= on < 1, got off '
                                f'{self.off_fraction}, on {self.on_fraction}')

    @classmethod
    def for_robot(cls, robot, on_fraction: float = ON_FRACTION,
                  off_fraction: float = OFF_FRACTION) -> 'ContactThresholds':
        """Thresholds relative to the weight of ``robot`` (its model's total mass)."""
        return cls(float(robot.total_mass) * GRAVITY, on_fraction, off_fraction)

    @classmethod
    def from_force(cls, weight_n: float, on_n: float, off_n: Optional[float] = None
                   ) -> 'ContactThresholds':
        """Thresholds given in newtons (``off_n`` default: ``on_n``, no hysteresis)."""
        off_n = on_n if off_n is None else off_n
        return cls(weight_n, on_n / weight_n, off_n / weight_n)

    @property
    def on_n(self) -> float:
        """Touch-down force [N]."""
        return self.on_fraction * self.weight_n

    @property
    def off_n(self) -> float:
        """Lift-off force [N]."""
        return self.off_fraction * self.weight_n


def contact_states(fz: np.ndarray, thresholds: ContactThresholds,
                   initial: Optional[np.ndarray] = None) -> np.ndarray:
    """Contact state of every foot at every sample (the rule of the module docstring).

    Args:
        fz: Normal (vertical) force of each foot [N] (n, n_feet); NaN where unknown.
        thresholds: The rule's thresholds.
        initial: State before the first sample (n_feet,) bool; default every foot off.

    Returns:
        (n, n_feet) bool.
    """
    fz = np.asarray(fz, float)
    if fz.ndim != 2:
        raise BadInputError(f'normal forces must be (samples, feet), got shape {fz.shape}')
    n, nf = fz.shape
    prev = np.zeros(nf, bool) if initial is None else np.asarray(initial, bool)
    if n == 0:
        return np.zeros((0, nf), bool)
    on = fz > thresholds.on_n
    off = fz < thresholds.off_n
    event = on | off  # NaN compares False: no event, the state holds
    last = np.where(event, np.arange(n)[:, None], -1)
    np.maximum.accumulate(last, axis=0, out=last)  # the last event at or before each sample
    cols = np.arange(nf)
    return np.where(last >= 0, on[np.maximum(last, 0), cols], prev[None, :])


class ContactRule:
    """The rule applied chunk by chunk, its state carried between chunks (the buffer's use).

    ``ContactRule(th).update(a); .update(b)`` equals ``contact_states(concat(a, b), th)``.

    Args:
        thresholds: The rule's thresholds.
        n_feet: Number of feet.
    """

    def __init__(self, thresholds: ContactThresholds, n_feet: int):
        self.thresholds = thresholds
        self.n_feet = int(n_feet)
        self.reset()

    def reset(self) -> None:
        """Every foot off the ground (a new segment)."""
        self.state = np.zeros(self.n_feet, bool)

    def update(self, fz: np.ndarray) -> np.ndarray:
        """States (n, n_feet) bool of the next ``fz`` [N] (n, n_feet) rows."""
        out = contact_states(fz, self.thresholds, self.state)
        if len(out):
            self.state = out[-1].copy()
        return out


def transition_times(t: np.ndarray, contact: np.ndarray) -> np.ndarray:
    """Times [s] of every change of any foot's contact state (midway between the two samples).

    Args:
        t: Sample times [s] (n,).
        contact: (n, n_feet) bool states.
    """
    contact = np.asarray(contact, bool)
    if len(t) < 2:
        return np.zeros(0)
    k = np.flatnonzero((contact[1:] != contact[:-1]).any(axis=1)) + 1
    return 0.5 * (t[k] + t[k - 1])


def near_transitions(t: np.ndarray, contact: np.ndarray, transition_s: float) -> np.ndarray:
    """Samples closer than ``transition_s`` [s] to a change of ANY foot's contact state (n,).

    One pass per transition (not per sample): two sorted searches give each one's span.
    """
    t = np.asarray(t, float)
    if transition_s <= 0 or t.size < 2:
        return np.zeros(t.size, bool)
    tc = transition_times(t, contact)
    lo = np.searchsorted(t, tc - transition_s, side='right')
    hi = np.searchsorted(t, tc + transition_s, side='left')
    # a difference array marks the union of the spans [lo, hi)
    mark = np.zeros(t.size + 1, int)
    np.add.at(mark, lo, 1)
    np.add.at(mark, hi, -1)
    return np.cumsum(mark[:-1]) > 0


#: An absolute touch-down force above this fraction of a foot's share of the weight is warned
#: about: a light robot's feet would rarely count as in contact [-]
SHARE_WARNING = 0.3


def node_thresholds(robot, on_fraction: float = ON_FRACTION, off_fraction: float = OFF_FRACTION,
                    contact_force_n: float = 0.0):
    """The buffer node's thresholds and the start-up warning they deserve (or None).

    Args:
        robot: The robot (its total mass and feet).
        on_fraction, off_fraction: Touch-down and lift-off fractions of the weight [-].
        contact_force_n: If > 0, an absolute touch-down force [N] replacing ``on_fraction``
            (lift-off at ``off_fraction / on_fraction`` of it).

    Returns:
        ``(ContactThresholds, warning message or None)``.
    """
    weight = float(robot.total_mass) * GRAVITY
    if contact_force_n > 0:
        th = ContactThresholds.from_force(weight, contact_force_n,
                                          contact_force_n * off_fraction / on_fraction)
    else:
        th = ContactThresholds(weight, on_fraction, off_fraction)
    share = weight / max(len(robot.feet), 1)
    warning = None
    if contact_force_n > SHARE_WARNING * share:
        warning = (f'contact_force_n {contact_force_n:g} N is {contact_force_n / share:.0%} of a '
                   f"foot's share of the weight ({share:.1f} N of {weight:.1f} N on "
                   f'{len(robot.feet)} feet): feet may rarely count as in contact; set it to 0 '
                   'to use contact_on_fraction of the weight')
    return th, warning
