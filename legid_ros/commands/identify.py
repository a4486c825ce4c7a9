"""``legid identify``: identify inertial parameters from a rosbag2 and write URDF, YAML, report.

Example::

    legid identify --bag run.mcap --robot biped --method zmp_newton --out out/ident

Writes ``<robot>_identified.urdf``, ``parameters.yaml`` (per-link mass, COM, inertia, the
standard vector, friction, the method's facts), ``report.md`` and ``zmp.png`` (measured vs
predicted ZMP; parameter table against CAD and, for synthetic bags, the truth).

What the method and options need (a parameter set the method runs on, primitive bodies in the
description, joint efforts, foot forces, IMU, ankle F/T topics) is checked right after the
arguments are parsed and the description loaded, from the bag's topic list in its
``metadata.yaml``: nothing is read before a missing prerequisite ends the command (exit 2).
A set that is not physically consistent is never written as a URDF: the YAML and the report
are written and say so at their top, and the command exits 3 (:data:`EXIT_INCONSISTENT`).
The options and exit statuses are in :mod:`legid_ros.commands.identify_options`.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Optional

from legid_ros.commands.identify_options import (  # noqa: F401  (add_arguments: the CLI's)
    EXIT_INCONSISTENT, add_arguments, method_options)


def _load(path: str, robot):
    """The recording at ``path`` (a bag or a Recording ``.npz``)."""
    from legid_ros.core.recording import Recording

    p = Path(path)
    if p.suffix == '.npz':
        return Recording.load_npz(p)
    from legid_ros.bag.recording_io import read_bag  # 'bag not found' for a missing bag
    return read_bag(p, robot)


def robot_defaults(args: argparse.Namespace, robot) -> Optional[str]:
    """Fill an omitted ``--method`` / ``--param-set`` with the robot's
    (:func:`legid_ros.core.identification.defaults.resolve`, the estimator node's rule);
    returns the line that says so (None when both were given)."""
    from legid_ros.core.identification.defaults import resolve

    if args.method and args.param_set:
        return None
    choice = resolve(robot, args.method, args.param_set)
    args.method, args.param_set = choice.method, choice.param_set
    return f'legid identify: {choice.line()}'


def check_prerequisites(args: argparse.Namespace, robot) -> dict:
    """Everything the method and options need that is known before the bags are read (the
    options, the description, the bags' topic lists); returns ``identify()``'s options.

    Raises:
        BadInputError: One line naming the option and the fix.
    """
    from legid_ros.core.identification.prerequisites import check_method, check_sensing

    chosen = robot_defaults(args, robot)
    opts = method_options(args)
    check_method(robot, args.method, opts, cli=True)
    from legid_ros.bag.sensing import sensing_of_bag

    sensing = sensing_of_bag(args.bag, robot)
    if sensing is not None:
        check_sensing(robot, args.method, opts, sensing, cli=True)
    if args.validate:  # the validation prepares the second bag for its ZMP only
        vsensing = sensing_of_bag(args.validate, robot)
        if vsensing is not None:
            check_sensing(robot, 'zmp_qp', {k: opts[k] for k in ('zmp_source', 'use_imu')},
                          vsensing, cli=True)
    if chosen:  # said once the choice is known to work: a refusal stays one line
        print(chosen, file=sys.stderr)
    return opts


#: Stages of ``legid identify``, in order (the progress bar's steps).
STAGES = ('read', 'prepare', 'identify', 'write', 'validate', 'report')


class _Stages:
    """One progress bar over :data:`STAGES` on stderr, showing the running stage; silent
    when ``quiet`` or stderr is not a terminal."""

    def __init__(self, quiet: bool):
        from tqdm import tqdm
        self.bar = tqdm(total=len(STAGES), desc='identify', file=sys.stderr, leave=False,
                        disable=quiet or not sys.stderr.isatty(),
                        bar_format='{desc}: {n}/{total} stages |{bar}| {elapsed}')

    def start(self, stage: str) -> None:
        """Name the stage that now runs."""
        self.bar.set_description(f'identify: {stage}')

    def done(self) -> None:
        """The running stage is finished."""
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()


def run(args: argparse.Namespace) -> int:
    """Identify, write the URDF, YAML and report; print a summary.

    The bag is read by a second process (:class:`legid_ros.core.identification.validation.
    HeldOutValidation`) while this one imports the identification; that process keeps the
    held-out part and prepares it while this one identifies.
    """
    from functools import partial

    from legid_ros.core.identification.validation import HeldOutValidation
    from legid_ros.core.robot import load_robot

    stages = _Stages(getattr(args, 'quiet', False))
    worker = None
    try:
        stages.start('read')
        robot = load_robot(args.robot)
        opts = check_prerequisites(args, robot)
        worker = HeldOutValidation(robot)
        worker.start_load(partial(_read_split, args, robot, opts))
        import legid_ros.core.identification.api  # noqa: F401  (meanwhile: the solvers, scipy)
        train = worker.training()
        stages.done()
        return _identify(args, robot, train, worker, stages, opts)
    finally:
        if worker is not None:
            worker.close()
        stages.close()


def _read_split(args, robot, opts: dict):
    """``(training recording, held-out recording)``: the bag's first 75 % and last 25 %, or
    the bag and ``--validate``; a recording whose sensors only its data tells is checked."""
    recs = {'bag': _load(args.bag, robot)}
    if args.validate:
        recs['validate'] = _load(args.validate, robot)
    _check_recordings(args, robot, opts, recs)
    rec = recs.pop('bag')
    if 'validate' in recs:
        return rec, recs.pop('validate')
    cut = int(0.75 * rec.n)
    return rec.slice(0, cut), rec.slice(cut, rec.n)


def _check_recordings(args, robot, opts: dict, recs: dict) -> None:
    """The prerequisites of a recording whose sensors only its data tells (a Recording
    ``.npz``, or a bag without a topic list): checked before any sample is prepared."""
    from legid_ros.bag.sensing import sensing_of_bag
    from legid_ros.core.identification.prerequisites import Sensing, check_sensing

    for key, path in (('bag', args.bag), ('validate', args.validate)):
        if key in recs and sensing_of_bag(path, robot) is None:
            method, sub = (args.method, opts) if key == 'bag' else (
                'zmp_qp', {k: opts[k] for k in ('zmp_source', 'use_imu')})
            sensing = Sensing.of_recording(recs[key], f'recording {path}')
            check_sensing(robot, method, sub, sensing, cli=True)


def _identify(args, robot, train, validation, stages: _Stages, opts: dict) -> int:
    """The stages after the read (see :func:`run`): ``train`` is the training recording,
    ``validation`` holds the held-out one; ``opts`` from :func:`check_prerequisites`."""
    from legid_ros.core.identification.prepare import PrepareOptions
    from legid_ros.core.identification.threads import limit_blas_threads

    limit_blas_threads(1)
    stages.start('prepare')
    # identification rate: about 100 Hz (every step-th sample, after the zero-phase low-pass
    # at the recording rate, whose cut-off of a few Hz makes the decimation alias-free)
    step = args.step or max(1, int(round(train.rate / 100.0)))
    prep = PrepareOptions(cutoff_hz=args.cutoff_hz, step=step, zmp_source=args.zmp_source,
                          use_imu=not args.no_imu, base=args.base,
                          transition_s=args.transition_s, min_contacts=args.min_contacts,
                          base_acc=args.base_acc, **{
                              k: getattr(args, k) for k in ('contact_on_fraction',
                                                            'contact_off_fraction')
                              if getattr(args, k) is not None})
    validation.prepare(prep)  # the held-out part, prepared beside this process
    data = {'train': train}
    del train  # the full-rate recording lives in ``data`` until prepared
    return _fit_and_write(args, robot, stages, opts, data, prep, validation)


def _fit_and_write(args, robot, stages: _Stages, opts: dict, data: dict, prep,
                   validation) -> int:
    """Prepare the training samples, identify, write the URDF and YAML, then the held-out
    validation and the report (:class:`legid_ros.core.identification.validation.
    HeldOutValidation`); print the summary and return the exit status. ``data`` ('train': the
    training recording) is emptied once the samples are prepared."""
    from legid_ros.core.atomic_files import safe_stem
    from legid_ros.core.errors import InconsistentParametersError
    from legid_ros.core.identification.api import identify
    from legid_ros.core.identification.prepare import prepare
    from legid_ros.core.identification.report import CONSISTENT_ADVICE
    from legid_ros.core.inertial import get_parameters
    from legid_ros.core.urdf_io import (describe_inconsistency, identified_suffix,
                                        write_parameter_yaml, write_urdf)

    train = data.pop('train')
    samples = prepare(train, robot, prep)
    choice = samples.choice
    pi_cad = train.pi_cad if train.pi_cad is not None else get_parameters(robot.model)
    pi_true, cad_given = train.pi_true, train.pi_cad is not None
    del train  # the recording at the full rate is no longer needed
    stages.done()
    stages.start('identify')
    known = opts.get('known', {})
    # the prepare step's options were used above; identify() gets the method's own
    opts = {k: v for k, v in opts.items()
            if k not in ('zmp_source', 'use_imu', 'base', 'base_acc')}
    if cad_given:
        opts['pi_cad'] = pi_cad  # the recording's CAD (else the robot model's)
    result = identify(None, robot, args.method, samples=samples, **opts)
    stages.done()
    stages.start('write')
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    facts = _facts(args, robot, result, known)
    facts['prepare'] = dataclasses.asdict(prep)  # how the samples were made (reproducible)
    if choice is not None:  # what the contacts decided for the options left to them
        facts['prepare'].update(base=choice.base, transition_s=choice.transition_s)
        facts['preparation_choice'] = choice.as_dict()
    yaml_path = write_parameter_yaml(robot.model, result.pi, out / 'parameters.yaml', facts,
                                     uncertainty=result.uncertainty, advice=CONSISTENT_ADVICE,
                                     physical=result.physical)
    urdf_path = out / f'{safe_stem(robot.name)}_identified{identified_suffix(robot.urdf_path)}'
    try:
        urdf = write_urdf(robot.urdf_path, robot.model, result.pi, urdf_path,
                          comment=f'identified by legid identify --method {args.method}')
    except InconsistentParametersError as exc:  # the YAML and the report say so at their top
        urdf, refused = None, exc.report
        if urdf_path.exists():  # an earlier run's URDF would pass for this one's
            urdf_path.unlink()
    stages.done()
    stages.start('validate')
    checked = validation.report(out, result, pi_cad, pi_true)
    report = checked.report
    stages.done()
    stages.start('report')
    stages.done()
    stages.close()
    dev, dev_cad = checked.dev_mm['identified'], checked.dev_mm['CAD']
    print(result.summary())
    if choice is not None:
        print(f'samples: {choice.text()}')
    if result.info.get('auto_selection'):
        from legid_ros.core.identification.parameters.auto.report import selection_lines
        print('\n'.join(selection_lines(result.info['auto_selection'])))
    elif result.info.get('levels'):
        print(f'parameter set given: {result.info["levels"]}')
    if result.info.get('reg_chosen') is not None:
        print(f'regularisation weight chosen on a held-out slice: {result.info["reg_chosen"]:g} '
              'm^2 (' + ', '.join(f'{g:g}: {v:.3f} mm' for g, v in zip(
                  result.info['reg_grid'], result.info['reg_scores_mm'])) + ')')
    print(f'validation ZMP deviation: identified {dev:.2f} mm, CAD {dev_cad:.2f} mm')
    if urdf is None:
        print(f'wrote {yaml_path}, {report}')
        print(f'legid identify: URDF not written: the identified set is not physically '
              f'consistent ({describe_inconsistency(refused)}); {CONSISTENT_ADVICE}',
              file=sys.stderr)
        return EXIT_INCONSISTENT
    print(f'wrote {urdf}, {yaml_path}, {report}')
    return 0


def _facts(args, robot, result, known) -> dict:
    """The method's facts written into ``parameters.yaml``."""
    extra = {'method': args.method, 'total_mass_kg': float(result.total_mass),
             'condition_number': float(result.condition_number),
             'residual_rms': float(result.residual_rms), 'n_samples': int(result.n_samples),
             'dropped': {k: int(v) for k, v in result.dropped.items()},
             'consistent': bool(result.consistency.ok), 'identifiable': result.identifiable}
    if known:
        extra['known'] = dict(known)  # held fixed, not identified
    if 'foot_from_ft' in result.info:
        extra['foot_from_ft'] = result.info['foot_from_ft']  # feet weighed by the ankle F/T
    if result.info.get('levels') is not None:  # the auto set's components per link group
        extra['param_set_levels'] = dict(result.info['levels'])
    if result.info.get('auto_selection'):  # the set chosen by the data, its tests
        extra['param_set_selection'] = result.info['auto_selection']
    if result.info.get('reg_chosen') is not None:  # weight toward CAD chosen from the data
        extra['regularisation'] = {k: result.info[k] for k in (
            'reg_chosen', 'reg_grid', 'reg_scores_mm', 'reg_held_out_fraction', 'reg_rule')}
    if result.friction is not None:
        nj = result.friction.size // 2
        extra['friction'] = {n: {'viscous_Nms_per_rad': float(result.friction[j]),
                                 'coulomb_Nm': float(result.friction[nj + j])}
                             for j, n in enumerate(robot.actuated_joint_names[:nj])}
    return extra
