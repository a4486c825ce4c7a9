"""What the contacts of a recording decide about its preparation: the base state's source and
the margin left out around contact changes. One rule for ``prepare`` (``legid identify``) and
the online folding (the estimator node), so that both decide alike.

**Base state** (``base='auto'``): from every stance contact and the IMU's orientation and rates
(``'contacts'``, :func:`legid_ros.core.contact.base_state.stance_base_state`) when a foot is a
point or when several feet carry load in at least :data:`MULTI_CONTACT_MIN` of the loaded
samples; else from the most loaded sole, flat and still (``'support'``, Wu & Gao 2021). Two
stance soles over-determine the base, and taking the most loaded one alone as flat and still
misses how it rocks on its edges when the load moves to the other. Measured with ``legid
simulate`` (MuJoCo, out-of-model truth, 60 s, seed 0) then ``legid identify``, validation ZMP
deviation: Talos (two feet loaded in 57 % of the samples) 7.73 mm from the most loaded sole,
3.10 mm from the contacts (4.23 and 1.84 mm with the margin below); the built-in biped in
single support (0 %) and on its support-swap protocol (2 %): 0.33 and 0.31 mm from the sole,
0.45 and 0.46 mm from the contacts (the IMU's rates are noisier than a still sole's
kinematics).

**Margin around contact changes** (``transition_s=None``, asked for: ``legid identify
--transition-s auto``, the node's ``transition_s: -1``): touch-downs and lift-offs carry
impacts and load transfers the rigid model does not hold (18-32 mm of model ZMP error on Talos
in MuJoCo with the true parameters, 2-3 mm elsewhere), so samples closer than the margin to a
change of any foot's state are left out: the longest margin of :data:`MARGINS_S` (0.5 s down
to 0.03 s) that keeps at least :data:`KEEP_MIN` of the samples. Standing runs keep 0.5 s (86-92
% of their loaded samples); Talos stepping in place 0.2 s (59 %; 0.5 s would keep 24 %),
Solo12's trot 0.05 s (62 %; 0.5 s: 3 %), the margins ``legid bench excitation`` gives them by
hand (0.2 s, 0.03 s). With the margin,
``legid identify`` on Solo12's standing run: 0.34 mm instead of 1.11 mm; Talos, above. Not the
default: on the synthetic biped's support-swap run (exact data, ``legid demo``'s) it leaves out
the double-support transfers that separate the trunk's mass from the legs', and the group
masses move 0.33 -> 6.8 kg off (batch; the online demo 0.27 -> 3.1 kg).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

import numpy as np

from legid_ros.core.contact.cop import is_point_foot
from legid_ros.core.contact.rule import near_transitions
from legid_ros.core.errors import BadInputError
from legid_ros.core.robot import Robot

BASES = ('auto', 'support', 'contacts')
MULTI_CONTACT_MIN = 0.1  # [-] share of the loaded samples with several feet loaded
#: Margins around a contact change tried, longest first [s]
MARGINS_S = (0.5, 0.3, 0.2, 0.1, 0.05, 0.03)
KEEP_MIN = 0.5  # [-] share of the loaded samples a margin must keep


@dataclass
class PreparationChoice:
    """What the contacts decided, and from what.

    Attributes:
        base: 'support' or 'contacts'.
        transition_s: Margin left out around contact changes [s] (0: none).
        multi_contact_share: Share of the loaded samples with several feet loaded [-].
        kept_share: Share of the samples with a loaded foot the margin keeps [-].
        base_given: Whether the base was given (not 'auto').
        transition_given: Whether the margin was given (not None).
        point_feet: Whether a foot is a point (the base then comes from the contacts).
    """

    base: str
    transition_s: float
    multi_contact_share: float = 0.0
    kept_share: float = 1.0
    base_given: bool = False
    transition_given: bool = False
    point_feet: bool = False

    def text(self) -> str:
        """One readable line."""
        why = '' if self.base_given else ' (point feet)' if self.point_feet else (
            f' (several feet loaded in {100 * self.multi_contact_share:.0f} % of the samples)')
        src = ('every stance contact and the IMU' if self.base == 'contacts'
               else 'the most loaded sole, flat and still')
        return (f'base state from {src}{why}; {self.transition_s:g} s left out around contact '
                f'changes ({100 * self.kept_share:.0f} % of the samples kept)')

    def as_dict(self) -> dict:
        """Plain form (YAML)."""
        return {'base': self.base, 'transition_s': float(self.transition_s),
                'multi_contact_share': float(self.multi_contact_share),
                'kept_share': float(self.kept_share),
                'base_given': self.base_given, 'transition_given': self.transition_given,
                'point_feet': self.point_feet}


def base_source(robot: Robot, base: str, share: float, imu: bool = True) -> str:
    """'support' or 'contacts' for ``base`` (module docstring), ``share``: the share of the
    loaded samples with several feet loaded [-]; without the IMU (``imu`` False) flat feet
    keep 'support'.

    Raises:
        BadInputError: ``base`` not one of :data:`BASES`.
    """
    if base not in BASES:
        raise BadInputError(f'base must be one of {BASES}, not {base!r}')
    if base != 'auto':
        return base
    if any(is_point_foot(robot, f) for f in robot.feet) or (imu and share >= MULTI_CONTACT_MIN):
        return 'contacts'
    return 'support'


def check_margin(transition_s: Optional[float]) -> None:
    """Refuse a given margin that is negative or not finite (None: from the contacts).

    Raises:
        BadInputError: it is.
    """
    if transition_s is not None and not (np.isfinite(transition_s) and transition_s >= 0):
        raise BadInputError(f'transition_s must be >= 0 s (or None: from the contacts), got '
                            f'{transition_s}')


class ContactTally:
    """The counts both choices are made from, over the samples seen so far: samples with a
    loaded foot, those with several, and those near a contact change for each margin of
    :data:`MARGINS_S` (and a given one). Batch (``prepare``: one :meth:`add` of every sample)
    and streaming (the online folding: each row once, when every change within the longest
    margin around it is known) count alike, so both decide alike.

    Args:
        transition_s: A margin given by the user [s] (None: chosen, :meth:`choice`).
    """

    def __init__(self, transition_s: Optional[float] = None):
        check_margin(transition_s)
        self.transition_s = transition_s
        self.margins = MARGINS_S if transition_s is None else (float(transition_s),)
        self.loaded = 0
        self.multi = 0
        self.near = np.zeros(len(self.margins), int)

    @property
    def wait_s(self) -> float:
        """How much of the stream must lie after a row before it is counted [s]."""
        return float(max(self.margins))

    def add(self, t: np.ndarray, loaded: np.ndarray, rows=None) -> Optional[List[np.ndarray]]:
        """Count ``rows`` (default: all) of samples ``t`` [s] with per-foot states ``loaded``
        (n, n_feet); the states around them give their distance to a change.

        Returns:
            Per margin of ``margins``, the (n,) samples near a change (the caller leaves out
            the chosen margin's without computing it again); None without feet.
        """
        t = np.asarray(t, float)
        loaded = np.asarray(loaded, bool)
        if loaded.ndim != 2 or not loaded.shape[1]:
            return None
        rows = np.arange(t.size) if rows is None else np.asarray(rows)
        near = [near_transitions(t, loaded, margin) for margin in self.margins]
        if rows.size:
            on = loaded[rows].any(axis=1)
            self.loaded += int(on.sum())
            self.multi += int((loaded[rows].sum(axis=1) > 1)[on].sum())
            for k, mask in enumerate(near):
                self.near[k] += int((mask[rows] & on).sum())
        return near

    def kept(self, k: int) -> float:
        """Share of the loaded samples the ``k``-th margin keeps [-]."""
        return 1.0 - self.near[k] / self.loaded if self.loaded else 1.0

    def choice(self, robot: Robot, base: str = 'auto', imu: bool = True) -> PreparationChoice:
        """Both choices from the counts (module docstring); ``imu``: whether the IMU is used."""
        share = self.multi / self.loaded if self.loaded else 0.0
        point = any(is_point_foot(robot, f) for f in robot.feet)
        k = next((i for i in range(len(self.margins)) if self.kept(i) >= KEEP_MIN),
                 len(self.margins) - 1)
        return PreparationChoice(base_source(robot, base, share, imu), self.margins[k], share,
                                 self.kept(k), base != 'auto', self.transition_s is not None,
                                 point)


def choose(robot: Robot, t: np.ndarray, loaded: np.ndarray, base: str = 'auto',
           transition_s: Optional[float] = None, imu: bool = True) -> PreparationChoice:
    """Both choices for samples ``t`` [s] with per-foot states ``loaded`` (n, n_feet) (the
    longest margin of :data:`MARGINS_S` that keeps :data:`KEEP_MIN` of the loaded samples, or
    the shortest); ``imu``: whether the IMU is used (else flat feet keep the sole's base
    state)."""
    tally = ContactTally(transition_s)
    tally.add(t, loaded)
    return tally.choice(robot, base, imu)
