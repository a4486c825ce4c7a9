"""The controller node's floating-base path: parameters, contact state, parameter check.

A floating-base description with soled feet (:func:`has_feet`) gets the contact-consistent
whole-body feedforward (:class:`legid_ros.core.feedforward.FloatingFeedforward`). The node then
declares :func:`floating_parameters`, subscribes ``legid/window`` and hands each window to
:class:`ContactSource`, which keeps the contact state of the latest usable row and sets the
contacts of every cycle: the buffer's stance feet and IMU orientation (and, with
``use_measured_wrenches``, the measured foot wrenches) when the row is younger than
``contact_timeout_s``, else the contact QP over ``stance_feet``. A window without any usable
row (a gap in the sensor stream, e.g. between two laps of the simulator) is expected and
transient: it is counted (``windows_without_usable_row`` in ``/diagnostics``) and logged at INFO
at most once per :data:`GAP_LOG_PERIOD_S`, not reported as bad input. Parameters arriving for it
must be physically consistent (:func:`check_floating_parameters`).
"""

from __future__ import annotations

import time
from typing import Dict, List, Tuple

import numpy as np
from std_msgs.msg import Float64MultiArray

from legid_ros.core.buffer.window import unpack_window
from legid_ros.core.errors import InconsistentParametersError
from legid_ros.core.feedforward import FloatingFeedforward
from legid_ros.core.feedforward.contact_state import reading_from_window, sensor_offsets
from legid_ros.core.inertial import check_consistency
from legid_ros.core.robot import Robot, body_names
from legid_ros.ros.conversions import window_from_msg
from legid_ros.ros.parameters import Param

#: Counters the floating path adds to the node's diagnostics [-].
FLOATING_COUNTS = ('bad_windows', 'contact_failures', 'measured_contact_cycles',
                   'qp_contact_cycles', 'windows_without_usable_row')
#: Shortest time between two log lines about windows without a usable row [s].
GAP_LOG_PERIOD_S = 30.0


def has_feet(robot: Robot) -> bool:
    """Whether the node uses the floating-base path: a free flyer with soled feet."""
    return robot.floating and any(f.sole_size is not None for f in robot.feet.values())


def floating_parameters(robot: Robot) -> Tuple[Param, ...]:
    """Extra parameters of the floating-base path (only declared for it)."""
    feet = [f for f, ft in robot.feet.items() if ft.sole_size is not None]
    return (
        Param('stance_feet', feet, 'feet on the ground when no fresh buffer row says which '
              '(the contact QP distributes the load over them)', runtime=True),
        Param('contact_timeout_s', 0.5, 'use the buffer\'s contact state and wrenches only '
              'when its latest row is younger than this [s]', low=0.0, runtime=True),
        Param('use_measured_wrenches', False, 'use the measured foot wrenches of the buffer '
              'rows (else the contact QP over the rows\' stance feet); off by default: fed back '
              'with unit gain through J^T they made the MuJoCo biped fall', runtime=True),
    )


def check_floating_parameters(ff: FloatingFeedforward, values: np.ndarray,
                              names: List[str]) -> None:
    """Refuse link parameters that are not physically consistent.

    Args:
        ff: The node's floating-base feedforward.
        values: Received values (link parameters first, maybe rotor inertias after).
        names: Their names.

    Raises:
        InconsistentParametersError: The link parameters fail the consistency check.
    """
    n_pi = len(ff.parameter_names)
    if names[:n_pi] == ff.parameter_names:
        report = check_consistency(values[:n_pi], body_names(ff.model))
        if not report.ok:
            raise InconsistentParametersError(
                f'parameters not physically consistent: {report.failing}', report)


class ContactSource:
    """Contact state of each cycle from the buffer's windows (see the module docstring).

    Args:
        robot: The node's robot (with soled feet).
        ff: The feedforward whose contacts are set.
        params: The node's parameter view (``stance_feet``, ``contact_timeout_s``,
            ``use_measured_wrenches``, read at every cycle: settable at run time).
        counts: The node's counters; :data:`FLOATING_COUNTS` are added and incremented.
        logger: Where windows without a usable row are noted (INFO, rate-limited); None: not.
    """

    def __init__(self, robot: Robot, ff: FloatingFeedforward, params, counts: Dict[str, int],
                 logger=None):
        self.robot = robot
        self.logger = logger
        self._gap_logged_at = -np.inf  # [s, monotonic]
        self._gaps_since_log = 0
        self.ff = ff
        self.p = params
        self.counts = counts
        counts.update({k: 0 for k in FLOATING_COUNTS})
        self._offsets = sensor_offsets(robot)
        self.contact = None  # latest ContactReading of the buffer
        self.contact_time = -np.inf  # its arrival [s, monotonic]

    def on_window(self, msg: Float64MultiArray) -> None:
        """Keep the contact state of the window's latest usable row.

        Raises:
            LegidError, ValueError, IndexError, TypeError, KeyError: A bad window.
        """
        window, schema = window_from_msg(msg)
        data = unpack_window(window, schema)
        if not np.any(np.asarray(data.ok, bool)):
            self._no_usable_row()
            return
        self.contact = reading_from_window(data, self.robot, self._offsets)
        self.contact_time = time.monotonic()

    def _no_usable_row(self) -> None:
        """A window without a usable row: counted, noted at INFO at most once per
        :data:`GAP_LOG_PERIOD_S`; the last contact state ages out (``contact_timeout_s``)."""
        self.counts['windows_without_usable_row'] += 1
        self._gaps_since_log += 1
        now = time.monotonic()
        if self.logger is None or now - self._gap_logged_at < GAP_LOG_PERIOD_S:
            return
        self.logger.info(f'{self._gaps_since_log} buffer window(s) without a usable row (a gap '
                         'in the sensor stream): contacts from the QP over stance_feet until '
                         'fresh rows arrive (counted in /diagnostics as '
                         'windows_without_usable_row)')
        self._gap_logged_at = now
        self._gaps_since_log = 0

    def set_contacts(self) -> None:
        """This cycle's contacts: the buffer's latest row if fresh, else the QP over
        ``stance_feet``."""
        c = self.contact
        if c is not None and time.monotonic() - self.contact_time <= self.p.contact_timeout_s:
            wrenches = c.wrenches if self.p.use_measured_wrenches else None
            self.ff.set_contacts(c.stance, wrenches, c.frames, c.base_quat)
            self.counts['measured_contact_cycles' if wrenches is not None
                        else 'qp_contact_cycles'] += 1
        else:
            self.ff.set_contacts(list(self.p.stance_feet))
            self.counts['qp_contact_cycles'] += 1
