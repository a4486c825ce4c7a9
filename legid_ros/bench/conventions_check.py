"""``legid check`` in ``legid bench conventions``: description mistakes injected into the
setups' own descriptions, each against its bag (flagged or not), and the lines it prints on
the right descriptions (false alarms).

Eleven mistake types: on Solo12 a wrong force frame, a wrong force sensing, no IMU mounting
(a rotated IMU; an IMU turned 90 deg about z alone, which gravity at rest cannot show), a
wrong IMU heading, the feet's topics swapped, point contacts at the sphere centres, forces
of the foot on the ground (sign flipped) and a wrong total mass (a sensor gain); on Talos a
sole sensor 2 cm off and a leg joint declared locked that moves.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
from pathlib import Path
from typing import Dict, List, Tuple

import yaml


def description_file(desc: dict, urdf, path: Path) -> str:
    """``desc`` written as a YAML at ``path`` (URDF by absolute path)."""
    desc = copy.deepcopy(desc)
    desc['urdf'] = str(urdf)
    path.write_text(yaml.safe_dump(desc))
    return str(path)


def check_lines(path, bag) -> List[str]:
    """The problems ``legid check`` prints for the description ``path`` on ``bag`` (none when
    it passes)."""
    from legid_ros.commands import check
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = check.run(argparse.Namespace(robot=str(path), bag=str(bag), zmp_source='auto'))
    lines = buf.getvalue().strip().splitlines()
    return [] if code == 0 else lines


def _flagged(desc: dict, urdf, bag, path: Path) -> dict:
    lines = check_lines(description_file(desc, urdf, path), bag)
    return {'flagged': bool(lines), 'lines': lines}


def solo_mistakes(bags: Dict[str, Tuple[str, dict]], urdf, root: Path) -> dict:
    """Mistakes in Solo12 setups' descriptions; ``bags``: variant -> (bag, its description)
    for the variants named here, with 'flipped' (force sign) and 'heavy' (gain 1.6)."""
    cases = {'wrong frame': 'world_forces', 'wrong sensing': 'world_forces',
             'imu mounting': 'imu_rotated_yawed_world_forces', 'feet swapped': 'world_forces',
             'imu yawed 90 deg, not described': 'imu_rot90_drift',
             'imu heading': 'imu_rotated_yawed_world_forces',
             'contact point at the sphere centre': 'canonical',
             'sign flipped': 'flipped', 'wrong total mass': 'heavy'}
    out = {}
    for k, (name, variant) in enumerate(cases.items()):
        bag, desc = bags[variant]
        desc = copy.deepcopy(desc)
        if name == 'wrong frame':
            for f in desc['feet'].values():
                f.pop('expressed_in', None)
        elif name == 'wrong sensing':
            desc['force_sensing'] = 'fsr'
        elif name in ('imu mounting', 'imu yawed 90 deg, not described'):
            desc['imu'].pop('rpy', None)
        elif name == 'imu heading':
            desc['imu']['heading_rad'] = 0.0
        elif name == 'contact point at the sphere centre':
            for frame in desc['frames'].values():
                frame['xyz'] = [0.0, 0.0, 0.0]
        elif name == 'feet swapped':
            feet = desc['feet']
            feet['lf']['wrench_topic'], feet['rh']['wrench_topic'] = \
                feet['rh']['wrench_topic'], feet['lf']['wrench_topic']
        out[name] = _flagged(desc, urdf, bag, root / f'solo_mistake_{k}.yaml')
    return out


def humanoid_mistakes(bag, desc: dict, urdf, root: Path) -> dict:
    """Mistakes in the Talos setup's description ``desc`` against its canonical ``bag``: a
    sole sensor 2 cm off, a moving leg joint declared locked."""
    off = copy.deepcopy(desc)
    off['feet']['left']['force_sensors'][0]['xyz'][0] -= 0.02  # [m]
    locked = copy.deepcopy(desc)
    locked.setdefault('locked_joints', {})['leg_left_4_joint'] = 0.0  # the knee
    return {'sensor 2 cm off (talos)': _flagged(off, urdf, bag, root / 'talos_off.yaml'),
            'a joint not locked (talos)': _flagged(locked, urdf, bag,
                                                   root / 'talos_locked.yaml')}
