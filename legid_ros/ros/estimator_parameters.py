"""Parameters and start-up rules of the estimator node (:mod:`legid_ros.ros.estimator_node`).

``PARAMETERS`` is the node's parameter table; :func:`refuse_method` refuses a method the force
sensing cannot feed; :func:`near_uniform` marks the rows whose derivative window holds no gap.
"""

from __future__ import annotations

import numpy as np

from legid_ros.core.identification.solvers.standard import DEFAULT_REG
from legid_ros.ros.parameters import Param, ParameterRefusedError

METHODS = {'zmp_qp': 'zmp', 'zmp': 'zmp', 'torque_ls': 'torque', 'torque': 'torque',
           'floating_qp': 'floating', 'floating': 'floating'}
PARAMETERS = (
    Param('robot', 'biped', 'built-in robot name or path of a description YAML'),
    Param('method', 'zmp_qp', 'online method: zmp_qp (ZMP rows, Wu & Gao 2021), torque_ls, '
          'floating_qp', choices=tuple(METHODS)),
    Param('force_sensing', '', "the buffer's force sensing: 'wrench' (6-axis per foot), 'fsr' "
          "(sole sensors) or '' (the description's force_sensing); floating_qp needs 'wrench'",
          choices=('', 'wrench', 'fsr')),
    Param('forgetting', 1.0, 'forgetting factor per sample, (0, 1] (1 = remember everything) '
          '[-]', low=0.0, high=1.0, open_low=True, runtime=True),
    Param('regularization', DEFAULT_REG, 'weight of the prior toward CAD [-]', low=0.0,
          runtime=True),
    Param('total_mass_kg', 0.0, 'total-mass equality [kg] (0 = from the measured normal '
          'forces)', low=0.0),
    Param('min_samples', 500, 'samples folded before the first solve [samples]', low=0,
          runtime=True),
    Param('update_period_s', 1.0, 'period of the QP solve [s]', low=0.0, open_low=True,
          runtime=True),
    Param('fold_margin_rows', 50, 'rows at the end of a window left for the next window (the '
          'Savitzky-Golay derivatives are poorest at the edge) [rows]', low=0),
    Param('derivative_window_s', 0.05, 'Savitzky-Golay window (zero phase inside the window) '
          'for joint positions, velocities, accelerations and the ZMP [s]', low=0.0,
          open_low=True),
    Param('smooth_zmp', True, 'smooth the measured ZMP with the same Savitzky-Golay window as '
          'the joint positions (same bandwidth on both sides of the ZMP rows)'),
    Param('use_ankle_ft', True, "fold the windows' raw ankle F/T readings of swinging feet "
          '(rows where the foot is neither the support foot nor in contact)'),
    Param('ankle_ft_force_sigma_n', 2.0, 'scale of the ankle F/T force rows (expected noise) '
          '[N]', low=0.0, open_low=True),
    Param('ankle_ft_moment_sigma_nm', 0.1, 'scale of the ankle F/T moment rows [N.m]',
          low=0.0, open_low=True),
    Param('inertia_about_com', 'cad', "'cad': publish the identified masses and COMs with the "
          "CAD inertia about each COM (the ZMP reduced set, Wu & Gao 2021); 'identified': the "
          'full solution', choices=('cad', 'identified'), runtime=True),
    Param('fold_step', 10, 'fold every k-th new row (10: 100 Hz from 1 kHz, like legid '
          'identify; Wu & Gao 2021 sampled at 20 Hz) [rows]', low=1),
    Param('jump_back_s', 0.5, 'a window this much older than the last is a clock jump [s]',
          low=0.0),
    Param('state_file', 'legid_estimator_state.npz', 'state file (.npz), restored at start, '
          'saved on ~/save and shutdown ("" = none)'),
    Param('output_dir', 'legid_identified', 'directory of the URDF + YAML written by ~/save',
          runtime=True),
    Param('world_frame', 'world', 'frame_id of the predicted ZMP and the markers'),
    Param('publish_markers', True, 'publish legid/markers', runtime=True),
    Param('publish_tf', True, "broadcast world -> base link (the buffer's base pose) on /tf so "
          'rviz can place the robot model (needs tf2_msgs, part of every ROS install)'),
    Param('diagnostics_period_s', 1.0, 'period of the /diagnostics status [s]', low=0.0,
          open_low=True, runtime=True),
)
DIAG_NAME = 'legid estimator'


def near_uniform(t: np.ndarray, window_s: float) -> np.ndarray:
    """Rows whose derivative window holds no sampling gap (> 1.5 median step) [bool]."""
    ok = np.ones(len(t), bool)
    if len(t) < 3:
        return ok
    dt = np.diff(t)
    med = float(np.median(dt))
    gaps = np.flatnonzero(dt > 1.5 * med)
    half = int(np.ceil(0.5 * window_s / med)) if med > 0 else 0
    for g in gaps:
        ok[max(g - half + 1, 0):g + half + 1] = False
    return ok


def refuse_method(method: str, sensing: str) -> None:
    """Refuse at start-up a method the force sensing cannot feed.

    Raises:
        ParameterRefusedError: ``floating_qp`` needs 6-axis foot wrenches, not sole sensors.
    """
    if METHODS[method] == 'floating' and sensing != 'wrench':
        raise ParameterRefusedError(
            'estimator', 'method', f"{method} needs 6-axis foot wrenches but the force sensing "
            f"is {sensing!r} (sole sensors): use zmp_qp, or force_sensing:=wrench on the buffer "
            'and the estimator')
