"""Parameter sets the online pipeline publishes (no ROS).

ZMP-feedback identification (Wu & Gao 2021) fixes every link's inertia about its centre of
mass to the CAD value: slow balanced motion does not excite it, and a ZMP fit of the full
standard set leaves those directions to the prior and noise (the online solution then often
fails the triangle inequalities). :func:`with_cad_inertia` keeps the identified mass and first
moment of each link and puts back the CAD rotational inertia about the COM, scaled by the mass
ratio, which is physically consistent whenever the mass is positive.
"""

from __future__ import annotations

import numpy as np

from legid_ros.core.errors import BadInputError
from legid_ros.core.inertial import PARAMS_PER_LINK, pack, unpack


def inertia_about_com(p: np.ndarray) -> np.ndarray:
    """3x3 rotational inertia of one link about its COM [kg.m^2] from its 10 parameters."""
    m, h, i_o = unpack(p)
    c = h / m
    return i_o - m * (c @ c * np.eye(3) - np.outer(c, c))


def with_cad_inertia(pi: np.ndarray, pi_cad: np.ndarray) -> np.ndarray:
    """Identified masses and COMs with the CAD inertia about each COM (scaled by the mass ratio).

    Args:
        pi: Identified standard parameters (10 per link).
        pi_cad: CAD standard parameters of the same model.

    Raises:
        BadInputError: different lengths, or a non-positive identified or CAD mass.
    """
    pi = np.asarray(pi, float)
    pi_cad = np.asarray(pi_cad, float)
    if pi.shape != pi_cad.shape or pi.size % PARAMS_PER_LINK:
        raise BadInputError(f'parameter vectors of shapes {pi.shape} and {pi_cad.shape}')
    out = pi.copy()
    for k in range(pi.size // PARAMS_PER_LINK):
        sl = slice(PARAMS_PER_LINK * k, PARAMS_PER_LINK * (k + 1))
        m, h, _ = unpack(pi[sl])
        m_cad = pi_cad[sl][0]
        if m <= 0 or m_cad <= 0:
            raise BadInputError(f'link {k}: mass {m:.4g} kg (CAD {m_cad:.4g} kg) is not positive')
        out[sl] = pack(m, h / m, inertia_about_com(pi_cad[sl]) * (m / m_cad))
    return out
