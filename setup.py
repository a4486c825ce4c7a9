"""ament_python setup for legid_ros."""

from glob import glob
import os

from setuptools import find_packages, setup

PACKAGE = 'legid_ros'

setup(
    name=PACKAGE,
    version='0.1.0',
    packages=find_packages(exclude=['test', 'test.*']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + PACKAGE]),
        (os.path.join('share', PACKAGE), ['package.xml']),
        (os.path.join('share', PACKAGE, 'launch'), glob('launch/*.launch.py')),
        (os.path.join('share', PACKAGE, 'config'), glob('config/*.yaml') + glob('config/*.rviz')),
        (os.path.join('share', PACKAGE, 'config', 'robots'), glob('config/robots/*.yaml')),
        (os.path.join('share', PACKAGE, 'urdf'), glob('urdf/*.urdf')),
    ],
    install_requires=['setuptools'],
    zip_safe=True,
    maintainer='legid_ros developers',
    maintainer_email='legid-ros@example.com',
    description='Online inertial and friction identification, feedforward and redundant-leg IK '
                'for legged robots.',
    license='Apache-2.0',
    tests_require=['pytest'],
    entry_points={
        'console_scripts': [
            'legid = legid_ros.cli:main',
            'buffer_node = legid_ros.ros.buffer_node:main',
            'estimator_node = legid_ros.ros.estimator_node:main',
            'controller_node = legid_ros.ros.controller_node:main',
            'ik_node = legid_ros.ros.ik_node:main',
            'sim_node = legid_ros.ros.sim_node:main',
        ],
    },
)
