"""legid_ros: online inertial and friction identification for legged robots."""

__version__ = '0.1.0'
