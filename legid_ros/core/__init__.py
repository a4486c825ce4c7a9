"""The numerical core of legid_ros.

Plain Python (numpy, scipy, pinocchio, osqp, cvxpy, mujoco): this package never imports
rclpy or a message package. ROS nodes in :mod:`legid_ros.ros` are thin adapters around it.
"""

from legid_ros.core.errors import (  # noqa: F401
    BadInputError, InconsistentParametersError, InfeasibleProblemError, LegidError,
    NotIdentifiableError, RobotDescriptionError, SolverError, UnreachableTargetError)
