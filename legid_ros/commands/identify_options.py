"""Options of ``legid identify``: its command line, its exit statuses, and the options
``identify()`` gets from them (:mod:`legid_ros.commands.identify` uses them)."""

from __future__ import annotations

import argparse

from legid_ros.core.identification import METHODS

#: Exit status when the identified set is not physically consistent (no URDF written).
EXIT_INCONSISTENT = 3

EPILOG = f"""exit status:
  0  the URDF, parameters.yaml and report.md are written
  2  bad input, or a prerequisite of the method missing (no primitives in the
     description; no foot forces, foot wrenches, IMU or ankle F/T topics in the
     bag; a parameter set the method does not run on): one line names the
     option and the fix, and no bag is read
  {EXIT_INCONSISTENT}  the identified set is not physically consistent (a mass <= 0, an
     impossible inertia): parameters.yaml and report.md are written and say so
     at their top, no <robot>_identified.urdf is; methods that keep the set
     consistent: sdp, zmp_newton, primitives, or a grouped --param-set"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``legid identify`` (and the exit statuses, in the epilog)."""
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument('--bag', required=True,
                        help='rosbag2 directory or .mcap/.db3 file (a Recording .npz works too)')
    parser.add_argument('--robot', default='biped', help='built-in robot or description YAML')
    parser.add_argument('--method', choices=METHODS,
                        help='identification method (default: the robot\'s, from its feet: '
                             'zmp_newton, consistent by its parameter set, for every foot '
                             'kind; zmp_qp may leave the consistent set, see exit 3)')
    parser.add_argument('--out', default='identified', help='output directory')
    parser.add_argument('--validate', help='second bag for the ZMP validation (default: the '
                                           'last 25 %% of --bag is held out)')
    parser.add_argument('--param-set',
                        choices=('auto', 'reduced', 'grouped', 'grouped_sides', 'standard',
                                 'base'),
                        help='parameter set (default: the robot\'s with its method, '
                             'grouped_sides on point feet and flat feet with F/T, reduced on '
                             'flat feet with sole sensors; other methods: standard; '
                             'primitives takes none): auto = per link group the components '
                             '(mass, COM along the leg, 3-D COM) the data determine, chosen by '
                             'an F-test and printed as a table (not the default yet: on the '
                             'demo and on Talos it is less accurate than the fixed sets, see '
                             'docs/identification.md); '
                             'reduced = Wu & Gao\'s axial COM and mass per link group, legs '
                             'alike; grouped = mass and 3-D COM per link group, legs mirrored; '
                             'grouped_sides = the same per side; base = torque_ls plain LS')
    parser.add_argument('--auto-criterion', choices=('f_test', 'validation'),
                        help='how --param-set auto chooses (default f_test: F-test on the '
                             'effective number of rows; validation: held-out blocks)')
    parser.add_argument('--auto-levels', metavar='GROUP=LEVEL,...',
                        help='--param-set auto with these levels instead of choosing them '
                             '(e.g. trunk=mass+com,leg_3=axial; a table an earlier run '
                             'printed); groups not named stay at CAD')
    parser.add_argument('--rows', choices=('zmp', 'torque', 'floating'),
                        help='rows for sdp / primitives (default zmp; refused with the other '
                             'methods, which fit their own rows)')
    parser.add_argument('--reg', type=_reg, help='regularisation weight toward CAD, or '
                        "'auto' (zmp_newton: chosen on a held-out slice; the default on the "
                        'grouped sets)')
    parser.add_argument('--total-mass', type=float, help='total mass [kg] (default: mean '
                        'vertical force / (g + mean vertical COM acceleration))')
    parser.add_argument('--cutoff-hz', type=float, default=6.0,
                        help='zero-phase low-pass on positions (joints, IMU orientation), forces '
                             'and efforts [Hz]')
    parser.add_argument('--step', type=int, default=0,
                        help='keep every step-th sample (default: down to about 100 Hz)')
    parser.add_argument('--zmp-source', default='auto', choices=('auto', 'fsr', 'wrench'))
    parser.add_argument('--no-imu', action='store_true',
                        help='assume the support sole exactly flat (no IMU roll/pitch)')
    parser.add_argument('--no-check', action='store_true', help='skip the excitation check')
    parser.add_argument('--base', default='auto', choices=('auto', 'support', 'contacts'),
                        help="floating-base state: 'support' (the support sole flat and still, "
                        "Wu & Gao 2021), 'contacts' (IMU orientation and rates, every stance "
                        "contact still: tall robots, point feet), 'auto' (contacts with point "
                        'feet or several feet loaded in 10 %% of the samples, else support)')
    parser.add_argument('--transition-s', type=_margin, default=0.0,
                        help="leave out samples this close to any foot's touch-down or "
                        "lift-off [s] (default 0: none; 'auto': 0.5 s, shorter when that would "
                        'keep less than half of the samples, e.g. a trot)')
    parser.add_argument('--min-contacts', type=int, default=0,
                        help='leave out samples with fewer feet in contact (a trot: 4 keeps '
                        'the four-foot phases; 0: none left out)')
    parser.add_argument('--base-acc', default='contacts', choices=('contacts', 'imu'),
                        help="the base's linear acceleration from the stance contacts' "
                        "kinematics or the IMU's accelerometer (fast gaits, e.g. a trot)")
    parser.add_argument('--contact-on-fraction', type=float, default=None,
                        help="a foot touches down above this fraction of the robot's weight "
                        "(default: the contact rule's, as the buffer's, 0.10) [-]")
    parser.add_argument('--contact-off-fraction', type=float, default=None,
                        help='a foot lifts off below this fraction of the weight (default '
                        "0.07; a foot whose sensor keeps a force in the air must read below "
                        'it) [-]')
    parser.add_argument('--known', action='append', default=[], metavar='NAME=VALUE',
                        help='a parameter measured otherwise, held fixed, in SI units (e.g. '
                             'a weighed foot: --known m_foot=1.26 [kg], --known '
                             'lc_foot=0.074 [m], or m_left_foot=1.3 with --param-set '
                             'grouped_sides); zmp_newton, or a linear-row method with '
                             '--param-set reduced/grouped/grouped_sides; repeatable')
    parser.add_argument('--quiet', action='store_true',
                        help='no progress bar on stderr (there is none when stderr is not a '
                             'terminal)')
    parser.add_argument('--foot-from-ft', action='store_true',
                        help='weigh the swinging feet with their ankle F/T sensors first and '
                             'hold the foot mass (the one mass the ZMP cannot see); needs the '
                             'raw ankle F/T topics in the bag; same methods as --known')


