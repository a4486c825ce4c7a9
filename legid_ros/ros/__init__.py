"""ROS 2 adapters: message conversions and one module per node. Imports rclpy.

A node executable's first line imports this package: its SIGINT/SIGTERM handlers go in here,
before the node module's heavy imports (:func:`legid_ros.ros.stop_signals.install_early`;
nothing changes in any other process).
"""

from legid_ros.ros.stop_signals import install_early

install_early()
