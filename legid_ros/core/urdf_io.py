"""Write an identified parameter set back into a URDF (and a YAML next to it).

Only a physically consistent set becomes a URDF: :func:`write_urdf` refuses any other
(:class:`legid_ros.core.errors.InconsistentParametersError`, carrying the per-link report), so a
URDF with a negative mass or an impossible inertia is never written, whoever asks. The YAML
of an inconsistent set is written, and says so at its top.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Dict, Optional, Union

import numpy as np
import pinocchio as pin
import yaml

from legid_ros.core.atomic_files import atomic_path, write_text
from legid_ros.core.errors import (BadInputError, InconsistentParametersError,
                                   RobotDescriptionError)
from legid_ros.core.inertial import (PARAMS_PER_LINK, ConsistencyReport, check_consistency,
                                     link_view, unpack)
from legid_ros.core.robot import body_names


def _fmt(values) -> str:
    return ' '.join(repr(float(v)) for v in values)


#: Links named one by one in :func:`describe_inconsistency` (the rest are counted).
MAX_LINKS_NAMED = 4


def describe_inconsistency(report: ConsistencyReport,
                           max_links: Optional[int] = MAX_LINKS_NAMED) -> str:
    """The failing links of ``report`` and why, on one line (links with a mass <= 0 first).

    Args:
        report: Consistency of a parameter set.
        max_links: Links named (their first problem each); None names every link with every
            problem.

    Returns:
        E.g. ``'l_shank: mass -1339 kg <= 0; l_foot: negative principal moment ... and 3 more
        links'``; empty when the set is consistent.
    """
    bad = sorted((link for link in report.links if not link.ok), key=lambda lk: lk.mass > 0)
    shown = bad if max_links is None else bad[:max_links]
    parts = [f'{link.link}: ' + ('; '.join(link.problems) if max_links is None
                                  else link.problems[0]) for link in shown]
    more = len(bad) - len(shown)
    return '; '.join(parts) + (f' and {more} more link{"s" if more > 1 else ""}' if more else '')


def check_writable(model: pin.Model, pi: np.ndarray) -> ConsistencyReport:
    """Refuse a parameter set that is not finite and physically consistent.

    Args:
        model: pinocchio model (body order of ``pi``).
        pi: Stacked standard parameters (10 per body) [kg, kg.m, kg.m^2].

    Returns:
        The (passing) consistency report.

    Raises:
        BadInputError: Wrong length, or NaN/inf in ``pi``.
        InconsistentParametersError: A mass <= 0 or an inertia that is not physically
            consistent (pseudo-inertia not positive definite, triangle inequality); its
            ``report`` holds every link's result.
    """
    pi = np.asarray(pi, float)
    names = body_names(model)
    if pi.size != PARAMS_PER_LINK * len(names):
        raise BadInputError(f'{pi.size} parameters for {len(names)} bodies')
    if not np.isfinite(pi).all():
        raise BadInputError('parameters hold NaN or inf: URDF not written')
    report = check_consistency(pi, names)
    if not report.ok:
        raise InconsistentParametersError(
            f'parameters not physically consistent ({describe_inconsistency(report)}): URDF '
            'not written', report)
    return report


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

    Only a physically consistent set is written (:func:`check_writable`); nothing is written
    otherwise. An MJCF source gives an MJCF (:func:`_write_mjcf`; name it with
    :func:`identified_suffix`).

    Args:
        source_urdf: URDF (or MJCF) the model was built from.
        model: pinocchio model (defines the body order of ``pi``).
        pi: Stacked standard parameters (10 per body, about each joint frame).
        out_path: Where to write the URDF.
        comment: Optional XML comment placed at the top of the robot element.

    Returns:
        ``out_path`` as a Path.

    Raises:
        InconsistentParametersError: ``pi`` is not physically consistent (``report``: the
            per-link :class:`legid_ros.core.inertial.ConsistencyReport`).
        BadInputError: ``pi`` has the wrong length or holds NaN/inf.
        RobotDescriptionError: ``source_urdf`` unreadable or lacking a body's link.
    """
    check_writable(model, pi)
    from legid_ros.core.description.model_file import is_mjcf

    if is_mjcf(source_urdf):
        return _write_mjcf(source_urdf, model, pi, out_path, comment)
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


def identified_suffix(source: Union[str, Path]) -> str:
    """File suffix of the identified model written from ``source``: '.xml' for an MJCF,
    else '.urdf'."""
    from legid_ros.core.description.model_file import is_mjcf

    return '.xml' if is_mjcf(source) else '.urdf'


