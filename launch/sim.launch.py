"""Launch the simulated biped and the whole pipeline: sim, buffer, estimator, controller, ik.

Arguments: those of legid.launch.py (robot, config, method, use_sim_time, rviz) plus
  engine            'synthetic' (exact rigid-body data) or 'mujoco' (physics) (default: synthetic)
  real_time_factor  playback speed of the simulated run (default: 1.0)
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    """The sim node plus legid.launch.py."""
    share = FindPackageShare('legid_ros')
    config = LaunchConfiguration('config')
    return LaunchDescription([
        DeclareLaunchArgument('robot', default_value='biped',
                              description='built-in robot name (the sim runs the biped)'),
        DeclareLaunchArgument('config',
                              default_value=PathJoinSubstitution([share, 'config', 'legid.yaml']),
                              description='parameter file (<node>: ros__parameters:)'),
        DeclareLaunchArgument('method', default_value='zmp_qp',
                              description='online identification method of the estimator'),
        DeclareLaunchArgument('use_sim_time', default_value='false',
                              description='use the /clock topic'),
        DeclareLaunchArgument('rviz', default_value='false',
                              description='start robot_state_publisher and rviz2'),
        DeclareLaunchArgument('engine', default_value='synthetic',
                              description="'synthetic' or 'mujoco'"),
        DeclareLaunchArgument('real_time_factor', default_value='1.0',
                              description='simulated seconds per wall second'),
        Node(package='legid_ros', executable='sim_node', name='sim', output='screen',
             parameters=[config, {
                 'robot': LaunchConfiguration('robot'),
                 'engine': LaunchConfiguration('engine'),
                 'real_time_factor': ParameterValue(LaunchConfiguration('real_time_factor'),
                                                    value_type=float),
                 'use_sim_time': LaunchConfiguration('use_sim_time')}]),
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(PathJoinSubstitution([share, 'launch',
                                                                'legid.launch.py'])),
            launch_arguments={'robot': LaunchConfiguration('robot'), 'config': config,
                              'method': LaunchConfiguration('method'),
                              'use_sim_time': LaunchConfiguration('use_sim_time'),
                              'rviz': LaunchConfiguration('rviz')}.items()),
    ])
