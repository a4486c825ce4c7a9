"""Small helpers shared by the legid nodes: parameters with descriptions, QoS profiles."""

from __future__ import annotations

from typing import Dict, Tuple

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy


def declare(node, spec: Dict[str, Tuple[object, str]]) -> Dict[str, object]:
    """Declare every ``name: (default, description)`` and return the current values.

    Descriptions carry the unit, e.g. ``'window length [samples]'``.
    """
    out = {}
    for name, (default, description) in spec.items():
        node.declare_parameter(name, default, ParameterDescriptor(description=description))
        out[name] = node.get_parameter(name).value
    return out


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
