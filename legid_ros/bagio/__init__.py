"""Internals of :mod:`legid_ros.bagfile`: fast CDR codec and time alignment (no rclpy)."""
