"""Choosing the levels of the auto set (:mod:`.auto`) from the data: forward selection.

Start from the smallest model (every unit at CAD, the heaviest unit's mass taking up the
total-mass equality, which leaves it no freedom) and, at every step, try each unit with one
more component (:data:`.auto.COMPONENTS`: its mass; its COM shift along the leg, or its 3-D
COM, which then replaces the axial shift; with ``inertia=True`` its inertia). Each candidate
is fitted (Newton on the rows' normal equations, a negligible pull toward CAD) and compared
with the current model:

- ``criterion='f_test'``: Zhu & Zhang's F-test for nested least-squares models,
  ``F = ((RSS_small - RSS_big) / dp) / (RSS_big / (n_eff - p_big))`` with ``p_big`` the big
  model's free parameters (the mass equality counted) and ``n_eff`` the *effective* number of
  independent rows: filtered rows at 100 Hz are strongly correlated, and with ``n`` rows every
  component would look significant. ``n_eff = sum_g n_g / tau_g`` over the row groups (ZMP x
  and y, each joint), ``tau`` the integrated autocorrelation time of the group's whitened
  residual under the largest model without inertia (:func:`.auto_stats.effective_sample_size`). The
  candidate with the smallest p-value (largest ``F`` on a tie, the fewer parameters on a tie
  of both) is accepted while that p-value, times the number of candidates of the step
  (Bonferroni), stays below ``alpha``.
- ``criterion='validation'``: the models are fitted on the first 75 % of the rows and scored
  on the contiguous last 25 % cut into blocks; the candidate with the largest mean held-out
  decrease is accepted while that decrease exceeds ``z`` standard errors of the per-block
  decreases (a paired test over the blocks, which are far apart compared with ``tau``).

The 3-D COM of a unit with a leg axis is taken only when it fits significantly better than
the axial shift in its place (the same nested test, ``dp = 2``): from the smallest set up, so
that a lateral COM the data barely see stays at CAD instead of taking up other errors. A
candidate is also *plausible* only when its unit's mass and COM stay within ``MAX_SPREAD``
prior spreads of CAD.

When the data reject the current model (a single move passes the test) but every move they
want is implausible alone (a trunk's COM taking up the legs' errors, 70 mm from CAD on a
MuJoCo biped of the honesty bench, where the selection stopped with the trunk's COM and the
thighs at CAD and a residual so correlated that its uncertainty had 3 blocks), the step tries
each pair of moves
on two units: the best pair that passes the same test (Bonferroni over the pairs), is
plausible and moves what each adds beyond its tolerance is accepted (both tests record it,
``paired_with``; a 3-D COM in it again tested against the axial shift in its place).

A component must also *matter*: a candidate is accepted only when the fit moves what it adds
beyond a tolerance (``min_mass_pct`` of the unit's CAD mass, ``min_com_mm`` of its COM,
``min_inertia_pct`` of its largest CAD moment). With long runs every systematic error of the
data (filter lag on the accelerations, noisy regressors that shrink the fit) is
"significant"; changes smaller than these tolerances are what such errors produce, and they
are left at CAD.

When another candidate of the same group, not merely a larger level holding it, fits within
``ALIKE_CHI2`` noise variances of the one accepted (e.g. a thigh's mass and its COM along the
leg, which the ZMP barely tells apart), the accepted test names it (``alike``) and the group
takes the union of the two (``mass+axial``): the data chose the group, not between the two,
and the final fit's pull toward CAD splits what the data cannot (a union with the 3-D COM is
again tested against the axial shift in its place).

Every test is kept (:class:`Selection`): per unit the level chosen and the statistic, p-value
(or held-out decrease) of each level tried.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np

from legid_ros.core.errors import BadInputError
from legid_ros.core.identification.parameters.auto.fit import Problem, fit, residual
from legid_ros.core.identification.parameters.auto.levels import (AutoSet, holds, level_name,
                                                           parse_level)
from legid_ros.core.identification.parameters.auto.stats import (Test,
                                                                 effective_sample_size,
                                                                 nested_test)
from legid_ros.core.identification.rows.linear import Rows, fold_rows, group_weights
from legid_ros.core.robot import Robot

MIN_MASS_PCT = 1.0  # smallest mass change that matters [% of CAD]
MIN_COM_MM = 1.0  # smallest COM change that matters [mm]
MIN_INERTIA_PCT = 10.0  # smallest inertia change that matters [% of the largest CAD moment]
ALIKE_CHI2 = 3.84  # RSS gap below which two candidates fit alike [noise variances] (chi2 95 %)
#: Largest change of a unit's mass or COM from CAD a candidate may fit [prior spreads: the
#: sets' ``mass_scale`` x CAD mass, ``com_scale``]; beyond it the fit is taking up an error
#: elsewhere (a 2 kg hip link's COM moved 100 mm to the box's edge in place of the trunk's)
MAX_SPREAD = 3.0
#: Whether a step may move two units at once when every significant single move is
#: implausible (:func:`select_levels`)
PAIRS = True
HELD_OUT_FRACTION = 0.25
HELD_OUT_BLOCKS = 8


@dataclass
class Selection:
    """Outcome of :func:`select_levels`.

    Attributes:
        levels: Unit -> level chosen.
        criterion: 'f_test' or 'validation'.
        tests: Every candidate tried, in order.
        n_rows: Rows behind the fits.
        n_eff: Effective number of independent rows (f_test).
        tau: Integrated autocorrelation time per row group [rows of the group].
        alpha: Level of the test (f_test) or ``z`` (validation).
        fits: Number of models fitted.
    """

    levels: Dict[str, str]
    criterion: str
    tests: List[Test] = field(default_factory=list)
    n_rows: int = 0
    n_eff: float = 0.0
    tau: List[float] = field(default_factory=list)
    alpha: float = 0.0
    fits: int = 0

    def table(self) -> List[dict]:
        """Per unit: level chosen and the last test of each level tried above the start."""
        out = []
        for unit, level in self.levels.items():
            tried: Dict[str, Test] = {}
            for t in self.tests:
                if t.unit == unit:
                    tried[t.level_to] = t
            out.append({'unit': unit, 'chosen': level, 'tests': [
                {'level': lv, 'dp': t.dp, 'statistic': t.statistic, 'p_value': t.p_value,
                 'effect': t.effect, 'accepted': t.accepted, 'alike': list(t.alike),
                 **({'paired_with': t.paired_with} if t.paired_with else {})}
                for lv, t in tried.items()]})
        return out

    def as_info(self) -> dict:
        """Plain form for ``IdentResult.info`` and the result YAML."""
        return {'criterion': self.criterion, 'levels': dict(self.levels),
                'alpha': self.alpha, 'n_rows': int(self.n_rows), 'n_eff': float(self.n_eff),
                'tau': [float(t) for t in self.tau], 'fits': int(self.fits),
                'table': self.table()}

    def lines(self) -> List[str]:
        """A table for the terminal
        (:func:`legid_ros.core.identification.parameters.auto.report.selection_lines`)."""
        from legid_ros.core.identification.parameters.auto.report import selection_lines
        return selection_lines(self.as_info())


def _moves(level: str, has_axis: bool, inertia: bool) -> List[str]:
    """The levels one component above ``level`` (the 3-D COM replacing an axial shift)."""
    have = parse_level(level)
    out = []
    if 'mass' not in have:
        out.append(have | {'mass'})
    if has_axis and not have & {'axial', 'com'}:
        out.append(have | {'axial'})
    if 'com' not in have:
        out.append((have - {'axial'}) | {'com'})
    if inertia and 'inertia' not in have:
        out.append(have | {'inertia'})
    return [level_name(c) for c in out]


def _axial_instead(test: Test, cands: list):
    """The candidate of the same step and unit that has the axial COM shift where ``test``
    has the 3-D COM (the same other components), when it matters; else None."""
    if 'com' not in parse_level(test.level_to):
        return None
    want = level_name((parse_level(test.level_to) - {'com'}) | {'axial'})
    for cand in cands:
        if cand[1].unit == test.unit and cand[1].level_to == want and cand[1].effect >= 1.0:
            return cand
    return None


def select_levels(rows: Rows, robot: Robot, total_mass: float,
                  pi_cad: Optional[np.ndarray] = None, criterion: str = 'f_test',
                  alpha: float = 0.01, z: float = 2.0, inertia: bool = False,
                  min_levels: Optional[Dict[str, str]] = None,
                  min_mass_pct: float = MIN_MASS_PCT, min_com_mm: float = MIN_COM_MM,
                  min_inertia_pct: float = MIN_INERTIA_PCT,
                  normal: Optional[Tuple[np.ndarray, np.ndarray, float, float, float]] = None
                  ) -> Selection:
    """Forward selection of the auto set's levels (see the module docstring).

    Args:
        rows: The method's rows (any kind; friction columns eliminated); None with
            ``normal``.
        robot: Robot with ``link_groups``.
        total_mass: Total-mass equality [kg].
        pi_cad: CAD standard parameters (default: the model's).
        criterion: 'f_test' or 'validation'.
        alpha: Level of the F-test (Bonferroni over the candidates of a step).
        z: Standard errors the held-out decrease must exceed (validation).
        inertia: Also try the inertia about the COM (slow balancing barely excites it, and
            its columns carry the noisiest signals, the accelerations: off by default).
        min_levels: Unit -> components always estimated (e.g. to hold a weighed mass).
        min_mass_pct, min_com_mm, min_inertia_pct: Tolerances a component's change must
            reach to be kept [% of CAD mass, mm, % of the largest CAD moment].
        normal: Instead of ``rows``, their folded statistics ``(H, h, bb, n_rows, n_eff)``
            (whitened, friction eliminated) and the effective number of rows, known otherwise
            (the online estimator keeps no rows); F-test only.

    Raises:
        BadInputError: Unknown criterion or level, too few rows.
    """
    if criterion not in ('f_test', 'validation'):
        raise BadInputError(f"unknown selection criterion {criterion!r} ('f_test', "
                            "'validation')")
    base = AutoSet(robot, {}, pi_cad)
    masses = {u: base.grouped.cad()[base.grouped.width * k] * sum(
        1 for mem in base.grouped.members if mem.unit == k) for k, u in enumerate(base.units)}
    anchor = max(masses, key=masses.get)
    levels = {u: 'none' for u in base.units}
    levels[anchor] = 'mass'
    for unit, level in (min_levels or {}).items():
        if unit in levels:
            levels[unit] = level_name(parse_level(levels[unit]) | parse_level(level))
    if normal is not None:
        if criterion != 'f_test':
            raise BadInputError('a selection on folded statistics is an F-test')
        hs, gs, bb, n_rows, n_eff = normal
        out = Selection(dict(levels), criterion, n_rows=int(n_rows), n_eff=float(n_eff),
                        alpha=alpha)
        prob, score_rows = Problem(None, normal=(hs, gs, bb, n_rows)), None
    else:
        npi = rows.A.shape[1] - rows.nf
        x_cad = np.concatenate([base.pi_cad, np.zeros(rows.nf)])
        if rows.nf:
            x_cad[npi:] = fold_rows(rows).eliminate(npi)[2](base.pi_cad)
        weights = group_weights(rows, x_cad)
        n_rows = rows.A.shape[0]
        per_sample = max(1, n_rows // max(rows.n_samples, 1))
        sel_all = np.ones(n_rows, bool)
        out = Selection(dict(levels), criterion, n_rows=n_rows, alpha=alpha if criterion ==
                        'f_test' else z)
    if normal is None and criterion == 'f_test':
        score_rows = None
        full = {u: 'mass+com' for u in base.units}
        prob = Problem(rows, weights, sel_all)
        _, pi_full, _ = fit(prob, AutoSet(robot, full, pi_cad), total_mass)
        res = residual(rows, weights, sel_all, prob, pi_full)
        out.fits += 1
        for g in np.unique(rows.group):
            n_g, tau_g = effective_sample_size(res[rows.group == g])
            out.n_eff += n_g
            out.tau.append(tau_g)
    elif normal is None:
        cut = per_sample * int(round((1 - HELD_OUT_FRACTION) * rows.n_samples))
        fit_rows = np.arange(n_rows) < cut
        score_rows = ~fit_rows
        prob = Problem(rows, weights, fit_rows)
        block = np.minimum((np.arange(n_rows - cut) * HELD_OUT_BLOCKS) // max(n_rows - cut, 1),
                           HELD_OUT_BLOCKS - 1)
    if criterion == 'f_test' and out.n_eff < 10:
        raise BadInputError(f'too few independent rows for the F-test (n_eff {out.n_eff:.1f})')

    grouped = base.grouped
    xg_cad, width = grouped.cad(), grouped.width
    tol = {'mass': min_mass_pct, 'axial': min_com_mm, 'com': min_com_mm,
           'inertia': min_inertia_pct}

    def evaluate(lv):
        param = AutoSet(robot, lv, pi_cad)
        x, pi, rss = fit(prob, param, total_mass)
        out.fits += 1
        held = None
        if score_rows is not None:
            r2 = residual(rows, weights, score_rows, prob, pi) ** 2
            held = np.bincount(block, r2, HELD_OUT_BLOCKS)
        return rss, param.size, held, grouped.from_standard(pi)

    def effect(unit: str, small: str, big: str, xg: np.ndarray) -> float:
        """Change of the components ``big`` adds to ``small``, in tolerances."""
        u = base.units.index(unit)
        seg, cad = xg[width * u:width * (u + 1)], xg_cad[width * u:width * (u + 1)]
        change = {'mass': 100 * abs(seg[0] - cad[0]) / max(abs(cad[0]), 1e-12),
                  'axial': 1e3 * float(np.linalg.norm(seg[1:4] - cad[1:4]))}
        change['com'] = change['axial']
        if width > 4:
            top = max(float(np.abs(cad[[4, 6, 9]]).max()), 1e-12)
            change['inertia'] = 100 * float(np.abs(seg[4:] - cad[4:]).max()) / top
        new = parse_level(big) - parse_level(small)
        return float(max((change.get(c, 0.0) / max(tol[c], 1e-12) for c in new), default=0.0))

    def spread(unit: str, xg: np.ndarray) -> float:
        """Largest change of the unit's mass and COM from CAD, in prior spreads."""
        u = base.units.index(unit)
        seg, cad = xg[width * u:width * u + 4], xg_cad[width * u:width * u + 4]
        return float(max(abs(seg[0] - cad[0]) / (grouped.mass_scale * abs(cad[0]) + 1e-12),
                         np.linalg.norm(seg[1:4] - cad[1:4]) / grouped.com_scale))

    nf = rows.nf if rows is not None else 0

    def lateral_kept(unit: str, small, big, lv_small: dict, lv_big: dict) -> bool:
        """Whether the 3-D COM (``lv_big``) fits significantly better than the axial shift
        in its place (``lv_small``); the test is kept in ``out.tests``."""
        test = nested_test(step, unit, small, big, lv_small[unit], lv_big[unit], criterion,
                            out.n_eff, nf)[0]
        test.effect = effect(unit, lv_small[unit], lv_big[unit], big[3])
        test.accepted = (test.p_value < alpha) if criterion == 'f_test' else \
            test.statistic > z
        out.tests.append(test)
        return test.accepted

    def significant(cand, n_cands: int) -> bool:
        """Whether a candidate passes the test (Bonferroni over ``n_cands``)."""
        if criterion == 'f_test':
            return cand[0][0] + np.log(n_cands) < np.log(alpha)
        return cand[1].statistic > z

    def best_pair(cands: list):
        """The significant pair of single moves on two units whose joint fit is plausible
        and moves what each adds beyond its tolerance (smallest p-value; Bonferroni over the
        pairs); its two tests recorded as accepted. None when no pair passes."""
        pairs = []
        for i, a in enumerate(cands):
            for b in cands[i + 1:]:
                ta, tb = a[1], b[1]
                if ta.unit == tb.unit or ta.effect < 1.0 or tb.effect < 1.0:
                    continue
                lv = dict(levels, **{ta.unit: ta.level_to, tb.unit: tb.level_to})
                big = evaluate(lv)
                if max(spread(ta.unit, big[3]), spread(tb.unit, big[3])) > MAX_SPREAD or min(
                        effect(ta.unit, levels[ta.unit], ta.level_to, big[3]),
                        effect(tb.unit, levels[tb.unit], tb.level_to, big[3])) < 1.0:
                    continue
                test, log_p = nested_test(step, f'{ta.unit}+{tb.unit}', current, big,
                                          f'{levels[ta.unit]}+{levels[tb.unit]}',
                                          f'{ta.level_to}+{tb.level_to}', criterion,
                                          out.n_eff, nf)
                key = (log_p, -test.statistic, test.dp) if criterion == 'f_test' else \
                    (-test.statistic, 0.0, test.dp)
                pairs.append((key, test, lv, big, (ta, tb)))
        if not pairs:
            return None
        key, test, lv, big, (ta, tb) = min(pairs, key=lambda c: c[0])
        if not significant((key, test), len(pairs)):
            return None
        for t in (ta, tb):  # a 3-D COM only when it beats the axial shift in its place
            if 'com' in parse_level(t.level_to) and base.axes[t.unit] is not None:
                lv_ax = dict(lv, **{t.unit: level_name(
                    parse_level(t.level_to) - {'com'} | {'axial'})})
                small = evaluate(lv_ax)
                if spread(t.unit, small[3]) <= MAX_SPREAD and not lateral_kept(
                        t.unit, small, big, lv_ax, lv):
                    lv, big = lv_ax, small
        for t in (ta, tb):
            rec = dataclasses.replace(t, level_to=lv[t.unit], dp=test.dp,
                                      statistic=test.statistic,
                                      p_value=test.p_value, rss_small=test.rss_small,
                                      rss_big=test.rss_big, accepted=True,
                                      paired_with=(tb if t is ta else ta).unit,
                                      spread=spread(t.unit, big[3]),
                                      effect=effect(t.unit, levels[t.unit], lv[t.unit],
                                                    big[3]))
            out.tests.append(rec)
        return lv, big

    current = evaluate(levels)
    step = 0
    while True:
        cands = []
        for unit in base.units:
            for target in _moves(levels[unit], base.axes[unit] is not None, inertia):
                lv = dict(levels, **{unit: target})
                big = evaluate(lv)
                test, log_p = nested_test(step, unit, current, big, levels[unit], target,
                                           criterion, out.n_eff, nf)
                key = (log_p, -test.statistic, test.dp) if criterion == 'f_test' else \
                    (-test.statistic, 0.0, test.dp)
                test.effect = effect(unit, levels[unit], target, big[3])
                test.spread = spread(unit, big[3])
                out.tests.append(test)
                cands.append((key, test, lv, big))
        if not cands:
            break
        mattering = [c for c in cands if c[1].effect >= 1.0 and c[1].spread <= MAX_SPREAD]
        best = min(mattering, key=lambda c: c[0]) if mattering else None
        if best is None or not significant(best, len(cands)):
            # the data reject the current model only through moves that are implausible
            # alone (a trunk COM taking up a leg's error): two units at a time
            if not PAIRS or not any(significant(c, len(cands)) for c in cands):
                break
            pair = best_pair(cands)
            if pair is None:
                break
            levels, current = pair
            step += 1
            continue
        key, test, lv, big = best
        smaller = _axial_instead(test, cands)
        if smaller is not None and not lateral_kept(test.unit, smaller[3], big,
                                                    smaller[2], lv):
            key, test, lv, big = smaller
        test.accepted = True
        if criterion == 'f_test':  # alternatives the data cannot tell from the one accepted
            noise = test.rss_big / max(out.n_eff - (big[1] - 1), 1.0)
            alike = [c[1].level_to for c in cands if c[1] is not test
                     and c[1].unit == test.unit and c[1].effect >= 1.0
                     and not holds(c[1].level_to, test.level_to)  # not just larger
                     and c[1].rss_big - test.rss_big < ALIKE_CHI2 * noise]
            test.alike = [a for a in alike if not any(  # the smallest of them
                b != a and holds(a, b) for b in alike)]
            if test.alike:  # their union: the prior splits what the data cannot
                union = set(parse_level(test.level_to)).union(
                    *(parse_level(a) for a in test.alike))
                lv = dict(levels, **{test.unit: level_name(
                    union - {'axial'} if 'com' in union else union)})
                big = evaluate(lv)
                if 'com' in union and base.axes[test.unit] is not None:
                    lv_ax = dict(levels, **{test.unit: level_name(union - {'com'} | {'axial'})})
                    small = evaluate(lv_ax)
                    if not lateral_kept(test.unit, small, big, lv_ax, lv):
                        lv, big = lv_ax, small
        levels, current = lv, big
        step += 1
    out.levels = levels
    return out


#: Options of :func:`identify` that steer the selection (popped before the solve).
SELECT_OPTIONS = {'auto_criterion': 'criterion', 'auto_alpha': 'alpha', 'auto_z': 'z',
                  'auto_inertia': 'inertia'}
_LEVEL_OF_PREFIX = {'m': 'mass', 'd': 'axial', 'cx': 'com', 'cy': 'com', 'cz': 'com'}


def select_for_options(rows: Rows, robot: Robot, total_mass: float, pi_cad, opts: dict
                       ) -> Selection:
    """:func:`select_levels` with the ``auto_*`` options popped from ``opts``; a parameter in
    ``opts['known']`` (``m_leg_3``, ``d_leg_3``, ``cx_trunk``) puts its unit at least on the
    level that holds it."""
    kwargs = {arg: opts.pop(key) for key, arg in SELECT_OPTIONS.items() if key in opts}
    min_levels: Dict[str, str] = {}
    for name in opts.get('known') or {}:
        prefix, _, unit = name.partition('_')
        level = _LEVEL_OF_PREFIX.get(prefix, 'inertia' if prefix.startswith('I') else None)
        if level is None:
            raise BadInputError(f'known parameter {name!r} names no auto-set component '
                                '(m_, d_, cx_, cy_, cz_, I.._<unit>)')
        min_levels[unit] = level_name(parse_level(min_levels.get(unit, 'none'))
                                      | parse_level(level))
    return select_levels(rows, robot, total_mass, pi_cad, min_levels=min_levels, **kwargs)
