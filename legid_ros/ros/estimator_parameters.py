"""Parameters and start-up rules of the estimator node (:mod:`legid_ros.ros.estimator_node`).

``PARAMETERS`` is the node's parameter table; :func:`refuse_method` refuses a method the force
sensing cannot feed; :func:`param_set_of` gives the parameter set a method solves.
"""

from __future__ import annotations


from legid_ros.ros.parameters import Param, ParameterRefusedError

METHODS = {'zmp_qp': 'zmp', 'zmp': 'zmp', 'zmp_newton': 'zmp', 'torque_ls': 'torque',
           'torque': 'torque', 'floating_qp': 'floating', 'floating': 'floating'}
#: Parameter set each method solves unless ``param_set`` says otherwise.
DEFAULT_SET = {'zmp_newton': 'reduced'}
PARAM_SETS = ('', 'auto', 'standard', 'reduced', 'grouped', 'grouped_sides')
PARAMETERS = (
    Param('robot', 'biped', 'built-in robot name or path of a description YAML'),
    Param('method', '', "online method: '' (the robot's: zmp_newton for every foot kind, "
          'legid_ros.core.identification.defaults), zmp_qp (ZMP rows, standard set, QP; LMIs '
          'when the QP solution is inconsistent), zmp_newton (ZMP rows, Newton on param_set), '
          'torque_ls, floating_qp', choices=('',) + tuple(METHODS)),
    Param('param_set', '', "parameter set: '' (the robot's with its method: grouped_sides on "
          'point feet and flat feet with F/T, reduced on flat feet with sole sensors; with '
          'another method its own: standard), auto (per link group the components the data '
          'determine: chosen once by an F-test on the statistics folded in the first 30 s of '
          'data, the smallest set until then, or the levels of auto_levels), standard, reduced '
          '(mass + axial COM per link group), grouped (mass + 3-D COM per group), '
          'grouped_sides (per group and side)', choices=PARAM_SETS),
    Param('auto_levels', '', "param_set auto: the levels chosen offline, 'group=level,...' "
          "(e.g. 'trunk=mass+com,leg_3=axial': the table legid identify prints and writes to "
          "parameters.yaml); '' = chosen online from the first 30 s of data"),
    Param('force_sensing', '', "the buffer's force sensing: 'wrench' (6-axis per foot), 'fsr' "
          "(sole sensors) or '' (the description's force_sensing); floating_qp needs 'wrench'",
          choices=('', 'wrench', 'fsr')),
    Param('forgetting_half_life_s', 0.0, 'forgetting in time: a sample weighs half after this '
          'long [s] (0 = remember everything; independent of fold_rate_hz and window size)',
          low=0.0, runtime=True),
    Param('regularization', -1.0, 'weight of the prior toward CAD [-] (< 0: on the grouped '
          'and auto sets chosen on the last seconds of the first 3000 folded samples, the '
          "least held-out ZMP residual, 0.025 until then; the reduced set's 0.025 and the "
          "standard set's 0.01 otherwise, the batch methods' priors)",
          low=-1.0, runtime=True),
    Param('total_mass_kg', 0.0, 'total-mass equality [kg] (0 = from the measured normal '
          'forces)', low=0.0),
    Param('min_samples', 500, 'samples folded before the first solve [samples]', low=0,
          runtime=True),
    Param('update_period_s', 1.0, 'period of the QP solve [s]', low=0.0, open_low=True,
          runtime=True),
    Param('fold_margin_rows', 50, 'rows at the end of a window left for the next window, at '
          'least half the longest Savitzky-Golay window in any case (the folder stitches the '
          'windows into one stream and folds a row once its filters see both sides) [rows]',
          low=0),
    Param('derivative_window_s', 0.1, 'Savitzky-Golay window (zero phase inside the window) '
          'for joint positions, velocities, accelerations, the IMU orientation, the efforts '
          'and the ZMP [s]', low=0.0, open_low=True),
    Param('smooth_zmp', True, 'smooth the measured ZMP with the same Savitzky-Golay window as '
          'the joint positions (same bandwidth on both sides of the ZMP rows)'),
    Param('use_ankle_ft', True, "fold the windows' raw ankle F/T readings of swinging feet "
          '(rows where the foot is neither the support foot nor in contact)'),
    Param('ankle_ft_force_sigma_n', 2.0, 'scale of the ankle F/T force rows (expected noise) '
          '[N]', low=0.0, open_low=True),
    Param('ankle_ft_moment_sigma_nm', 0.1, 'scale of the ankle F/T moment rows [N.m]',
          low=0.0, open_low=True),
    Param('fold_rate_hz', 100.0, 'rows folded per second: every k-th new row, k from the '
          "windows' own sampling rate (100: as legid identify steps a 1 kHz run, 1 kHz and 200 "
          'Hz streams alike; Wu & Gao 2021 sampled at 20 Hz; 0 = every row) [Hz]', low=0.0),
    Param('jump_back_s', 0.5, 'a window this much older than the last is a clock jump [s]',
          low=0.0),
    Param('base_state', 'auto', "floating-base state: 'support' (support sole flat and still), "
          "'contacts' (IMU orientation and rates, every stance contact still: tall robots, "
          "point feet), 'auto' (contacts with point feet or several feet loaded in 10 % of the "
          'rows so far, as legid identify chooses)', choices=('auto', 'support', 'contacts')),
    Param('transition_s', 0.0, "rows this close to any foot's touch-down or lift-off are not "
          'folded (0: none left out; -1: 0.5 s, shorter when that would keep less than half of '
          'the rows so far, as legid identify --transition-s auto chooses) [s]', low=-1.0),
    Param('base_acc', 'contacts', "the base's linear acceleration: 'contacts' (the stance "
          "contacts' second derivative through the joints) or 'imu' (the IMU's accelerometer: "
          'fast gaits such as a trot; legid identify --base-acc)',
          choices=('contacts', 'imu')),
    Param('min_contacts', 0, 'rows with fewer feet in contact (the buffer\'s flags) are not '
          "folded (0: all; a trot's two-foot rows: 4; legid identify --min-contacts) [feet]",
          low=0),
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


def param_set_of(method: str, param_set: str) -> str:
    """The parameter set solved by ``method`` (``param_set`` '' = the method's default)."""
    return param_set or DEFAULT_SET.get(method, 'standard')


def auto_levels_of(robot, param_set: str, text: str):
    """The 'auto' set's levels of the ``auto_levels`` parameter (None: chosen online).

    Raises:
        ParameterRefusedError: Malformed text, an unknown group or component, or levels
            given for another parameter set.
    """
    if not text.strip():
        return None
    if param_set != 'auto':
        raise ParameterRefusedError('estimator', 'auto_levels', f'{text!r} is given but '
                                    f'param_set is {param_set!r}: set param_set auto or clear '
                                    'auto_levels')
    from legid_ros.core.errors import BadInputError
    from legid_ros.core.identification.parameters.auto.levels import AutoSet, parse_levels
    try:
        levels = parse_levels(text)
        AutoSet(robot, levels)  # unknown groups, an axial level without a leg axis
    except BadInputError as exc:
        raise ParameterRefusedError('estimator', 'auto_levels', str(exc)) from exc
    return levels


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
