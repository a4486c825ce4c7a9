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
excitation's numbers, :data:`~legid_ros.core.excitation.motion.SAFE`), then climbs the joint
sweeps of the swing legs (``swing_joint``, :data:`JOINT_SWEEPS`) while they stay feasible, then
the amplitudes of swing targets around the feet's homes (:data:`AMPLITUDES`) likewise, both at
the first of :data:`SWING_TIMES` (the sweeps gain most on the biped and Solo12; on Talos, whose
legs meet each other and whose thighs meet the pelvis and the locked arms, the sweeps stay
small and the two families score alike). Then a (1+1) evolution strategy perturbs the best
candidate's numbers (sweep or amplitudes, speed, trunk motion, standing share, seed) and keeps a
perturbation that is feasible and predicted more informative (local search), within
``budget_s``. The best feasible candidate is returned (never an infeasible one when a feasible
one was seen); when none is feasible, the first one tried (the safe amplitudes) with its
violations.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import List, Optional

import numpy as np

from legid_ros.core.errors import BadInputError, SolverError
from legid_ros.core.excitation.ceiling import StaticCeiling, static_ceiling
from legid_ros.core.excitation.collision import SelfCollision
from legid_ros.core.excitation.constraints import ConstraintReport, Limits, check, knot_check
from legid_ros.core.excitation.information import Prediction, predict
from legid_ros.core.excitation.motion import SAFE, MotionParams, min_duration_s, plan_motion
from legid_ros.core.excitation.trajectory import DenseTrajectory, sample_plan
from legid_ros.core.inertial import get_parameters
from legid_ros.core.robot import Robot
from legid_ros.core.sim.described.excitation import StandingPlan, plan_standing

