"""rosbag2 recordings of a legged robot (mcap or sqlite3) through ``rosbags``, without rclpy.

:mod:`.recording_io` writes and reads a :class:`legid_ros.core.recording.Recording`
(``write_bag``, ``read_bag``, ``bag_info``); :mod:`.codec` is the fast CDR codec of the
fixed-layout messages, :mod:`.mcap_scan` the sequential MCAP scan and :mod:`.align` the
alignment of decoded topics on the ``/joint_states`` clock.
"""
