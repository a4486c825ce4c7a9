"""Launch the legid pipeline on a robot: buffer, estimator, controller and ik nodes.

Arguments:
  robot         built-in robot name or description YAML (default: biped)
  config        node parameter file (default: <share>/config/legid.yaml)
  method        identification method of the estimator (default: zmp_qp)
  use_sim_time  use /clock (bag replay with --clock, simulators) (default: false)
  rviz          also start robot_state_publisher and rviz2 with config/legid.rviz
                (default: false)
Every topic is relative, so ``PushRosNamespace`` or remappings apply to all of them.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import Command, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    """Buffer, estimator, controller, ik (+ rviz)."""
    share = FindPackageShare('legid_ros')
    robot = LaunchConfiguration('robot')
    config = LaunchConfiguration('config')
    method = LaunchConfiguration('method')
    use_sim_time = LaunchConfiguration('use_sim_time')
    rviz = LaunchConfiguration('rviz')
    common = {'robot': robot, 'use_sim_time': use_sim_time}
    urdf = PathJoinSubstitution([share, 'urdf', 'biped.urdf'])
    return LaunchDescription([
        DeclareLaunchArgument('robot', default_value='biped',
                              description='built-in robot name or description YAML path'),
        DeclareLaunchArgument('config',
                              default_value=PathJoinSubstitution([share, 'config', 'legid.yaml']),
                              description='parameter file (<node>: ros__parameters:)'),
        DeclareLaunchArgument('method', default_value='zmp_qp',
                              description='online identification method of the estimator'),
        DeclareLaunchArgument('use_sim_time', default_value='false',
                              description='use the /clock topic (bag replay, simulators)'),
        DeclareLaunchArgument('rviz', default_value='false',
                              description='start robot_state_publisher and rviz2'),
        Node(package='legid_ros', executable='buffer_node', name='buffer', output='screen',
             parameters=[config, common]),
        Node(package='legid_ros', executable='estimator_node', name='estimator',
             output='screen', parameters=[config, common, {'method': method}]),
        Node(package='legid_ros', executable='controller_node', name='controller',
             output='screen', parameters=[config, common]),
        Node(package='legid_ros', executable='ik_node', name='ik', output='screen',
             parameters=[config, {'use_sim_time': use_sim_time}]),
        Node(package='robot_state_publisher', executable='robot_state_publisher',
             name='robot_state_publisher', condition=IfCondition(rviz),
             parameters=[{'robot_description': ParameterValue(Command(['cat ', urdf]),
                                                              value_type=str),
                          'use_sim_time': use_sim_time}]),
        Node(package='rviz2', executable='rviz2', name='rviz2', condition=IfCondition(rviz),
             arguments=['-d', PathJoinSubstitution([share, 'config', 'legid.rviz'])],
             parameters=[{'use_sim_time': use_sim_time}]),
    ])
