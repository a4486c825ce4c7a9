"""Replay a rosbag2 into the pipeline: ``legid replay`` plus legid.launch.py.

Arguments: those of legid.launch.py (robot, config, method, force_sensing, use_sim_time, rviz)
plus
  bag    rosbag2 directory to replay (required)
  rate   playback speed (default: 1.0)
  loop   restart the bag at its end (default: false)
  clock  publish /clock from the bag times (``legid replay --clock``) (default: use_sim_time,
         so ``use_sim_time:=true`` alone gives the nodes a clock)
On a full ROS 2 install ``ros2 bag play <bag>`` with legid.launch.py does the same, except
that ``legid replay`` renames the sole-sensor topics ``/<foot>/fsr/<k>`` to valid ROS 2 names
``/<foot>/fsr/sensor_<k>``.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def is_true(text: str) -> bool:
    """A launch argument's boolean value ('true', '1', 'yes', 'on')."""
    return str(text).strip().lower() in ('true', '1', 'yes', 'on')


def replay_arguments(bag: str, rate: str, loop: str, clock: str) -> list:
    """Command-line arguments of ``legid replay`` from the launch arguments' values."""
    args = ['replay', '--bag', bag, '--rate', rate]
    if is_true(loop):
        args.append('--loop')
    if is_true(clock):
        args.append('--clock')
    return args


def _check_config(context, *args, **kwargs):
    """Stop the launch when ``config:=`` is missing or unreadable."""
    from legid_ros.ros.node_util import refuse_parameter_file

    refuse_parameter_file(LaunchConfiguration('config').perform(context))
    return []


def _replay(context, *args, **kwargs):
    """The ``legid replay`` process with its options resolved."""
    value = {k: LaunchConfiguration(k).perform(context) for k in ('bag', 'rate', 'loop',
                                                                   'clock')}
    return [Node(package='legid_ros', executable='legid', name='legid_replay', output='screen',
                 arguments=replay_arguments(**value))]


def generate_launch_description():
    """legid replay + the pipeline."""
    share = FindPackageShare('legid_ros')
    use_sim_time = LaunchConfiguration('use_sim_time')
    return LaunchDescription([
        DeclareLaunchArgument('bag', description='rosbag2 directory to replay'),
        DeclareLaunchArgument('rate', default_value='1.0', description='playback speed'),
        DeclareLaunchArgument('loop', default_value='false', description='restart at the end'),
        DeclareLaunchArgument('robot', default_value='biped',
                              description='built-in robot name or description YAML path'),
        DeclareLaunchArgument('config',
                              default_value=PathJoinSubstitution([share, 'config', 'legid.yaml']),
                              description='parameter file (<node>: ros__parameters:)'),
        DeclareLaunchArgument('method', default_value='',
                              description="online identification method of the estimator ('': "
                                          "the robot's, logged at start-up)"),
        DeclareLaunchArgument('force_sensing', default_value='',
                              description="'wrench', 'fsr' or '' (the description's)"),
        DeclareLaunchArgument('use_sim_time', default_value='false',
                              description='use the /clock topic (published by the replay)'),
        DeclareLaunchArgument('clock', default_value=use_sim_time,
                              description='legid replay --clock (default: use_sim_time)'),
        DeclareLaunchArgument('rviz', default_value='false',
                              description='start robot_state_publisher and rviz2'),
        OpaqueFunction(function=_check_config),
        OpaqueFunction(function=_replay),
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(PathJoinSubstitution([share, 'launch',
                                                                'legid.launch.py'])),
            launch_arguments={'robot': LaunchConfiguration('robot'),
                              'config': LaunchConfiguration('config'),
                              'method': LaunchConfiguration('method'),
                              'force_sensing': LaunchConfiguration('force_sensing'),
                              'use_sim_time': use_sim_time,
                              'rviz': LaunchConfiguration('rviz')}.items()),
    ])
