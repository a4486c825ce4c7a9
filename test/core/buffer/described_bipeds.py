"""Description YAMLs on top of the biped's URDF: renamed force sensors and point feet."""

from pathlib import Path

import yaml

from legid_ros.core import paths

SIDES = {'left': 'l', 'right': 'r'}
CORNERS = ('fl', 'fr', 'rl', 'rr')


def biped_description(**changes) -> dict:
    """The biped's description with an absolute URDF path and top-level ``changes``."""
    desc = yaml.safe_load(paths.config_path('biped.yaml').read_text())
    desc['urdf'] = str(paths.urdf_path('biped.urdf'))
    desc.update(changes)
    return desc


def renamed_sensors(topic='{foot}_foot/fsr/c{k}') -> dict:
    """Biped whose sole sensors are listed under ``force_sensors`` with other topic names."""
    desc = biped_description()
    for foot, s in SIDES.items():
        f = desc['feet'][foot]
        del f['sensor_frames'], f['fsr_topic_prefix']
        f['force_sensors'] = [{'topic': topic.format(foot=foot, k=k), 'frame': f'{s}_sole_{c}'}
                              for k, c in enumerate(CORNERS)]
    return desc


def point_feet(normal_only: bool = False) -> dict:
    """Biped with point feet at the sole centres: a 3-axis force per foot at the ankle F/T
    (``force_sensing: wrench``) or, with ``normal_only``, one normal-force sensor at the sole
    centre (``force_sensing: fsr``)."""
    desc = biped_description(force_sensing='fsr' if normal_only else 'wrench')
    for foot, s in SIDES.items():
        f = {'link': f'{s}_foot', 'sole_frame': f'{s}_sole', 'ft_frame': f'{s}_ankle_ft',
             'contact': 'point', 'wrench_topic': f'{foot}_foot/force'}
        if normal_only:
            f['force_sensors'] = [{'topic': f'{foot}_foot/normal', 'frame': f'{s}_sole'}]
        desc['feet'][foot] = f
    return desc


def write(desc: dict, folder: Path, name: str = 'robot.yaml') -> Path:
    """Write a description YAML; returns its path."""
    path = Path(folder) / name
    path.write_text(yaml.safe_dump(desc, sort_keys=False))
    return path
