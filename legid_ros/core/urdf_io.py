"""Write an identified parameter set back into a URDF (and a YAML next to it)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Dict, Optional, Union

import numpy as np
import pinocchio as pin
import yaml

from legid_ros.core.atomic_files import atomic_path, write_text
from legid_ros.core.errors import BadInputError, RobotDescriptionError
from legid_ros.core.inertial import PARAMS_PER_LINK, link_view, unpack
from legid_ros.core.robot import body_names


def _fmt(values) -> str:
    return ' '.join(repr(float(v)) for v in values)


def link_inertials(model: pin.Model, pi: np.ndarray) -> Dict[str, dict]:
    """Per link: mass [kg], COM [m] and inertia about the COM [kg.m^2] from stacked ``pi``."""
    pi = np.asarray(pi, float)
    names = body_names(model)
    if pi.size != PARAMS_PER_LINK * len(names):
        raise BadInputError(f'{pi.size} parameters for {len(names)} bodies')
    out = {}
    for i, name in enumerate(names):
        m, h, i_o = unpack(link_view(pi, i))
        c = h / m if m > 0 else np.zeros(3)
        i_c = i_o - m * (c @ c * np.eye(3) - np.outer(c, c))
        out[name] = {'mass': float(m), 'com': c, 'inertia': 0.5 * (i_c + i_c.T)}
    return out


def write_urdf(source_urdf: Union[str, Path], model: pin.Model, pi: np.ndarray,
               out_path: Union[str, Path], comment: Optional[str] = None) -> Path:
    """Copy ``source_urdf`` with the inertials of every moving body replaced by ``pi``.

    Args:
        source_urdf: URDF the model was built from.
        model: pinocchio model (defines the body order of ``pi``).
        pi: Stacked standard parameters (10 per body, about each joint frame).
        out_path: Where to write the URDF.
        comment: Optional XML comment placed at the top of the robot element.

    Returns:
        ``out_path`` as a Path.
    """
    try:
        tree = ET.parse(str(source_urdf))
    except (ET.ParseError, OSError) as exc:
        raise RobotDescriptionError(f'cannot read URDF: {exc}', str(source_urdf)) from exc
    root = tree.getroot()
    links = {el.get('name'): el for el in root.findall('link')}
    for name, val in link_inertials(model, pi).items():
        el = links.get(name)
        if el is None:
            raise RobotDescriptionError(f'link {name!r} not in URDF', str(source_urdf))
        inertial = el.find('inertial')
        if inertial is None:
            inertial = ET.Element('inertial')
            el.insert(0, inertial)
        for child in list(inertial):
            inertial.remove(child)
        ET.SubElement(inertial, 'origin', xyz=_fmt(val['com']), rpy='0 0 0')
        ET.SubElement(inertial, 'mass', value=repr(float(val['mass'])))
        i_c = val['inertia']
        keys = ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz')
        idx = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))
        ET.SubElement(inertial, 'inertia', {k: repr(float(i_c[ij])) for k, ij in zip(keys, idx)})
    if comment:
        root.insert(0, ET.Comment(f' {comment} '))
    ET.indent(tree, space='  ')
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(out_path) as tmp:
        tree.write(str(tmp), encoding='unicode', xml_declaration=True)
    return out_path


def write_parameter_yaml(model: pin.Model, pi: np.ndarray, out_path: Union[str, Path],
                         extra: Optional[dict] = None, uncertainty=None) -> Path:
    """Write the parameter set as YAML: per link mass [kg], com [m], inertia [kg.m^2].

    Args:
        model: pinocchio model (body order of ``pi``).
        pi: Stacked standard parameters.
        out_path: Where to write.
        extra: More top-level entries.
        uncertainty: :class:`legid_ros.core.identification.uncertainty.Uncertainty` of the
            set: written under ``uncertainty`` (per core parameter value, ``std`` and
            ``std_data``; per combination its std in core-scale units and whether it is
            identifiable).
    """
    links = {}
    for name, val in link_inertials(model, pi).items():
        i_c = val['inertia']
        links[name] = {'mass_kg': val['mass'], 'com_m': [float(x) for x in val['com']],
                       'inertia_kg_m2': {'ixx': float(i_c[0, 0]), 'ixy': float(i_c[0, 1]),
                                         'ixz': float(i_c[0, 2]), 'iyy': float(i_c[1, 1]),
                                         'iyz': float(i_c[1, 2]), 'izz': float(i_c[2, 2])}}
    doc = {'links': links, 'standard_parameters': [float(x) for x in pi]}
    if extra:
        doc.update(extra)
    if uncertainty is not None:
        doc['uncertainty'] = uncertainty.as_dict()
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    write_text(out_path, yaml.safe_dump(doc, sort_keys=False))
    return out_path
