"""MuJoCo physics backends of legid_ros (no ROS)."""
