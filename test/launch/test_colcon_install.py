"""colcon builds legid_ros into a workspace the way a ROS 2 user would, and the launch files
name only executables, configs and URDFs that exist in that install space."""

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAUNCH_FILES = ['legid.launch.py', 'sim.launch.py', 'replay.launch.py']


def _console_scripts():
    tree = ast.parse((ROOT / 'setup.py').read_text())
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and ' = ' in node.value:
            names.append(node.value.split(' = ')[0].strip())
    return names


@pytest.fixture(scope='module')
def install(tmp_path_factory):
    """A colcon workspace with legid_ros built (not symlinked) into install/."""
    colcon = Path(sys.executable).parent / 'colcon'
    if not colcon.exists():
        colcon = shutil.which('colcon')
    assert colcon, 'colcon not installed (requirements.txt pins colcon-core and colcon-ros)'
    ws = tmp_path_factory.mktemp('ws')
    (ws / 'src').mkdir()
    (ws / 'src' / 'legid_ros').symlink_to(ROOT)
    env = dict(os.environ, COLCON_HOME=str(ws / '.colcon'))
    out = subprocess.run([str(colcon), 'build', '--base-paths', 'src', '--event-handlers',
                          'console_direct-'], cwd=ws, env=env, capture_output=True, text=True,
                         timeout=600, check=False)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return ws / 'install' / 'legid_ros'


def test_every_executable_installed_in_lib(install):
    """Every console script (nodes and legid) is an executable in lib/legid_ros/."""
    scripts = _console_scripts()
    assert {'legid', 'buffer_node', 'estimator_node', 'controller_node', 'ik_node',
            'sim_node'} <= set(scripts)
    for name in scripts:
        exe = install / 'lib' / 'legid_ros' / name
        assert exe.is_file() and os.access(exe, os.X_OK), name


def test_share_holds_launch_config_urdf_and_index(install):
    """launch/, config/ (with robots/), urdf/, package.xml and the ament index marker are
    installed."""
    share = install / 'share' / 'legid_ros'
    assert (install / 'share' / 'ament_index' / 'resource_index' / 'packages'
            / 'legid_ros').exists()
    assert (share / 'package.xml').is_file()
    for sub, pattern in (('launch', '*.launch.py'), ('config', '*.yaml'), ('urdf', '*.urdf'),
                         ('config/robots', '*.yaml')):
        src = sorted(p.name for p in (ROOT / sub).glob(pattern))
        dst = sorted(p.name for p in (share / sub).glob(pattern))
        assert src and src == dst, sub
    for name in LAUNCH_FILES:
        assert (share / 'launch' / name).is_file(), name


def test_installed_package_finds_its_share_directory(install):
    """Imported from the install space, legid_ros loads the biped from share/legid_ros."""
    site = next(install.glob('lib/python3*/site-packages'))
    code = ('from legid_ros.core import paths; from legid_ros.core.robot import load_robot; '
            'r = load_robot("biped"); print(paths.share_dir()); print(r.urdf_path)')
    env = dict(os.environ, PYTHONPATH=str(site))
    env.pop('LEGID_SHARE', None)
    out = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True,
                         check=True, cwd='/')
    share, urdf = out.stdout.split()
    assert Path(share) == install / 'share' / 'legid_ros'
    assert Path(urdf) == install / 'share' / 'legid_ros' / 'urdf' / 'biped.urdf'


def _launch_references(path: Path):
    """Executable names and data-file names a launch file mentions (static analysis)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    executables, files = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == 'executable':
            assert isinstance(node.value, ast.Constant), f'{path.name}: executable not literal'
            executables.add(node.value.value)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if re.fullmatch(r'[\w\-]+\.(yaml|urdf|rviz)', node.value):
                files.add(node.value)
    return executables, files


@pytest.mark.parametrize('name', LAUNCH_FILES)
def test_launch_file_parses_and_names_installed_things(install, name):
    """A launch file compiles, defines generate_launch_description, and every executable,
    config, URDF and rviz file it names exists in the install space."""
    path = install / 'share' / 'legid_ros' / 'launch' / name
    source = path.read_text()
    compile(source, str(path), 'exec')
    tree = ast.parse(source)
    assert any(isinstance(n, ast.FunctionDef) and n.name == 'generate_launch_description'
               for n in tree.body)
    executables, files = _launch_references(path)
    assert executables, f'{name} starts no node'
    for exe in executables:
        if exe in ('rviz2', 'robot_state_publisher'):
            continue  # from other ROS packages, declared as exec_depend in package.xml
        assert (install / 'lib' / 'legid_ros' / exe).is_file(), f'{name}: {exe} not installed'
    share = install / 'share' / 'legid_ros'
    for fname in files:
        sub = {'yaml': 'config', 'rviz': 'config', 'urdf': 'urdf'}[fname.rsplit('.', 1)[1]]
        assert (share / sub / fname).is_file(), f'{name}: {fname} not installed'


def test_package_xml_declares_run_dependencies():
    """package.xml is format 3, ament_python, and depends on rclpy and the message packages."""
    text = (ROOT / 'package.xml').read_text()
    assert '<package format="3">' in text and '<build_type>ament_python</build_type>' in text
    for dep in ('rclpy', 'sensor_msgs', 'geometry_msgs', 'std_msgs', 'std_srvs',
                'trajectory_msgs', 'visualization_msgs', 'diagnostic_msgs', 'pinocchio',
                'python3-numpy', 'python3-scipy'):
        assert f'<exec_depend>{dep}</exec_depend>' in text, dep
