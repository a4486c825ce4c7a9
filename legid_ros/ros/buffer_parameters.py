"""Parameters and start-up rules of the buffer node (:mod:`legid_ros.ros.buffer_node`).

``PARAMETERS`` is the node's parameter table; :func:`expected_frames` gives the ``frame_id``
values each input accepts and refuses, at start-up, a description frame the model lacks.
"""

from __future__ import annotations

from legid_ros.ros.parameters import Param, ParameterRefusedError

PARAMETERS = (
    Param('robot', 'biped', 'built-in robot name or path of a description YAML'),
    Param('force_sensing', '', "'wrench' (6-axis per foot), 'fsr' (sole sensors) or '' (from "
          "the description's force_sensing)", choices=('', 'wrench', 'fsr')),
    Param('window_length', 200, 'rows per window [samples]', low=1),
    Param('window_hop', 100, 'rows between two windows [samples] (<= window_length)', low=1),
    Param('max_delay_s', 0.5, 'longest wait of a joint-state row for the other streams, in '
          'stamps and in wall time [s] (the other topics of the same instants can arrive '
          'hundreds of ms after the joint states on a loaded machine; a row waits only while '
          'a stream lags)', low=0.0),
    Param('reorder_s', 0.002, 'wait for late (out-of-order) joint states [s]', low=0.0),
    Param('stale_after_s', 0.05, 'a force/IMU sample older than this marks the row not ok [s]',
          low=0.0),
    Param('jump_back_s', 0.5, 'a stamp this far behind the newest is a clock jump (new '
          'segment) [s]', low=0.0),
    Param('gap_s', 0.1, 'joint states this far apart start a new segment (no window spans '
          'it) [s]', low=0.0),
    Param('velocity_cutoff_hz', 50.0, 'first-order lag cutoff on joint velocities [Hz] (0 = '
          'off)', low=0.0),
    Param('acceleration_cutoff_hz', 20.0, 'first-order lag cutoff on joint accelerations [Hz]',
          low=0.0),
    Param('zmp_cutoff_hz', 20.0, 'first-order lag cutoff on the measured ZMP [Hz] (0 = off)',
          low=0.0),
    Param('contact_on_fraction', 0.10, 'a foot touches down when its normal force exceeds this '
          "fraction of the robot's weight (the description's total mass) [-]", low=0.0,
          high=1.0, open_low=True),
    Param('contact_off_fraction', 0.07, 'a foot in contact lifts off when its normal force falls '
          "below this fraction of the robot's weight (<= contact_on_fraction) [-]", low=0.0,
          high=1.0, open_low=True),
    Param('contact_force_n', 0.0, 'if > 0, an absolute touch-down force replacing '
          'contact_on_fraction (lift-off at contact_off_fraction / contact_on_fraction of it; '
          "warned about above 30 % of a foot's share of the weight) [N]", low=0.0),
    Param('flush_every', 100, 'longest run of joint-state messages between two processing '
          'passes (and measured-ZMP messages); a pass also runs as soon as a window can be '
          'completed [messages]', low=1, runtime=True),
    Param('idle_flush_s', 0.2, 'process waiting rows after this long without joint states [s]',
          low=0.0, runtime=True),
    Param('use_ankle_ft', True, "carry each foot's raw ankle F/T reading (the description's "
          'ankle_ft_topic) in the windows, for weighing the swinging foot; an optional stream: '
          'never holds rows back before its first sample'),
    Param('raw_decoding', True, 'take serialized messages every 20 ms and decode them in '
          'batches (a fraction of the CPU of rclpy deserialisation and per-message callbacks)'),
    Param('queue_depth', 1000, 'subscription queue depth of every sensor topic [messages] '
          '(1000: 1 s of samples at 1 kHz, so a node starved of CPU for up to a second catches '
          'up without losing any; deeper queues grow the memory while they fill)', low=1),
    Param('diagnostics_period_s', 1.0, 'period of the /diagnostics status [s]', low=0.0,
          open_low=True, runtime=True),
    Param('world_frame', 'world', 'frame_id of the measured ZMP'),
    Param('check_frame_id', True, "refuse wrench and IMU messages whose frame_id is neither "
          "empty nor the description's (imu.frame_id, each foot's frame_id, sensor_frames; "
          'ankle F/T: ft_frame)'),
)


def expected_frames(robot, mode: str, ankle) -> dict:
    """Accepted ``frame_id`` values per input queue key ('' always: unspecified frame).

    Raises:
        ParameterRefusedError: A frame of the description is not a frame of the model.
    """
    def known(frame: str, what: str) -> str:
        if not robot.model.existFrame(frame):
            raise ParameterRefusedError('buffer', 'robot', f'{what} {frame!r} of the '
                                        f'description is not a frame of {robot.name}')
        return frame

    known(robot.imu_frame, 'imu_frame')
    frames = {'imu': {'', robot.imu.frame_id}}
    for name, foot in robot.feet.items():
        ft = known(foot.wrench_frame, f'{name} ft_frame')
        if mode == 'wrench':
            frames[name] = {'', foot.frame_id or ft}
        else:
            for k in range(len(foot.sensor_frames)):
                frames[(name, k)] = {'', foot.sensor_frames[k]}
        if name in ankle:
            frames[('ankle_ft', name)] = {'', ft}
    return frames
