"""Helpers of the pipeline node tests: a private rclpy context, spinning with a deadline.

Tests wait for an event (a message seen, a count reached) with a generous deadline,
:data:`EVENT_S`, never for a fixed time after which they count what got done: a busy machine
(two test sessions on two cores) does less in a given time, not something else.
"""

from __future__ import annotations

import contextlib
import time
from typing import Callable, List

import rclpy
from rclpy.parameter import Parameter

from legid_ros.ros.executor import make_executor

EVENT_S = 90.0  # [s] deadline of a wait for an event; reached only when something is broken


@contextlib.contextmanager
def ros_context():
    """A fresh rclpy context and an executor on it; everything is torn down on exit."""
    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    executor = make_executor(context=ctx)
    nodes: List = []
    try:
        yield ctx, executor, nodes
    finally:
        for node in nodes:
            with contextlib.suppress(Exception):
                executor.remove_node(node)
            with contextlib.suppress(Exception):
                node.destroy_node()
        with contextlib.suppress(Exception):
            executor.shutdown(timeout_sec=1.0)
        with contextlib.suppress(Exception):
            rclpy.shutdown(context=ctx)


def params(**kw) -> List[Parameter]:
    """Parameter overrides from keyword arguments."""
    return [Parameter(k, value=v) for k, v in kw.items()]


def spin_until(executor, cond: Callable[[], bool], timeout_s: float = EVENT_S) -> bool:
    """Spin until ``cond()`` or the deadline [s]; returns ``cond()``."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.01)
        if cond():
            return True
    return cond()


def spin_for(executor, seconds: float) -> None:
    """Spin for a fixed time [s]."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.01)


def set_remote(executor, client_node, target: str, **values) -> List:
    """Set parameters of node ``target`` (e.g. '/buffer') through its ``set_parameters``
    service, the way ``ros2 param set`` does; returns one SetParametersResult per value."""
    from rcl_interfaces.srv import SetParameters

    client = client_node.create_client(SetParameters, f'{target}/set_parameters')
    try:
        assert spin_until(executor, client.service_is_ready), target
        request = SetParameters.Request(parameters=[
            Parameter(k, value=v).to_parameter_msg() for k, v in values.items()])
        future = client.call_async(request)
        assert spin_until(executor, future.done), target
        return list(future.result().results)
    finally:
        client_node.destroy_client(client)
