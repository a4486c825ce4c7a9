"""A true robot for any description, outside every parameter set the methods fit.

Every moving body's COM moves 5-20 mm along each axis (random signs), its inertia about the
COM is scaled by 0.8-1.2 and its mass by 0.92-1.08; one leg carries a sensor box (2 % of the
robot's mass) on its middle link, which its mirror does not; the trunk carries a payload (5 % of
the mass) off its axis. No symmetric set holds it (the legs differ), no set with CAD inertia
holds it, and the trunk's COM moves in 3-D. Built with the table form of
:func:`legid_ros.core.synthetic.truth.perturbed_truth` (link name -> change).
"""

from __future__ import annotations

from typing import Dict, Tuple

import numpy as np

from legid_ros.core.robot import Robot
from legid_ros.core.synthetic.truth import LinkChange, Payload
from legid_ros.core.synthetic.truth import perturbed_truth as _apply_table

BOX_FRACTION = 0.02  # sensor box on one leg [-] of the total mass
PAYLOAD_FRACTION = 0.05  # trunk payload [-] of the total mass


def _leg_middle_link(robot: Robot) -> str:
    """The middle moving link of the description's first leg (the box's place)."""
    legs = (robot.description or {}).get('legs') or {}
    names = robot.body_names
    for leg in legs.values():
        joints = [j for j in leg.get('joints', []) if robot.model.existJointName(j)]
        if joints:
            jid = robot.model.getJointId(joints[len(joints) // 2])
            return names[jid - 1]
    return names[len(names) // 2]


def truth_table(robot: Robot, seed: int = 0) -> Dict[str, LinkChange]:
    """The per-link changes of :func:`perturbed_truth` (link name -> :class:`LinkChange`)."""
    rng = np.random.default_rng([seed, 4242])
    total = robot.total_mass
    names = robot.body_names
    box_link = _leg_middle_link(robot)
    table: Dict[str, LinkChange] = {}
    for i, link in enumerate(names):
        shift = rng.uniform(0.005, 0.020, 3) * rng.choice([-1.0, 1.0], 3)
        payloads: Tuple[Payload, ...] = ()
        if i == 0:
            # off the trunk axis, inside the trunk's reach [m]
            payloads = (Payload(PAYLOAD_FRACTION * total, (0.04, -0.03, 0.05),
                                (0.04, 0.03, 0.02)),)
        elif link == box_link:
            payloads = (Payload(BOX_FRACTION * total, (0.02, 0.0, -0.03), (0.015, 0.02, 0.015)),)
        table[link] = LinkChange(float(rng.uniform(0.92, 1.08)), shift,
                                 float(rng.uniform(0.8, 1.2)), payloads)
    return table


def perturbed_truth(robot: Robot, seed: int = 0) -> Tuple[np.ndarray, dict]:
    """True standard parameters of ``robot`` and a description of the changes.

    Args:
        robot: The robot (its model holds the CAD parameters).
        seed: Seed of the random changes.

    Returns:
        (pi_true, info): physically consistent parameters (10 per moving body) and
        ``{'class': 'out_of_model', 'box_link', 'box_kg', 'payload_kg', 'mass_true_kg',
        'mass_cad_kg', 'com_shift_mm': [min, max], 'inertia_scale': [min, max]}``.
    """
    table = truth_table(robot, seed)
    pi = _apply_table(robot, table)
    box = next(k for k, v in table.items() if v.payloads and k != robot.body_names[0])
    info = {'class': 'out_of_model', 'seed': int(seed), 'box_link': box,
            'box_kg': float(table[box].payloads[0].mass),
            'payload_kg': float(table[robot.body_names[0]].payloads[0].mass),
            'mass_cad_kg': float(robot.total_mass), 'mass_true_kg': float(pi[0::10].sum()),
            'com_shift_mm': [5.0, 20.0], 'mass_factor': [0.92, 1.08],
            'inertia_scale': [0.8, 1.2]}
    return pi, info
