"""rosbag2 recordings of a legged robot (mcap or sqlite3) through ``rosbags``, without rclpy.

:mod:`.recording_io` writes and reads a :class:`legid_ros.core.recording.Recording`
(``write_bag``, ``read_bag``, ``bag_info``); :mod:`.codec` is the fast CDR codec of the
fixed-layout messages, :mod:`.mcap_scan` the sequential MCAP scan and :mod:`.align` the
alignment of decoded topics on the ``/joint_states`` clock. :mod:`.discover` resolves the path
a user gives (bag directory, storage file, bare ``.mcap``, ``run.mcap`` for ``run/``),
:mod:`.reader` opens it, :mod:`.repair` reads what a damaged MCAP still holds and
:mod:`.summary` gives the topic table of ``legid info``.
"""