#: Amplitude factors the search climbs through; swing times [s] (the ladders use the first)
AMPLITUDES = (1.0, 2.0, 3.0, 4.0, 6.0, 8.0)
#: Joint sweeps of the swing legs the search climbs through [rad] (lift and trunk motion at
#: twice the safe ones)
JOINT_SWEEPS = (0.4, 0.8, 1.2, 1.6, 2.0)
SWEEP_LIFT_FACTOR = 2.0
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
        if not (np.isfinite(self.dt) and self.dt > 0):
            raise BadInputError(f'the constraint grid dt must be > 0 s, got {self.dt!r}')
        shortest = min_duration_s(self.robot, replace(SAFE, swing_s=min(SWING_TIMES)))
        if not np.isfinite(self.duration_s):
            raise BadInputError(f'duration must be a finite number of seconds, got '
                                f'{self.duration_s!r}')
        if self.duration_s < shortest - 1e-9:
            raise BadInputError(f'duration {self.duration_s!r} s is too short for '
                                f'{len(self.robot.feet)} feet: give at least {shortest:.0f} s '
                                '(each foot shifted to, lifted, swung to two targets, set down)')
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
        ceiling: What any quasi-static motion could determine of the parameter set
            (:func:`legid_ros.core.excitation.ceiling.static_ceiling`): the designed motion's
            determined count above it comes from its accelerations.
    """

    best: Candidate
    baseline: Optional[Candidate]
    tried: List[dict]
    design_s: float
    pi_cad: Optional[np.ndarray] = None
    ceiling: Optional[StaticCeiling] = None


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
                           check=knot_check(robot, problem.collision, problem.limits),
                           free=lambda q: not problem.collision.colliding(q))
    traj = sample_plan(robot, plan, problem.pi_cad, problem.dt)
    cons = check(robot, plan, traj, problem.collision, problem.limits)
    pred = predict(robot, traj, problem.pi_cad, problem.param_set, problem.sigma_m,
                   problem.rate_hz)
    return Candidate(params, plan, traj, cons, pred)


def design(problem: ExcitationProblem, budget_s: Optional[float] = 90.0, seeds: int = 40,
           progress=None) -> ExcitationDesign:
    """The most informative feasible motion found within ``budget_s`` [s] (module docstring);
    ``seeds``: most local-search perturbations. ``budget_s`` None: no time limit, every
    candidate of the search is tried, so the result does not depend on the machine's speed
    (the search's random draws are seeded).

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
    search = _Search(problem, say, lambda: budget_s is not None
                     and time.perf_counter() - t0 > budget_s)
    search.run(SAFE.scaled(1.0, swing_rpy=SWING_RPY_PER_STEP, swing_s=SWING_TIMES[0],
                           stand_share=problem.stand_share))
    kt = SWEEP_LIFT_FACTOR
    search.climb([[replace(SAFE, swing_joint=a, swing_s=SWING_TIMES[0],
                           stand_share=problem.stand_share, swing_z=kt * SAFE.swing_z,
                           trunk_rpy=kt * SAFE.trunk_rpy, trunk_z=kt * SAFE.trunk_z)]
                  for a in JOINT_SWEEPS])
    search.climb([[SAFE.scaled(k, swing_rpy=SWING_RPY_PER_STEP * k, swing_s=SWING_TIMES[0],
                               stand_share=problem.stand_share,
                               trunk_rpy=SAFE.trunk_rpy * min(k, TRUNK_MAX_FACTOR),
                               trunk_z=SAFE.trunk_z * min(k, TRUNK_MAX_FACTOR))]
                  for k in AMPLITUDES[1:]])
    rng = np.random.default_rng(2626)
    for step in range(1, seeds + 1):  # local search: (1+1) perturbations of the best
        if search.best is None or search.best.params is None or search.over():
            break
        search.run(perturb(search.best.params, rng, step))
    best = search.best or search.fallback
    if best is None:
        raise SolverError('no excitation could be planned for this robot', 'excitation')
    return ExcitationDesign(best, baseline, search.tried, time.perf_counter() - t0,
                            problem.pi_cad, static_ceiling(problem.robot, problem.pi_cad,
                                                           problem.param_set))


def perturb(p: MotionParams, rng, step: int) -> MotionParams:
    """A random neighbour of ``p`` (local search): sweep or amplitudes x exp(N(0, 0.2)), a
    swing time of 1.2-2.5 s, trunk motion x exp(N(0, 0.3)) (at most ``TRUNK_MAX_FACTOR``
    times the safe one), standing share +- 0.05 within 0.1-0.3, seed ``step``."""
    grow = float(np.exp(rng.normal(0.0, 0.2)))
    kt = min(float(np.exp(rng.normal(0.0, 0.3))) * p.trunk_rpy / SAFE.trunk_rpy,
             TRUNK_MAX_FACTOR)
    changes = dict(swing_s=float(rng.choice([1.2, 1.6, 2.0, 2.5])),
                   trunk_rpy=kt * SAFE.trunk_rpy, trunk_z=kt * SAFE.trunk_z,
                   stand_share=float(np.clip(p.stand_share + rng.uniform(-0.05, 0.05), 0.1,
                                             0.3)), seed=step)
    if p.swing_joint > 0:
        changes['swing_joint'] = float(np.clip(grow * p.swing_joint, 0.2, JOINT_SWEEPS[-1]))
    else:
        changes.update(swing_xy=grow * p.swing_xy, swing_z=grow * p.swing_z,
                       swing_rpy=grow * p.swing_rpy)
    return replace(p, **changes)


class _Search:
    """The candidates tried, the best feasible one and the first one (the fallback)."""

    def __init__(self, problem: ExcitationProblem, say, over):
        self.problem, self.say, self._over = problem, say, over
        self.best: Optional[Candidate] = None
        self.fallback: Optional[Candidate] = None
        self.tried: List[dict] = []

    def over(self) -> bool:
        """Budget spent, and something feasible found."""
        return self._over() and self.best is not None

    def run(self, params: MotionParams) -> Optional[Candidate]:
        """Evaluate one candidate; keep it when feasible and better (soft count)."""
        try:
            cand = evaluate(self.problem, params)
        except (SolverError, BadInputError) as exc:
            self.tried.append({'params': params.as_dict(), 'error': str(exc)})
            return None
        self.tried.append(cand.summary())
        c = cand.constraints
        self.say(f'sweep {params.swing_joint:.2f} rad, reach {params.swing_xy:.3g}, swing '
                 f'{params.swing_s:g} s, seed {params.seed}: feasible {cand.feasible}, '
                 f'predicted {100 * cand.prediction.fraction:.0f} % (soft '
                 f'{cand.prediction.soft_count:.1f}), ZMP margin '
                 f'{1e3 * c.zmp_margin_min_m:.1f} mm, collisions {c.self_collisions}, '
                 f'clearance {1e3 * c.clearance_min_m:.0f} mm, friction ratio '
                 f'{c.friction_ratio_max:.2f}')
        self.fallback = self.fallback or cand
        if cand.feasible and (self.best is None or cand.prediction.soft_count
                              > self.best.prediction.soft_count):
            self.best = cand
        return cand

    def climb(self, levels) -> bool:
        """Levels of candidates in order while a level has a feasible one; whether any had."""
        any_feasible = False
        for level in levels:
            feasible = False
            for params in level:
                if self.over():
                    return any_feasible
                cand = self.run(params)
                feasible |= bool(cand is not None and cand.feasible)
            any_feasible |= feasible
            if not feasible:
                break
        return any_feasible