def _reg(text: str):
    """``--reg`` value: a number or 'auto'."""
    if text == 'auto':
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--reg expects a number or 'auto', got {text!r}")


def _margin(text: str):
    """``--transition-s`` value: a number of seconds >= 0, or 'auto' (None: chosen)."""
    if text == 'auto':
        return None
    try:
        value = float(text)
    except ValueError:
        value = float('nan')
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"--transition-s expects seconds >= 0 or 'auto', got "
                                         f'{text!r}')
    return value


def parse_known(items) -> dict:
    """``['m_foot=1.26', ...]`` -> ``{'m_foot': 1.26}``; BadInputError on a malformed item."""
    from legid_ros.core.errors import BadInputError
    known = {}
    for item in items:
        name, sep, value = item.partition('=')
        try:
            if not sep or not name.strip():
                raise ValueError
            known[name.strip()] = float(value)
        except ValueError:
            raise BadInputError(f'--known expects NAME=VALUE (e.g. m_foot=1.26), got {item!r}')
    return known


def method_options(args: argparse.Namespace) -> dict:
    """The options ``identify()`` gets from the command line (also those of the prepare
    step the prerequisite checks look at: ``zmp_source``, ``use_imu``, ``base``,
    ``base_acc``)."""
    opts = {'zmp_source': args.zmp_source, 'use_imu': not args.no_imu, 'base': args.base,
            'base_acc': args.base_acc}
    for name in ('param_set', 'rows', 'reg', 'total_mass'):
        if getattr(args, name) is not None:
            opts[name] = getattr(args, name)
    if getattr(args, 'auto_criterion', None):
        opts['auto_criterion'] = args.auto_criterion
    if getattr(args, 'auto_levels', None):
        from legid_ros.core.identification.parameters.auto.levels import parse_levels
        opts['levels'] = parse_levels(args.auto_levels)
    if args.no_check:
        opts['check'] = False
    known = parse_known(args.known)
    if known:
        opts['known'] = known
    if args.foot_from_ft:
        opts['foot_from_ft'] = True
    return opts
