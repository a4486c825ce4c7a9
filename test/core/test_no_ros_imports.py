"""The core never imports ROS: proven in a fresh interpreter."""

import pkgutil
import subprocess
import sys

import legid_ros.core

SCRIPT = r'''
import importlib, pkgutil, sys
import legid_ros.core as core
names = [m.name for m in pkgutil.walk_packages(core.__path__, 'legid_ros.core.')]
for name in names:
    importlib.import_module(name)
bad = sorted(m for m in sys.modules
             if m.split('.')[0] in ('rclpy', 'launch', 'launch_ros', 'rosidl_runtime_py')
             or m.split('.')[0].endswith('_msgs') or m.split('.')[0].endswith('_srvs'))
print(len(names))
print(','.join(bad))
'''


def test_core_imports_no_ros_module():
    """Importing every legid_ros.core module loads no rclpy, *_msgs, *_srvs or launch module."""
    out = subprocess.run([sys.executable, '-c', SCRIPT], capture_output=True, text=True,
                         check=True, timeout=300)
    count, bad = out.stdout.strip().split('\n') + [''] * (2 - len(out.stdout.strip().split('\n')))
    expected = len(list(pkgutil.walk_packages(legid_ros.core.__path__, 'legid_ros.core.')))
    assert int(count) == expected >= 5
    assert bad == '', f'core loaded ROS modules: {bad}'
