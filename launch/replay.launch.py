"""Replay a rosbag2 into the pipeline: ``legid replay`` plus legid.launch.py.

Arguments: those of legid.launch.py (robot, config, method, use_sim_time, rviz) plus
  bag    rosbag2 directory to replay (required)
  rate   playback speed (default: 1.0)
  loop   restart the bag at its end (default: false)
On a full ROS 2 install ``ros2 bag play <bag>`` with legid.launch.py does the same, except
that ``legid replay`` renames the sole-sensor topics ``/<foot>/fsr/<k>`` to valid ROS 2 names
``/<foot>/fsr/sensor_<k>``.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription
from launch.conditions import IfCondition, UnlessCondition
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    """legid replay + the pipeline."""
    share = FindPackageShare('legid_ros')
    bag = LaunchConfiguration('bag')
    rate = LaunchConfiguration('rate')
    loop = LaunchConfiguration('loop')
    return LaunchDescription([
        DeclareLaunchArgument('bag', description='rosbag2 directory to replay'),
        DeclareLaunchArgument('rate', default_value='1.0', description='playback speed'),
        DeclareLaunchArgument('loop', default_value='false', description='restart at the end'),
        DeclareLaunchArgument('robot', default_value='biped',
                              description='built-in robot name or description YAML path'),
        DeclareLaunchArgument('config',
                              default_value=PathJoinSubstitution([share, 'config', 'legid.yaml']),
                              description='parameter file (<node>: ros__parameters:)'),
        DeclareLaunchArgument('method', default_value='zmp_qp',
                              description='online identification method of the estimator'),
        DeclareLaunchArgument('use_sim_time', default_value='false',
                              description='use the /clock topic (then replay with --clock)'),
        DeclareLaunchArgument('rviz', default_value='false',
                              description='start robot_state_publisher and rviz2'),
        Node(package='legid_ros', executable='legid', name='legid_replay', output='screen',
             arguments=['replay', '--bag', bag, '--rate', rate, '--loop'],
             condition=IfCondition(loop)),
        Node(package='legid_ros', executable='legid', name='legid_replay', output='screen',
             arguments=['replay', '--bag', bag, '--rate', rate],
             condition=UnlessCondition(loop)),
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(PathJoinSubstitution([share, 'launch',
                                                                'legid.launch.py'])),
            launch_arguments={'robot': LaunchConfiguration('robot'),
                              'config': LaunchConfiguration('config'),
                              'method': LaunchConfiguration('method'),
                              'use_sim_time': LaunchConfiguration('use_sim_time'),
                              'rviz': LaunchConfiguration('rviz')}.items()),
    ])
