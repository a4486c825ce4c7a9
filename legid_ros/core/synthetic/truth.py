"""The 'true' robot of a synthetic run: CAD parameters perturbed by a table.

Two truths are defined (``TRUTHS``, keyed by their ``truth_class``):

- ``'table2'``: Wu & Gao's Table 2 (:data:`TABLE2_TRUTH`): the same mass factor and an axial COM
  shift on both legs, CAD inertia about the COM. The ZMP reduced set (Wu & Gao 2021) holds it
  exactly: a benchmark on it measures accuracy *inside* the model being fitted.
- ``'out_of_model'`` (:data:`OUT_OF_MODEL_TRUTH`, the benchmarks' default): 3-D COM shifts of
  5-20 mm in every direction, left and right legs different (a 0.3 kg sensor box on the left
  shank), the inertia about the COM scaled by 0.8-1.2 per link and a 1 kg payload on the trunk
  off its axis. No reduced set holds it; its reduced set is the group mean (left/right average
  of each mass and axial COM).
"""

from __future__ import annotations

from typing import Dict, NamedTuple, Tuple

import numpy as np

from legid_ros.core.errors import BadInputError, InconsistentParametersError
from legid_ros.core.inertial import (PARAMS_PER_LINK, check_consistency, get_parameters,
                                     link_index, pack, unpack)
from legid_ros.core.robot import Robot
from legid_ros.core.synthetic.config import TABLE2_TRUTH


class Payload(NamedTuple):
    """A solid box fixed to a link (sensor box, battery, payload).

    Attributes:
        mass: Box mass [kg].
        position: Box centre in the link frame [m].
        half_size: Half edge lengths of the box [m].
    """

    mass: float
    position: Tuple[float, float, float]
    half_size: Tuple[float, float, float] = (0.02, 0.02, 0.02)


class LinkChange(NamedTuple):
    """How one link (or link group) of the truth differs from CAD.

    A plain ``(factor, shift)`` pair means the same with unit inertia scale and no payload.

    Attributes:
        factor: Mass factor of the link's own body [-].
        shift: COM shift [m]: scalar along the group axis, or a 3-vector in the link frame.
        inertia_scale: Factor on the rotational inertia about the COM (on top of nothing: the
            mass factor does not scale it) [-].
        payloads: Boxes added to the link after the change.
    """

    factor: float
    shift: object
    inertia_scale: float = 1.0
    payloads: Tuple[Payload, ...] = ()


# The benchmarks' default truth: outside the ZMP reduced set (see the module docstring). Mass
# factors near Wu & Gao's Table 2 ones (so both truths load the robot alike), but per link.
OUT_OF_MODEL_TRUTH: Dict[str, LinkChange] = {
    'trunk': LinkChange(1.06, (0.012, -0.008, 0.015), 1.15,
                        (Payload(1.0, (0.06, -0.04, 0.12), (0.05, 0.04, 0.03)),)),
    'l_thigh': LinkChange(0.95, (0.010, 0.006, -0.018), 0.85),
    'r_thigh': LinkChange(0.91, (-0.007, -0.012, 0.009), 1.12),
    'l_shank': LinkChange(0.90, (-0.009, 0.014, 0.011), 1.18,
                          (Payload(0.3, (0.045, 0.0, -0.06), (0.02, 0.03, 0.02)),)),
    'r_shank': LinkChange(0.93, (0.016, -0.005, -0.013), 0.82),
    'l_foot': LinkChange(0.55, (0.018, 0.007, -0.006), 0.9),
    'r_foot': LinkChange(0.50, (-0.011, -0.009, 0.008), 1.2),
}

# truth_class -> table
TRUTHS = {'out_of_model': OUT_OF_MODEL_TRUTH, 'table2': TABLE2_TRUTH}


def truth_table(truth_class: str) -> dict:
    """The truth table of a class ('out_of_model' or 'table2').

    Raises:
        BadInputError: Unknown class.
    """
    if truth_class not in TRUTHS:
        raise BadInputError(f'unknown truth class {truth_class!r} ({", ".join(TRUTHS)})')
    return dict(TRUTHS[truth_class])


def truth_as_dict(table: dict) -> dict:
    """Plain form of a truth table (for ``Recording.meta``)."""
    out = {}
    for key, entry in table.items():
        ch = LinkChange(*entry)
        out[key] = [float(ch.factor), np.asarray(ch.shift, float).tolist(),
                    float(ch.inertia_scale),
                    [[float(p.mass), list(map(float, p.position)), list(map(float, p.half_size))]
                     for p in (Payload(*q) for q in ch.payloads)]]
    return out


