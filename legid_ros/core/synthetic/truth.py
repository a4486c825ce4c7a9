"""The 'true' robot of a synthetic run: CAD parameters perturbed by a table."""

from __future__ import annotations

from typing import Dict, Tuple

import numpy as np

from legid_ros.core.errors import BadInputError, InconsistentParametersError
from legid_ros.core.inertial import (PARAMS_PER_LINK, check_consistency, get_parameters,
                                     link_index, pack, unpack)
from legid_ros.core.robot import Robot


def _targets(robot: Robot, table: Dict[str, Tuple[float, object]]):
    """(link, mass factor, COM shift 3-vector in the link frame) for every table entry."""
    out = []
    for key, (factor, shift) in table.items():
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
        if shift.shape != (3,) or not np.isfinite(factor) or factor <= 0:
            raise BadInputError(f'truth table entry {key!r}: need factor > 0 and a shift [m]')
        out.extend((link, float(factor), shift) for link in links)
    return out


def perturbed_truth(robot: Robot, table: Dict[str, Tuple[float, object]],
                    pi_cad: np.ndarray = None, scale_inertia: bool = False) -> np.ndarray:
    """Standard parameters of the 'true' robot.

    Each listed link's mass is multiplied by its factor and its COM moved by the shift; its
    rotational inertia about the COM stays at the CAD value (``scale_inertia=False``), so with the
    same factor and an axial shift on both legs (table keyed by link group) the ZMP reduced set
    (Wu & Gao 2021) represents the truth exactly. Links not in the table keep CAD values.

    Args:
        robot: The robot (its model holds the CAD parameters).
        table: Group or link name -> (mass factor, COM shift [m]: scalar along the group
            axis, or a 3-vector in the link frame).
        pi_cad: Parameters to perturb (default: the model's).
        scale_inertia: Also scale the inertia about the COM by the mass factor.

    Returns:
        Stacked standard parameters, physically consistent.

    Raises:
        BadInputError: Unknown key, non-positive factor.
        InconsistentParametersError: The perturbed set is not physically consistent.
    """
    pi = (get_parameters(robot.model) if pi_cad is None else np.asarray(pi_cad, float)).copy()
    for link, factor, shift in _targets(robot, table):
        idx = link_index(robot.model, link)
        sl = slice(PARAMS_PER_LINK * idx, PARAMS_PER_LINK * (idx + 1))
        m, h, i_o = unpack(pi[sl])
        c = h / m
        i_c = i_o - m * (c @ c * np.eye(3) - np.outer(c, c))
        if scale_inertia:
            i_c = i_c * factor
        pi[sl] = pack(m * factor, c + shift, i_c)
    report = check_consistency(pi, robot.body_names)
    if not report.ok:
        raise InconsistentParametersError(f'perturbed truth is not physically consistent: '
                                          f'{", ".join(report.failing)}', report)
    return pi
