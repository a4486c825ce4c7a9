"""``legid replay --bag B [--rate R] [--loop]``: publish a rosbag2 with its original timing.

For machines without ``ros2 bag play``: the bag's messages go out as stored, at their receive
times divided by ``--rate``. Sole-sensor topics ``/<foot>/fsr/<k>`` (not valid ROS 2 names)
are published as ``/<foot>/fsr/sensor_<k>``, which is what the buffer node subscribes to.
"""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser) -> None:
    """Arguments of ``legid replay``."""
    parser.add_argument('--bag', required=True, help='rosbag2 directory (mcap or sqlite3)')
    parser.add_argument('--rate', type=float, default=1.0,
                        help='playback speed, 1 = original timing, 0 = as fast as possible')
    parser.add_argument('--loop', action='store_true', help='restart at the end (Ctrl-C stops)')
    parser.add_argument('--clock', action='store_true',
                        help='publish /clock from the bag times (for use_sim_time)')
    parser.add_argument('--wait', type=float, default=3.0,
                        help='wait this long for a /joint_states subscriber before starting [s]')
    parser.add_argument('--max-loops', type=int, default=None,
                        help='stop after this many passes when looping')
    parser.add_argument('--ros-args', nargs=argparse.REMAINDER, default=[],
                        help='ROS arguments (remappings, node name) as added by launch_ros')


def summary(stats) -> str:
    """The closing line: messages, topics, real elapsed time, passes, lag, failed publishes."""
    total = sum(stats.published.values())
    failed = sum(stats.publish_failures.values())
    return (f'legid replay: {total} messages on {len(stats.published)} topics in '
            f'{stats.wall_s:.2f} s ({stats.loops} pass(es), largest lag '
            f'{stats.max_lag_s * 1000:.1f} ms'
            + (f', {failed} failed publish(es) dropped' if failed else '') + ')'
            + (f'; not acknowledged by every reader on {", ".join(stats.unacknowledged)}'
               if stats.unacknowledged else ''))


def run(args) -> int:
    """Replay the bag; prints what was published."""
    import rclpy

    from legid_ros.ros.replay import BagReplay

    rclpy.init(args=['legid_replay', '--ros-args', *args.ros_args] if args.ros_args
               else ['legid_replay'])
    node = rclpy.create_node('legid_replay')
    try:
        replay = BagReplay(node, args.bag, rate=args.rate, loop=args.loop, clock=args.clock)
        for topic, msgtype in replay.stats.skipped_types.items():
            print(f'legid replay: skipping {topic} ({msgtype} is not installed)', file=sys.stderr)
        if args.wait > 0 and not replay.wait_for_subscribers(timeout_s=args.wait):
            print('legid replay: no /joint_states subscriber yet, publishing anyway',
                  file=sys.stderr)
        print(f'legid replay: {args.bag}: {replay.stats.bag_span_s:.2f} s at {args.rate:g}x'
              + (' (looping)' if args.loop else ''))
        try:
            stats = replay.run(max_loops=args.max_loops)
            replay.wait_delivered()
        except KeyboardInterrupt:
            stats = replay.stats  # its wall time is set however the run ends
        print(summary(stats))
        return 0
    finally:
        node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
