"""Launch the legid pipeline on a robot: buffer, estimator, controller and ik nodes.

Arguments:
  robot          built-in robot name or description YAML (default: biped)
  config         node parameter file (default: <share>/config/legid.yaml)
  method         identification method of the estimator (default: '', the robot's:
                 zmp_newton for every foot kind, logged at start-up)
  force_sensing  'wrench', 'fsr' or '' (the description's), for the buffer and the estimator
                 (floating_qp needs 'wrench') (default: '')
  use_sim_time   use /clock (bag replay with --clock, simulators) (default: false)
  rviz           also start robot_state_publisher and rviz2 with config/legid.rviz; when either
                 is not installed the pipeline starts without them and says so (default: false)
Every topic is relative, so ``PushRosNamespace`` or remappings apply to all of them.
A ``config`` file that does not exist or cannot be read stops the launch in one line (launch_ros
would only warn); each node also gets ``--config-file <config>`` and refuses to start without it.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, LogInfo, OpaqueFunction
from launch.substitutions import Command, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

VIEWER_PACKAGES = ('robot_state_publisher', 'rviz2')


def is_true(text: str) -> bool:
    """A launch argument's boolean value ('true', '1', 'yes', 'on')."""
    return str(text).strip().lower() in ('true', '1', 'yes', 'on')


def _installed(package: str) -> bool:
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix
    try:
        get_package_prefix(package)
        return True
    except PackageNotFoundError:
        return False


def _check_config(context, *args, **kwargs):
    """Stop the launch when ``config:=`` is missing or unreadable."""
    from legid_ros.ros.node_util import refuse_parameter_file

    refuse_parameter_file(LaunchConfiguration('config').perform(context))
    return []


def _viewers(context, *args, **kwargs):
    """robot_state_publisher + rviz2 when rviz:=true and both are installed (else a note)."""
    if not is_true(LaunchConfiguration('rviz').perform(context)):
        return []
    missing = [p for p in VIEWER_PACKAGES if not _installed(p)]
    if missing:
        return [LogInfo(msg=f'rviz:=true but {", ".join(missing)} not installed: the pipeline '
                            'runs without rviz')]
    share = FindPackageShare('legid_ros')
    use_sim_time = LaunchConfiguration('use_sim_time')
    urdf = PathJoinSubstitution([share, 'urdf', 'biped.urdf'])
    return [
        Node(package='robot_state_publisher', executable='robot_state_publisher',
             name='robot_state_publisher',
             parameters=[{'robot_description': ParameterValue(Command(['cat ', urdf]),
                                                              value_type=str),
                          'use_sim_time': use_sim_time}]),
        Node(package='rviz2', executable='rviz2', name='rviz2',
             arguments=['-d', PathJoinSubstitution([share, 'config', 'legid.rviz'])],
             parameters=[{'use_sim_time': use_sim_time}]),
    ]


def generate_launch_description():
    """Buffer, estimator, controller, ik (+ rviz)."""
    share = FindPackageShare('legid_ros')
    robot = LaunchConfiguration('robot')
    config = LaunchConfiguration('config')
    method = LaunchConfiguration('method')
    sensing = LaunchConfiguration('force_sensing')
    use_sim_time = LaunchConfiguration('use_sim_time')
    common = {'robot': robot, 'use_sim_time': use_sim_time}
    checked = ['--config-file', config]  # the node refuses to start without this file
    return LaunchDescription([
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
                              description='use the /clock topic (bag replay, simulators)'),
        DeclareLaunchArgument('rviz', default_value='false',
                              description='start robot_state_publisher and rviz2'),
        OpaqueFunction(function=_check_config),
        Node(package='legid_ros', executable='buffer_node', name='buffer', output='screen',
             arguments=checked, parameters=[config, common, {
                 'force_sensing': ParameterValue(sensing, value_type=str)}]),
        Node(package='legid_ros', executable='estimator_node', name='estimator',
             output='screen', arguments=checked, parameters=[config, common, {
                 'method': ParameterValue(method, value_type=str),
                 'force_sensing': ParameterValue(sensing, value_type=str)}]),
        Node(package='legid_ros', executable='controller_node', name='controller',
             output='screen', arguments=checked, parameters=[config, common]),
        Node(package='legid_ros', executable='ik_node', name='ik', output='screen',
             arguments=checked, parameters=[config, {'use_sim_time': use_sim_time}]),
        OpaqueFunction(function=_viewers),
    ])
