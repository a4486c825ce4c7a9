"""The contact rule, the measured CoP and the base state from stance contacts: one place.

- :mod:`.rule`: per-foot contact states from the normal forces (thresholds relative to the
  robot's weight, hysteresis), streaming or batch, and the samples near any transition;
- :mod:`.cop`: the measured ZMP/CoP from the feet in contact (wrench, point-foot and sole-sensor
  sensing);
- :mod:`.base_state`: the floating-base state from the stance contacts;
- :mod:`.choices`: what the contacts decide about a recording's preparation (the base state's
  source, the margin around contact changes), for ``prepare`` and the online folding alike.

Used by the buffer (:mod:`legid_ros.core.buffer.kinematics`), ``prepare``, the online folding
and estimator, and the floating-base feedforward.
"""

from legid_ros.core.contact.base_state import StanceBase, stance_base_state
from legid_ros.core.contact.cop import cop_frames, frame_placements, is_point_foot, measured_cop
from legid_ros.core.contact.rule import (ContactRule, ContactThresholds, contact_states,
                                         near_transitions, transition_times)

__all__ = ['ContactRule', 'ContactThresholds', 'StanceBase', 'contact_states', 'cop_frames',
           'frame_placements', 'is_point_foot', 'measured_cop', 'near_transitions',
           'stance_base_state', 'transition_times']
