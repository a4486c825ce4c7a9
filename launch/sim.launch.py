"""Launch the simulated biped and the whole pipeline: sim, buffer, estimator, controller, ik.

Arguments: those of legid.launch.py (robot, config, method, force_sensing, use_sim_time, rviz)
plus
  engine            'synthetic' (exact rigid-body data) or 'mujoco' (physics) (default: synthetic)
  real_time_factor  playback speed of the simulated run (default: 1.0)
  protocol          'swap' (right, double-support transfer, left: both feet weighed), 'right'
                    (Wu & Gao 2021) or 'auto' (default: swap with the synthetic engine, right
                    with mujoco)
With ``use_sim_time:=true`` the sim node publishes ``/clock`` (the stamps of its samples) and
every node runs on it. ``force_sensing`` also chooses the sim's published force topics.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare


def _check_config(context, *args, **kwargs):
    """Stop the launch when ``config:=`` is missing or unreadable."""
    from legid_ros.ros.node_util import refuse_parameter_file

    refuse_parameter_file(LaunchConfiguration('config').perform(context))
    return []


def generate_launch_description():
    """The sim node plus legid.launch.py."""
    share = FindPackageShare('legid_ros')
    config = LaunchConfiguration('config')
    use_sim_time = LaunchConfiguration('use_sim_time')
    sensing = LaunchConfiguration('force_sensing')
    return LaunchDescription([
        DeclareLaunchArgument('robot', default_value='biped',
                              description='built-in robot name (the sim runs the biped)'),
        DeclareLaunchArgument('config',
                              default_value=PathJoinSubstitution([share, 'config', 'legid.yaml']),
                              description='parameter file (<node>: ros__parameters:)'),
        DeclareLaunchArgument('method', default_value='',
                              description="online identification method of the estimator ('': "
                                          "the robot's, logged at start-up)"),
        DeclareLaunchArgument('force_sensing', default_value='',
                              description="'wrench', 'fsr' or '' (the description's)"),
        DeclareLaunchArgument('use_sim_time', default_value='false',
                              description='the sim publishes /clock and every node uses it'),
        DeclareLaunchArgument('rviz', default_value='false',
                              description='start robot_state_publisher and rviz2'),
        DeclareLaunchArgument('engine', default_value='synthetic',
                              description="'synthetic' or 'mujoco'"),
        DeclareLaunchArgument('real_time_factor', default_value='1.0',
                              description='simulated seconds per wall second'),
        DeclareLaunchArgument('protocol', default_value='auto',
                              description="excitation: 'swap', 'right' or 'auto'"),
        OpaqueFunction(function=_check_config),
        Node(package='legid_ros', executable='sim_node', name='sim', output='screen',
             arguments=['--config-file', config], parameters=[config, {
                 'protocol': LaunchConfiguration('protocol'),
                 'robot': LaunchConfiguration('robot'),
                 'engine': LaunchConfiguration('engine'),
                 'real_time_factor': ParameterValue(LaunchConfiguration('real_time_factor'),
                                                    value_type=float),
                 'publish_forces': ParameterValue(sensing, value_type=str),
                 'publish_clock': ParameterValue(use_sim_time, value_type=bool),
                 'use_sim_time': use_sim_time}]),
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(PathJoinSubstitution([share, 'launch',
                                                                'legid.launch.py'])),
            launch_arguments={'robot': LaunchConfiguration('robot'), 'config': config,
                              'method': LaunchConfiguration('method'),
                              'force_sensing': sensing,
                              'use_sim_time': use_sim_time,
                              'rviz': LaunchConfiguration('rviz')}.items()),
    ])
