"""Test-session settings shared by every test.

ROS 2 traffic stays on this machine (localhost discovery) and on a domain of its own, so test
runs in parallel (or a robot on the network) never see each other. rclpy re-executes the
process once to set its library path; the variables set here survive that.
"""

import os
import random

os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
os.environ.setdefault('ROS_LOCALHOST_ONLY', '1')
os.environ.setdefault('ROS_DOMAIN_ID', str(random.SystemRandom().randint(1, 100)))
os.environ.setdefault('MPLBACKEND', 'Agg')
# One BLAS thread per process: on 2 cores, OpenBLAS threads fighting each other made small
# QR and least-squares calls up to 100x slower.
os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
os.environ.setdefault('OMP_NUM_THREADS', '1')
