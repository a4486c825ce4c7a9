"""ROS 2 adapters: message conversions and one module per node. Imports rclpy."""
