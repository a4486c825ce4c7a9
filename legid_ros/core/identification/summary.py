"""What the data determine, first: physical quantities of an identified set with their std.

An identified set has ten numbers per link, but the data of a standing or walking robot decide
few of them: the total mass, the whole-body COM, some group combinations (a leg's mass, the
sum of the two distal links). The rest is held near CAD by the method's prior or its parameter
set. This module turns a result and its :class:`~legid_ros.core.identification.uncertainty.
Uncertainty` into a list of :class:`Quantity`: each a physical number, its standard deviation
(the error covariance of the standard parameters, prior and held parameters included) and
whether the data determine it:

- *determined*: its data-only std and its std are at most :data:`DETERMINED_RATIO` times its
  prior width (how far the truth may be from CAD: ``prior_width`` scale units of each
  parameter it reads);
- else *not determined*: the prior toward CAD decides it and its std is at least that prior
  width.

Whole-robot quantities first (total mass, whole-body COM in the base frame at a reference
posture, trunk COM), then the group combinations the data determine, named in words ("leg_3
mass (2 links)", "left leg mass", "upper_leg + lower_leg mass"), then every link's mass and
COM, each flagged. The CLI, the report, the YAML and the estimator's diagnostics only format
this list (:meth:`PhysicalSummary.lines`, :meth:`markdown`, :meth:`as_dict`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np
import pinocchio as pin

from legid_ros.core.identification.parameters.sets import StandardSet
from legid_ros.core.identification.uncertainty import DETERMINED_RATIO
from legid_ros.core.inertial import PARAMS_PER_LINK
from legid_ros.core.robot import Robot

#: A link value whose gradient lies this far outside what the fitted set can move (share of
#: its norm in prior-width units) is never called determined: the data decided its group
OUTSIDE_CORE = 0.1


@dataclass
class Quantity:
    """One physical quantity of an identified set.

    Attributes:
        name: In words ('total mass', 'whole-body COM x (base frame)', 'left leg mass').
        kind: 'whole', 'group' or 'link'.
        unit: 'kg' or 'mm'.
        value: Identified value [unit].
        std: Standard deviation of its error [unit] (prior and held parameters included).
        std_data: From the data alone [unit] (``inf``: the data do not see it).
        prior_width: How far it may be from CAD a priori [unit].
        determined: Whether the data determine it (:data:`DETERMINED_RATIO`).
        gradient: d value / d pi (standard parameters, SI) for checks against a truth.
        in_group: A link value the fitted set moves only with its group's other links (its
            split between them is CAD's): never determined (:data:`OUTSIDE_CORE`).
    """

    name: str
    kind: str
    unit: str
    value: float
    std: float
    std_data: float
    prior_width: float
    determined: bool
    gradient: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    in_group: bool = False

    def text(self) -> str:
        """'name = value +- std unit', flagged when the prior, not the data, decides it."""
        v = f'{self.value:.4g}'
        if self.determined:
            return f'{self.name} = {v} +- {_num(self.std)} {self.unit}'
        return f'{self.name} = {v} +- {_num(self.std)} {self.unit} ({self.flag()})'

    def flag(self) -> str:
        """Why it is, or is not, determined (in words)."""
        if self.determined:
            return 'determined'
        if self.in_group:
            return ('not determined: the set fitted its link group, the split between the '
                    "group's links is CAD's; the std is the prior's width")
        return 'not determined: the std is the width of the prior toward CAD'


def _num(x: float) -> str:
    return f'{x:.2g}' if np.isfinite(x) else 'unknown'


@dataclass
class PhysicalSummary:
    """Quantities of an identified set, the ones the data determine first.

    Attributes:
        quantities: Whole-robot, then determined group combinations, then per link.
        posture: Joint positions of the whole-body COM's reference posture [rad].
    """

    quantities: List[Quantity]
    posture: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def of_kind(self, kind: str) -> List[Quantity]:
        """The quantities of one kind."""
        return [q for q in self.quantities if q.kind == kind]

    def lines(self) -> List[str]:
        """Readable lines (CLI): what the data determine, then each link flagged."""
        out = ['what the data determine (std: noise, model and the prior toward CAD):']
        out += [f'  {q.text()}' for q in self.quantities if q.kind != 'link' and q.determined]
        out.append('not determined by the data (the prior toward CAD decides them):')
        held = [q for q in self.quantities if q.kind != 'link' and not q.determined]
        out += [f'  {q.text()}' for q in held] or ['  (none of the whole-robot quantities)']
        out.append('per link (determined by the data, or decided by the prior toward CAD):')
        out += [f'  {q.text()}' for q in self.of_kind('link')]
        return out

    def markdown(self) -> List[str]:
        """Markdown lines (report.md): the determined table, then per link."""
        out = ['| quantity | value | std | determined by the data |', '|---|---|---|---|']
        for q in self.quantities:
            if q.kind == 'link':
                continue
            std = _num(q.std) if q.determined else f'{_num(q.std)} (prior width)'
            out.append(f'| {q.name} [{q.unit}] | {q.value:.4g} | {std} | '
                       f'{"yes" if q.determined else "no"} |')
        out += ['', '| link quantity | value | std | flag |', '|---|---|---|---|']
        for q in self.of_kind('link'):
            flag = 'determined' if q.determined else (
                'group fitted, split from CAD' if q.in_group else 'prior (not determined)')
            out.append(f'| {q.name} [{q.unit}] | {q.value:.4g} | {_num(q.std)} | {flag} |')
        return out

    def as_dict(self) -> dict:
        """Plain form (YAML): the determined quantities first, then the rest."""
        def entry(q):
            return {'name': q.name, 'unit': q.unit, 'value': float(q.value),
                    'std': float(q.std) if np.isfinite(q.std) else None,
                    'std_data': float(q.std_data) if np.isfinite(q.std_data) else None,
                    'prior_width': float(q.prior_width),
                    'determined': bool(q.determined), 'in_group': bool(q.in_group)}
        return {'determined': [entry(q) for q in self.quantities
                               if q.determined and q.kind != 'link'],
                'not_determined': [entry(q) for q in self.quantities
                                   if not q.determined and q.kind != 'link'],
                'links': [entry(q) for q in self.of_kind('link')]}

    def diagnostic_values(self, limit: int = 12) -> Dict[str, str]:
        """Key/values for ``/diagnostics``: the determined quantities with their std."""
        out = {}
        for q in [q for q in self.quantities if q.determined and q.kind != 'link'][:limit]:
            out[f'determined.{q.name} [{q.unit}]'] = f'{q.value:.4g} +- {_num(q.std)}'
        held = [q.name for q in self.of_kind('link') if not q.determined]
        out['held_at_cad_links'] = f'{len(held)} of {len(self.of_kind("link"))} link values'
        return out


def _limbs(robot: Robot) -> Dict[str, List[int]]:
    """Body indices (into ``pi``'s links) of each foot's chain below the root body."""
    model = robot.model
    bodies = robot.body_names
    out = {}
    for foot_name, foot in robot.feet.items():
        if foot.link not in bodies:
            continue
        j = bodies.index(foot.link) + 1
        chain = []
        while j > 1:
            chain.append(j - 1)
            j = model.parents[j]
        if chain:
            out[foot_name] = sorted(chain)
    return out


def _body_placements(robot: Robot, q_joints: Optional[np.ndarray]):
    """(R, p) of every body's frame in the root body's frame at the joint posture."""
    model = robot.model
    q = robot.neutral()
    if q_joints is not None and np.size(q_joints) == model.nq - 7:
        q = q.copy()
        q[7:] = q_joints
    data = model.createData()
    pin.forwardKinematics(model, data, q)
    root = data.oMi[1]
    return [(root.actInv(data.oMi[j]).rotation, root.actInv(data.oMi[j]).translation)
            for j in range(1, model.njoints)]


def _gradients(robot: Robot, pi: np.ndarray, q_joints) -> List[tuple]:
    """(name, kind, unit, factor, gradient, value) of every quantity: SI gradient d q / d pi
    and SI value (times ``factor``: in ``unit``)."""
    pi = np.asarray(pi, float)
    nb = pi.size // PARAMS_PER_LINK
    names = robot.body_names
    mass = pi[0::PARAMS_PER_LINK]
    total = float(mass.sum())
    out = []

    def mass_of(idx):
        g = np.zeros(pi.size)
        g[np.asarray(idx, int) * PARAMS_PER_LINK] = 1.0
        return g

    out.append(('total mass', 'whole', 'kg', 1.0, mass_of(range(nb)), total))
    place = _body_placements(robot, q_joints)
    num = sum(m * p + r @ pi[PARAMS_PER_LINK * i + 1:PARAMS_PER_LINK * i + 4]
              for i, ((r, p), m) in enumerate(zip(place, mass)))
    com = num / total
    for k, axis in enumerate('xyz'):
        g = np.zeros(pi.size)
        for i, (r, p) in enumerate(place):
            g[PARAMS_PER_LINK * i] = (p[k] - com[k]) / total
            g[PARAMS_PER_LINK * i + 1:PARAMS_PER_LINK * i + 4] = r[k] / total
        out.append((f'whole-body COM {axis} (base frame)', 'whole', 'mm', 1e3, g, com[k]))
    m0, h0 = mass[0], pi[1:4]
    for k, axis in enumerate('xyz'):
        g = np.zeros(pi.size)
        g[0] = -h0[k] / m0 ** 2
        g[1 + k] = 1.0 / m0
        out.append((f'trunk COM {axis} ({names[0]} frame)', 'whole', 'mm', 1e3, g,
                    h0[k] / m0 if m0 > 0 else 0.0))
    groups = list(robot.link_groups.items())
    for gname, group in groups:
        idx = [names.index(link) for link in group.links if link in names]
        if idx:
            out.append((f'{gname} mass ({len(idx)} links)', 'group', 'kg', 1.0, mass_of(idx),
                        mass[idx].sum()))
    for (a, ga), (b, gb) in zip(groups[:-1], groups[1:]):
        idx = [names.index(link) for link in list(ga.links) + list(gb.links) if link in names]
        if idx:
            out.append((f'{a} + {b} mass', 'group', 'kg', 1.0, mass_of(idx), mass[idx].sum()))
    for foot, idx in _limbs(robot).items():
        out.append((f'{foot} leg mass ({len(idx)} links)', 'group', 'kg', 1.0, mass_of(idx),
                    mass[idx].sum()))
    for i, name in enumerate(names):
        out.append((f'{name} mass', 'link', 'kg', 1.0, mass_of([i]), mass[i]))
        m, h = mass[i], pi[PARAMS_PER_LINK * i + 1:PARAMS_PER_LINK * i + 4]
        for k, axis in enumerate('xyz'):
            g = np.zeros(pi.size)
            if m > 0:
                g[PARAMS_PER_LINK * i] = -h[k] / m ** 2
                g[PARAMS_PER_LINK * i + 1 + k] = 1.0 / m
            out.append((f'{name} COM {axis}', 'link', 'mm', 1e3, g, h[k] / m if m > 0 else 0.0))
    return out


def values(robot: Robot, pi: np.ndarray, q_joints=None) -> Dict[str, float]:
    """Every quantity's value [its unit] for the standard parameters ``pi`` (e.g. a truth)."""
    return {name: float(v) * factor
            for name, _, _, factor, _, v in _gradients(robot, pi, q_joints)}


def _outside_core(jac: np.ndarray, s_std: np.ndarray):
    """A function ``g -> [0, 1]``: the share of a quantity's gradient (masses and first
    moments, in prior-width units) that the fitted core cannot move (a grouped set moves a
    group's links together: the left/right split of a symmetric group is outside it)."""
    n = s_std.size
    mh = np.flatnonzero(np.arange(n) % PARAMS_PER_LINK < 4)
    if jac.shape[0] != n or not jac.size:
        return lambda g: 0.0
    u, sv, _ = np.linalg.svd(jac[mh] / s_std[mh, None], full_matrices=False)
    q = u[:, sv > 1e-9 * max(sv.max(initial=0.0), 1e-300)]

    def share(g: np.ndarray) -> float:
        gs = np.asarray(g, float)[mh] * s_std[mh]
        norm = float(np.linalg.norm(gs))
        return float(np.linalg.norm(gs - q @ (q.T @ gs)) / norm) if norm > 0 else 0.0
    return share


def summarize(robot: Robot, pi: np.ndarray, unc, q_joints: Optional[np.ndarray] = None,
              ratio: float = DETERMINED_RATIO, total_mass_std: float = 0.0
              ) -> PhysicalSummary:
    """The physical quantities of ``pi`` with their std and whether the data determine them.

    Args:
        robot: Robot of the set.
        pi: Identified standard parameters.
        unc: Its :class:`~legid_ros.core.identification.uncertainty.Uncertainty` (with
            ``covariance_pi``, ``jacobian`` and ``covariance_data``).
        q_joints: Joint posture of the whole-body COM [rad] (default: the mean of the run, or
            the neutral posture).
        ratio: Data-only std over prior width at most this for 'determined'.
        total_mass_std: Std of the total-mass equality [kg] (the standard error of the mean
            vertical force / g).
    """
    pi = np.asarray(pi, float)
    s_std = StandardSet(robot, pi).scales()
    width = float(getattr(unc, 'prior_width', 0.0) or 1.0)
    cov = np.asarray(unc.covariance_pi, float)
    jac_s = np.asarray(unc.jacobian, float) * np.asarray(unc.scales, float)[None, :]
    outside = _outside_core(np.asarray(unc.jacobian, float), s_std)
    quantities = []
    for name, kind, unit, factor, g, value in _gradients(robot, pi, q_joints):
        value = float(value) * factor
        gs = g * s_std  # per scale unit of each standard parameter
        prior = width * float(np.linalg.norm(gs)) * factor
        std_data = unc.std_data_along(jac_s.T @ g) * factor
        std = float(np.sqrt(max(g @ cov @ g, 0.0))) * factor
        if name == 'total mass':  # the equality the fit holds: its measurement's std
            std = std_data = float(total_mass_std)
        # determined: the data see it and its error (with what the set holds at CAD) is well
        # inside the prior width
        determined = bool(max(std_data, std) <= ratio * prior)
        in_group = kind == 'link' and outside(g) > OUTSIDE_CORE
        if in_group:
            determined = False  # the fitted set reads its group, not this link
        if not determined:
            std = max(std, prior)  # held at CAD +- its prior width
        quantities.append(Quantity(name, kind, unit, float(value), std, std_data, prior,
                                   determined, g * factor, in_group))
    post = np.zeros(0) if q_joints is None else np.asarray(q_joints, float)
    return PhysicalSummary(quantities, post)
