"""What the online pipeline's estimator publishes, without ROS: parameter sets and the scene
(support polygon, CoM, link COMs) it draws in rviz."""
