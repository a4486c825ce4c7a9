"""The controller's floating-base contact source: a buffer window without a usable row (the
simulator's lap gap) is an expected, transient condition, counted and noted at INFO at most once
per period, never an ERROR or rejected input."""

from types import SimpleNamespace

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.node import Node

from legid_ros.core.buffer.schema import BufferConfig, ChannelSchema
from legid_ros.core.feedforward import FloatingFeedforward
from legid_ros.core.robot import load_robot
from legid_ros.ros.controller_floating import ContactSource
from legid_ros.ros.controller_node import DIAG_NAME, ControllerNode
from legid_ros.ros.conversions import diagnostic_values, window_msg

from pipeline_helpers import params, ros_context, spin_until

pytestmark = pytest.mark.timeout(120)


class _Logger:
    """Records log calls per level."""

    def __init__(self):
        self.lines = {'debug': [], 'info': [], 'warning': [], 'error': []}

    def __getattr__(self, level):
        return self.lines[level].append


@pytest.fixture(scope='module')
def biped():
    """The floating-base biped."""
    return load_robot('biped', floating_base=True)


def _window(robot, ok: bool):
    """A 3-row buffer window whose rows are all usable or all not; right foot loaded."""
    schema = ChannelSchema.for_config(BufferConfig(joint_names=robot.actuated_joint_names,
                                                   feet=['left', 'right']))
    rows = np.zeros((3, len(schema)))
    rows[:, schema.index('ok')] = float(ok)
    rows[:, schema.index('contact.right')] = 1.0
    rows[:, schema.index('wrench.right.fz')] = 300.0
    rows[:, schema.index('imu.qw')] = 1.0
    return window_msg(rows, schema)


def test_window_without_usable_row_is_counted_and_noted_once(biped):
    """Gap windows are counted, noted once at INFO per period, and leave the contact state."""
    counts, logger = {}, _Logger()
    p = SimpleNamespace(stance_feet=['left', 'right'], contact_timeout_s=0.5,
                        use_measured_wrenches=False)
    source = ContactSource(biped, FloatingFeedforward(biped), p, counts, logger)
    for _ in range(3):
        source.on_window(_window(biped, ok=False))
    assert counts['windows_without_usable_row'] == 3 and source.contact is None
    assert len(logger.lines['info']) == 1
    assert logger.lines['warning'] == [] and logger.lines['error'] == []
    source.on_window(_window(biped, ok=True))
    assert source.contact is not None and tuple(source.contact.stance) == ('right',)


def test_controller_status_stays_below_error_at_a_stream_gap(biped):
    """The node's /diagnostics after gap windows: not ERROR, no bad window, the gap counted."""
    with ros_context() as (ctx, ex, nodes):
        ctl = ControllerNode(context=ctx, parameter_overrides=params(
            robot='biped', floating_base=True, diagnostics_period_s=60.0))
        probe = Node('probe', context=ctx)
        nodes += [ctl, probe]
        seen = []
        probe.create_subscription(DiagnosticArray, '/diagnostics', seen.append, 10)
        for n in nodes:
            ex.add_node(n)
        for _ in range(3):
            ctl._on_window(_window(biped, ok=False))
        ctl._publish_diagnostics()
        assert spin_until(ex, lambda: any(diagnostic_values(m, DIAG_NAME) for m in seen), 10.0)
    level, message, values = next(v for v in (diagnostic_values(m, DIAG_NAME) for m in seen)
                                  if v)
    assert level != int.from_bytes(DiagnosticStatus.ERROR, 'little'), message
    assert values['windows_without_usable_row'] == '3' and values['bad_windows'] == '0'