def _box_inertia(mass: float, half_size) -> np.ndarray:
    """Inertia of a solid box about its centre [kg.m^2]."""
    a, b, c = (2 * np.asarray(half_size, float)) ** 2
    return mass / 12.0 * np.diag([b + c, a + c, a + b])


def _add_payloads(m: float, c: np.ndarray, i_c: np.ndarray, payloads) -> tuple:
    """Mass, COM and inertia about the COM of a body with boxes attached."""
    for p in payloads:
        p = Payload(*p)
        if not (p.mass > 0 and np.isfinite(p.mass)):
            raise BadInputError(f'payload mass must be > 0, got {p.mass}')
        pos = np.asarray(p.position, float)
        m_new = m + p.mass
        c_new = (m * c + p.mass * pos) / m_new
        i_new = np.zeros((3, 3))
        for mass, com, inertia in ((m, c, i_c), (p.mass, pos, _box_inertia(p.mass,
                                                                          p.half_size))):
            d = com - c_new
            i_new += inertia + mass * (d @ d * np.eye(3) - np.outer(d, d))
        m, c, i_c = m_new, c_new, i_new
    return m, c, i_c


def _targets(robot: Robot, table: Dict[str, tuple]):
    """(link, LinkChange with a 3-vector shift in the link frame) for every table entry."""
    out = []
    for key, entry in table.items():
        ch = LinkChange(*entry)
        factor, shift = ch.factor, ch.shift
        if key in robot.link_groups:
            group = robot.link_groups[key]
            links, axis = group.links, group.axis
        elif robot.model.existFrame(key):
            links, axis = [key], None
        else:
            raise BadInputError(f'truth table key {key!r} is neither a link group '
                                f'({", ".join(robot.link_groups)}) nor a link')
        shift = np.asarray(shift, float)
        if shift.ndim == 0:
            if axis is None:
                raise BadInputError(f'truth table: link {key!r} needs a 3-vector COM shift')
            shift = float(shift) * axis
        if shift.shape != (3,) or not np.isfinite(factor) or factor <= 0 or not (
                np.isfinite(ch.inertia_scale) and ch.inertia_scale > 0):
            raise BadInputError(f'truth table entry {key!r}: need factor > 0, a shift [m] and '
                                f'an inertia scale > 0')
        out.extend((link, ch._replace(factor=float(factor), shift=shift)) for link in links)
    return out


def perturbed_truth(robot: Robot, table: Dict[str, tuple],
                    pi_cad: np.ndarray = None, scale_inertia: bool = False) -> np.ndarray:
    """Standard parameters of the 'true' robot.

    Each listed link's mass is multiplied by its factor and its COM moved by the shift; its
    rotational inertia about the COM is multiplied by the entry's ``inertia_scale`` (default 1:
    the CAD value), then the entry's payload boxes are attached. With the same factor and an
    axial shift on both legs (table keyed by link group, as :data:`TABLE2_TRUTH`) the ZMP reduced
    set (Wu & Gao 2021) represents the truth exactly. Links not in the table keep CAD values.

    Args:
        robot: The robot (its model holds the CAD parameters).
        table: Group or link name -> :class:`LinkChange` or (mass factor, COM shift [m]:
            scalar along the group axis, or a 3-vector in the link frame).
        pi_cad: Parameters to perturb (default: the model's).
        scale_inertia: Also scale the inertia about the COM by the mass factor.

    Returns:
        Stacked standard parameters, physically consistent.

    Raises:
        BadInputError: Unknown key, non-positive factor.
        InconsistentParametersError: The perturbed set is not physically consistent.
    """
    pi = (get_parameters(robot.model) if pi_cad is None else np.asarray(pi_cad, float)).copy()
    for link, ch in _targets(robot, table):
        idx = link_index(robot.model, link)
        sl = slice(PARAMS_PER_LINK * idx, PARAMS_PER_LINK * (idx + 1))
        m, h, i_o = unpack(pi[sl])
        c = h / m
        i_c = i_o - m * (c @ c * np.eye(3) - np.outer(c, c))
        if scale_inertia:
            i_c = i_c * ch.factor
        m, c, i_c = _add_payloads(m * ch.factor, c + ch.shift, i_c * ch.inertia_scale,
                                  ch.payloads)
        pi[sl] = pack(m, c, i_c)
    report = check_consistency(pi, robot.body_names)
    if not report.ok:
        raise InconsistentParametersError(f'perturbed truth is not physically consistent: '
                                          f'{", ".join(report.failing)}', report)
    return pi