def _write_mjcf(source: Union[str, Path], model: pin.Model, pi: np.ndarray,
                out_path: Union[str, Path], comment: Optional[str]) -> Path:
    """Copy the MJCF ``source`` with each moving body's ``<inertial>`` from ``pi``: COM and
    inertia about it (``fullinertia``) moved from the joint frame into the body frame (they
    differ when a joint has a ``pos``)."""
    try:
        tree = ET.parse(str(source))
    except (ET.ParseError, OSError) as exc:
        raise RobotDescriptionError(f'cannot read MJCF: {exc}', str(source)) from exc
    bodies = {el.get('name'): el for el in tree.getroot().iter('body')}
    for name, val in link_inertials(model, pi).items():
        el = bodies.get(name)
        if el is None:
            raise RobotDescriptionError(f'body {name!r} not in MJCF', str(source))
        place = model.frames[model.getFrameId(name, pin.FrameType.BODY)].placement
        com = place.actInv(val['com'])
        i_c = place.rotation.T @ val['inertia'] @ place.rotation
        for old in el.findall('inertial'):
            el.remove(old)
        idx = ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))
        el.insert(0, ET.Element('inertial', {'pos': _fmt(com), 'mass': repr(val['mass']),
                                             'fullinertia': _fmt(i_c[ij] for ij in idx)}))
    if comment:
        tree.getroot().insert(0, ET.Comment(f' {comment} '))
    ET.indent(tree, space='  ')
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(out_path) as tmp:
        tree.write(str(tmp), encoding='unicode')
    return out_path


def consistency_header(model: pin.Model, pi: np.ndarray, advice: Optional[str] = None) -> dict:
    """The first entries of a parameter YAML: whether the set is physically consistent and,
    when not, which links fail and why, that no URDF is written from it, and ``advice``."""
    pi = np.asarray(pi, float)
    if not np.isfinite(pi).all():
        return {'physically_consistent': False, 'inconsistent_links': 'parameters hold NaN or '
                'inf', 'urdf': 'not written (NaN or inf)'}
    report = check_consistency(pi, body_names(model))
    if report.ok:
        return {'physically_consistent': True}
    head = {'physically_consistent': False,
            'inconsistent_links': {link.link: list(link.problems)
                                   for link in report.links if not link.ok},
            'urdf': 'not written: a URDF is written only from a physically consistent set'}
    if advice:
        head['advice'] = advice
    return head


def write_parameter_yaml(model: pin.Model, pi: np.ndarray, out_path: Union[str, Path],
                         extra: Optional[dict] = None, uncertainty=None,
                         advice: Optional[str] = None, physical=None) -> Path:
    """Write the parameter set as YAML: per link mass [kg], com [m], inertia [kg.m^2].

    The first entry is ``physically_consistent``; a set that is not is written all the same,
    headed by a comment line saying so, ``inconsistent_links`` (link -> its problems), ``urdf``
    (not written) and ``advice`` (:func:`consistency_header`).

    Args:
        model: pinocchio model (body order of ``pi``).
        pi: Stacked standard parameters.
        out_path: Where to write.
        extra: More top-level entries.
        uncertainty: :class:`legid_ros.core.identification.uncertainty.Uncertainty` of the
            set: written under ``uncertainty`` (per core parameter value, ``std`` and
            ``std_data``; per combination its std in core-scale units and whether it is
            identifiable).
        advice: What to do when the set is not consistent (e.g. a consistent method).
        physical: :class:`legid_ros.core.identification.summary.PhysicalSummary`: written
            first after the consistency entries, as ``what_the_data_determine``.
    """
    head = consistency_header(model, pi, advice)
    links = {}
    for name, val in link_inertials(model, pi).items():
        i_c = val['inertia']
        links[name] = {'mass_kg': val['mass'], 'com_m': [float(x) for x in val['com']],
                       'inertia_kg_m2': {'ixx': float(i_c[0, 0]), 'ixy': float(i_c[0, 1]),
                                         'ixz': float(i_c[0, 2]), 'iyy': float(i_c[1, 1]),
                                         'iyz': float(i_c[1, 2]), 'izz': float(i_c[2, 2])}}
    doc = dict(head)
    if physical is not None:
        doc['what_the_data_determine'] = physical.as_dict()
    doc.update({'links': links, 'standard_parameters': [float(x) for x in pi]})
    if extra:
        doc.update({k: v for k, v in extra.items() if k not in head})
    if uncertainty is not None:
        doc['uncertainty'] = uncertainty.as_dict()
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(doc, sort_keys=False)
    if not head['physically_consistent']:
        failing = head['inconsistent_links']
        which = ', '.join(failing) if isinstance(failing, dict) else failing
        text = (f'# NOT PHYSICALLY CONSISTENT ({which}): no URDF written from this set\n'
                + text)
    write_text(out_path, text)
    return out_path
