"""Whole-body excitation design: the problem, then a search for the most informative safe motion.

The problem (:class:`ExcitationProblem`) is built apart from its solution: the robot and its CAD
parameters, the duration, the parameter set whose identifiability is maximised, the limits
(:class:`legid_ros.core.excitation.constraints.Limits`) and the self-collision model. A
candidate is a :class:`~legid_ros.core.excitation.motion.MotionParams`; its motion is planned
on the CAD model (random targets that fail the knot check are drawn again), sampled on a dense
grid, checked (:func:`legid_ros.core.excitation.constraints.check`) and scored by its predicted
identifiability (:func:`legid_ros.core.excitation.information.predict`: the count of determined
combinations, made smooth).

The search (:func:`design`) starts from what the robot is known to do safely (the standing
excitation's numbers, :data:`~legid_ros.core.excitation.motion.SAFE`) and grows the amplitudes
step by step, at a few swing speeds each, while something stays feasible (sampling); then
other random targets of the best candidate are tried (local search), within ``budget_s``.
The best feasible candidate is returned; when none is feasible, the first one tried (the
safe amplitudes) with its violations.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import List, Optional

import numpy as np

from legid_ros.core.errors import BadInputError, SolverError
from legid_ros.core.excitation.collision import SelfCollision
from legid_ros.core.excitation.constraints import ConstraintReport, Limits, check, knot_check
from legid_ros.core.excitation.information import Prediction, predict
from legid_ros.core.excitation.motion import SAFE, MotionParams, plan_motion
from legid_ros.core.excitation.trajectory import DenseTrajectory, sample_plan
from legid_ros.core.inertial import get_parameters
from legid_ros.core.robot import Robot
from legid_ros.core.sim.described.excitation import StandingPlan, plan_standing

#: Amplitude factors the search climbs through, and the swing times [s] tried at each
AMPLITUDES = (1.0, 2.0, 3.0, 4.0, 6.0, 8.0)
SWING_TIMES = (2.0, 1.2)
SWING_RPY_PER_STEP = 0.1  # [rad] swing-sole tilt per amplitude factor
#: The trunk's tilt and height amplitudes grow with the others up to this factor of the safe
#: ones (0.12 rad, 6 %): Solo12's point feet slid 13 mm in MuJoCo under 0.48 rad trunk tilts,
#: 3.7 mm under 0.14 rad, with the same leg swings
TRUNK_MAX_FACTOR = 2.0


@dataclass
class ExcitationProblem:
    """What to design (see the module docstring).

    Attributes:
        robot: Floating robot with feet and link groups.
        duration_s: Length of the motion [s].
        param_set: Core whose identifiability is maximised ('grouped_sides', 'grouped',
            'reduced').
        limits: Margins of the constraints.
        sigma_m: ZMP error of a decorrelated sample [m] (prediction; with ``rate_hz`` set so
            the predicted count of determined combinations of a biped run matched its
            identified one, 17 of 27 measured against 8 with 1.5 mm at 5 Hz).
        rate_hz: Decorrelated ZMP samples per second [Hz] (prediction).
        dt: Grid of the constraint check [s].
        stand_share: Share of the time standing on every foot [-].
    """

    robot: Robot
    duration_s: float = 120.0
    param_set: str = 'grouped_sides'
    limits: Limits = field(default_factory=Limits)
    sigma_m: float = 7e-4
    rate_hz: float = 10.0
    dt: float = 0.02
    stand_share: float = 0.2
    pi_cad: Optional[np.ndarray] = None
    collision: Optional[SelfCollision] = None

    def __post_init__(self):
        if not self.robot.floating or not self.robot.feet:
            raise BadInputError('the excitation design needs a floating robot with feet')
        if not self.robot.link_groups and self.param_set != 'reduced':
            raise BadInputError(f'robot {self.robot.name!r} has no link_groups: the '
                                f'{self.param_set} set is not defined')
        if self.pi_cad is None:
            self.pi_cad = get_parameters(self.robot.model)


@dataclass
class Candidate:
    """One evaluated motion."""

    params: Optional[MotionParams]
    plan: StandingPlan
    trajectory: DenseTrajectory
    constraints: ConstraintReport
    prediction: Prediction

    @property
    def feasible(self) -> bool:
        """All constraints met."""
        return bool(self.constraints.ok)

    def summary(self) -> dict:
        """Plain form (no arrays)."""
        return {'params': self.params.as_dict() if self.params else 'standing',
                'feasible': self.feasible, 'fraction_predicted': self.prediction.fraction,
                'soft_count': self.prediction.soft_count,
                'zmp_margin_min_m': self.constraints.zmp_margin_min_m,
                'self_collisions': self.constraints.self_collisions,
                'limit_violations': self.constraints.limit_violations,
                'friction_ratio_max': self.constraints.friction_ratio_max,
                'point_foot_turn_max_rad': self.constraints.point_foot_turn_max_rad}


@dataclass
class ExcitationDesign:
    """Result of :func:`design`.

    Attributes:
        best: The chosen candidate.
        baseline: The standing excitation of the same duration, evaluated the same way.
        tried: Every candidate's summary, in order.
        design_s: Wall time of the search [s].
        pi_cad: CAD standard parameters the design used.
    """

    best: Candidate
    baseline: Optional[Candidate]
    tried: List[dict]
    design_s: float
    pi_cad: Optional[np.ndarray] = None


def known_motion(robot: Robot, duration_s: float) -> np.ndarray:
    """Knots (K, nq) of the standing excitation: the motion the robot is known to make (its
    touching collision pairs are the CAD's, not the design's)."""
    return plan_standing(robot, max(duration_s, 60.0)).q


def evaluate(problem: ExcitationProblem, params: Optional[MotionParams]) -> Candidate:
    """Plan, sample, check and score one candidate (``None``: the standing excitation)."""
    robot = problem.robot
    if problem.collision is None:
        problem.collision = SelfCollision.build(robot, known_motion(robot, problem.duration_s),
                                                problem.limits.collision_margin_m)
    if params is None:
        plan = plan_standing(robot, problem.duration_s)
    else:
        plan = plan_motion(robot, problem.duration_s, params,
                           check=knot_check(robot, problem.collision, problem.limits))
    traj = sample_plan(robot, plan, problem.pi_cad, problem.dt)
    cons = check(robot, plan, traj, problem.collision, problem.limits)
    pred = predict(robot, traj, problem.pi_cad, problem.param_set, problem.sigma_m,
                   problem.rate_hz)
    return Candidate(params, plan, traj, cons, pred)


def design(problem: ExcitationProblem, budget_s: float = 90.0, seeds: int = 2,
           progress=None) -> ExcitationDesign:
    """The most informative feasible motion found within ``budget_s`` [s] (module docstring).

    Raises:
        SolverError: Not even the safe motion can be planned.
    """
    t0 = time.perf_counter()
    say = progress or (lambda msg: None)
    try:
        baseline = evaluate(problem, None)
    except (SolverError, BadInputError) as exc:
        say(f'standing excitation not evaluated: {exc}')
        baseline = None
    best: Optional[Candidate] = None
    tried: List[dict] = []
    fallback: Optional[Candidate] = None

    def run(params: MotionParams) -> Optional[Candidate]:
        nonlocal best, fallback
        try:
            cand = evaluate(problem, params)
        except (SolverError, BadInputError) as exc:
            tried.append({'params': params.as_dict(), 'error': str(exc)})
            return None
        tried.append(cand.summary())
        say(f'x{params.swing_xy / SAFE.swing_xy:.3g} swing {params.swing_s:g} s seed '
            f'{params.seed}: feasible {cand.feasible}, predicted '
            f'{100 * cand.prediction.fraction:.0f} % (soft {cand.prediction.soft_count:.1f}), '
            f'ZMP margin {1e3 * cand.constraints.zmp_margin_min_m:.1f} mm, collisions '
            f'{cand.constraints.self_collisions}, friction ratio '
            f'{cand.constraints.friction_ratio_max:.2f}, point-foot turn '
            f'{cand.constraints.point_foot_turn_max_rad:.2f} rad')
        fallback = fallback or cand
        if cand.feasible and (best is None or cand.prediction.soft_count
                              > best.prediction.soft_count):
            best = cand
        return cand

    def over() -> bool:
        return time.perf_counter() - t0 > budget_s and best is not None

    for k in AMPLITUDES:  # sampling: amplitude x speed, while something stays feasible
        feasible = False
        for swing_s in SWING_TIMES:
            if over():
                break
            kt = min(k, TRUNK_MAX_FACTOR)
            cand = run(SAFE.scaled(k, swing_rpy=SWING_RPY_PER_STEP * k, swing_s=swing_s,
                                   stand_share=problem.stand_share,
                                   trunk_rpy=SAFE.trunk_rpy * kt, trunk_z=SAFE.trunk_z * kt))
            feasible |= bool(cand is not None and cand.feasible)
        if not feasible or over():
            break
    for seed in range(1, seeds + 1):  # local search: other random targets of the best
        if best is None or best.params is None or over():
            break
        run(replace(best.params, seed=best.params.seed + seed))
    if best is None:
        best = fallback
    if best is None:
        raise SolverError('no excitation could be planned for this robot', 'excitation')
    return ExcitationDesign(best, baseline, tried, time.perf_counter() - t0, problem.pi_cad)
