"""The parameter set chosen by the data: per link group, which components are estimated.

The groups are those of :mod:`.grouped` (symmetric: left and right links share a unit, the
right one mirrored). Each unit estimates a *level*: a set of components, written joined by
``+`` (``'mass+axial'``; ``'none'`` for the empty set, every link of the unit at CAD)::

    mass     its mass [kg]
    axial    its COM shift along the leg segment's axis [m] (links with an axis only)
    com      its 3-D COM (the axial shift included: not with ``axial``) [m]
    inertia  the six entries of its inertia about the COM [kg.m^2]

Levels are nested models when one's components hold the other's (``axial`` counting as held
by ``com``). The ZMP sees a link's first moment ``m c`` far better than ``m`` and ``c`` apart,
so a COM shift along the leg without a mass change is a level of its own (``axial``), not
only a step after ``mass``.

The *leg axis* of a link is the unit direction, in the link frame, from its joint to the first
descendant joint not at the same point, at the neutral configuration (from the URDF): the hip
pitch link's points to the knee, the thigh's to the knee, the shank's to the ankle. A foot (a
leaf) points to its sole frame. The root (the trunk, several children) has no axis: its ladder
has no ``axial``. Which level each unit gets is chosen from the data by
:mod:`.auto_select`.

The map is the grouped set's (with the inertia when a unit needs it) restricted to an affine
subspace: ``x_grouped = x0 + E x``, so ``pi(x) = pi_grouped(x0 + E x)``, ``d pi / d x = J E``,
``curvature = E^T C E``; the links of units on ``none`` keep their exact CAD rows. As in the
grouped set, a unit's sides share what is estimated (both thighs get one mass, the right one's
COM mirrored) and keep their CAD inertia about the COM unless ``inertia`` is chosen (then the
mean of the mirrored sides' is the start). Parameter names: ``m_<unit>``, ``d_<unit>`` (axial
shift from the CAD COM [m]), ``cx_<unit>``, ``cy_<unit>``, ``cz_<unit>``, ``Ixx_<unit>``....
"""

from __future__ import annotations

from typing import Dict, FrozenSet, List, Optional, Sequence

import numpy as np
import pinocchio as pin

from legid_ros.core.errors import BadInputError
from legid_ros.core.identification.parameters.grouped import GroupedSet
from legid_ros.core.inertial import PARAMS_PER_LINK, get_parameters, link_index
from legid_ros.core.robot import Robot

#: The components a level is made of, in the order of ``x`` and of a level's name.
COMPONENTS = ('mass', 'axial', 'com', 'inertia')
_INERTIA = ('Ixx', 'Ixy', 'Iyy', 'Ixz', 'Iyz', 'Izz')
_MIN_SEGMENT_M = 1e-4  # joints closer than this are at the same point [m]


def leg_axis(robot: Robot, link: str) -> Optional[np.ndarray]:
    """Unit leg axis of ``link`` in its frame (see the module docstring); None for the root
    or when no descendant joint or sole frame lies away from the link's joint."""
    model = robot.model
    jid = link_index(model, link) + 1
    if model.parents[jid] == 0:
        return None
    data = model.createData()
    pin.forwardKinematics(model, data, robot.neutral())
    origin = data.oMi[jid]
    target, k = None, jid
    while target is None:
        children = [c for c in range(1, model.njoints) if model.parents[c] == k]
        if len(children) != 1:
            break
        k = children[0]
        if np.linalg.norm(data.oMi[k].translation - origin.translation) > _MIN_SEGMENT_M:
            target = data.oMi[k].translation
    if target is None:  # a leaf: toward the sole frame of the foot it carries
        pin.updateFramePlacements(model, data)
        for foot in robot.feet.values():
            frame = foot.sole_frame or foot.link
            if model.existFrame(frame) and model.frames[model.getFrameId(frame)].parentJoint == k:
                p = data.oMf[model.getFrameId(frame)].translation
                if np.linalg.norm(p - origin.translation) > _MIN_SEGMENT_M:
                    target = p
    if target is None:
        return None
    d = origin.rotation.T @ (target - origin.translation)
    return d / np.linalg.norm(d)


def parse_level(level: str) -> FrozenSet[str]:
    """``'mass+axial'`` -> ``{'mass', 'axial'}`` (``'none'``: empty).

    Raises:
        BadInputError: Unknown component, or ``axial`` with ``com``.
    """
    comps = frozenset() if level in ('', 'none') else frozenset(level.split('+'))
    bad = sorted(comps - set(COMPONENTS))
    if bad or {'axial', 'com'} <= comps:
        raise BadInputError(f'level {level!r}: components are {", ".join(COMPONENTS)} joined '
                            "by '+' (com holds axial: not both), or 'none'")
    return comps


def level_name(comps) -> str:
    """The name of a set of components (``'mass+axial'``, ``'none'``)."""
    return '+'.join(c for c in COMPONENTS if c in comps) or 'none'


def holds(big, small) -> bool:
    """Whether level ``big`` holds level ``small`` (nested models; ``com`` holds
    ``axial``)."""
    b, s = parse_level(big), parse_level(small)
    if 'com' in b:
        b = b | {'axial'}
    return s <= b


class AutoSet:
    """Per-unit levels (sets of :data:`COMPONENTS`) over the symmetric link groups.

    Args:
        robot: Robot whose description has ``link_groups``.
        levels: Unit name -> level (``'mass+axial'``; units not named: 'none'); unit names
            are the grouped set's (the group names).
        pi_cad: CAD standard parameters (default: the model's).
        com_scale: Prior spread of each COM coordinate and axial shift [m].
        mass_scale: Prior spread of each mass, as a fraction of its CAD value.

    Raises:
        BadInputError: Unknown unit or component, or ``axial`` for a unit without a leg
            axis.
    """

    linear = False

    def __init__(self, robot: Robot, levels: Dict[str, str], pi_cad: Optional[np.ndarray] = None,
                 com_scale: float = 0.02, mass_scale: float = 0.2):
        self.pi_cad = get_parameters(robot.model) if pi_cad is None else np.array(pi_cad, float)
        comps = {str(k): parse_level(str(v)) for k, v in dict(levels).items()}
        self.levels = {k: level_name(v) for k, v in comps.items()}
        inertia = any('inertia' in v for v in comps.values())
        self.grouped = GroupedSet(robot, self.pi_cad, identify_inertia=inertia,
                                  com_scale=com_scale, mass_scale=mass_scale)
        g = self.grouped
        self.units: List[str] = list(g.units)
        self.link_names = robot.body_names
        self.axes = unit_axes(robot, g)
        for unit, level in comps.items():
            if unit not in self.units:
                raise BadInputError(f'unknown unit {unit!r} in auto levels; units: '
                                    f'{", ".join(self.units)}')
            if 'axial' in level and self.axes[unit] is None:
                raise BadInputError(f'unit {unit!r} has no leg axis: no axial level (use com)')
        cols, names, scales = [], [], []
        gs = g.scales()
        for u, unit in enumerate(self.units):
            have = comps.get(unit, frozenset())
            b = g.width * u
            if 'mass' in have:
                cols.append(np.eye(g.size)[b])
                names.append(f'm_{unit}')
                scales.append(gs[b])
            if 'axial' in have:
                e = np.zeros(g.size)
                e[b + 1:b + 4] = self.axes[unit]
                cols.append(e)
                names.append(f'd_{unit}')
                scales.append(com_scale)
            if 'com' in have:
                for k, f in enumerate(('cx', 'cy', 'cz')):
                    cols.append(np.eye(g.size)[b + 1 + k])
                    names.append(f'{f}_{unit}')
                    scales.append(gs[b + 1 + k])
            if 'inertia' in have:
                for k, f in enumerate(_INERTIA):
                    cols.append(np.eye(g.size)[b + 4 + k])
                    names.append(f'{f}_{unit}')
                    scales.append(gs[b + 4 + k])
        self.E = np.array(cols, float).reshape(-1, g.size).T  # (grouped size, size)
        self.names: List[str] = names
        self.size = len(names)
        self._scales = np.array(scales, float)
        self.x0 = g.cad()  # the grouped CAD point: x = 0 there
        self._x_cad = np.zeros(self.size)
        for k, name in enumerate(names):  # masses and COM coordinates hold their CAD value
            if not name.startswith('d_'):
                self._x_cad[k] = self.E[:, k] @ self.x0
        self.x0 = self.x0 - self.E @ self._x_cad
        # rows of pi whose unit is on 'none' (kept at their exact CAD values)
        estimated = {u for u, unit in enumerate(self.units) if comps.get(unit)}
        weighed = {u for u, unit in enumerate(self.units) if 'mass' in comps.get(unit, ())}
        rows = np.array(sorted(
            PARAMS_PER_LINK * mem.index + k for mem in g.members if mem.unit in estimated
            for k in range(PARAMS_PER_LINK)), int)
        # the estimated units' rows at CAD (their sides' mean where the sides differ), and
        # among them those that move with x (a nonzero derivative at CAD or at two random
        # points): the others stay constant to the last bit (a derivative that is zero by
        # structure can still see rounding in the grouped map)
        self._free_rows = rows
        self._pi0 = self.pi_cad.copy()
        if self.size:
            self._pi0[rows] = g.to_standard(self.x0 + self.E @ self._x_cad)[rows]
            rng = np.random.default_rng(0)
            moved = np.zeros(self.pi_cad.size, bool)
            for x in (self._x_cad, *(self._x_cad + 0.1 * self._scales
                                     * rng.standard_normal(self.size) for _ in range(2))):
                moved |= np.any(self.jacobian(x) != 0.0, axis=1)
            self._free_rows = rows[moved[rows]]
        # the masses of the other units are constants of the map (their grouped CAD value)
        self.fixed_mass = float(robot.total_mass - self.pi_cad[0::PARAMS_PER_LINK][
            [mem.index for mem in g.members if mem.unit in weighed]].sum())
        self.n_groups = len(self.units)

    def _grouped_x(self, x) -> np.ndarray:
        x = np.asarray(x, float)
        if x.shape != (self.size,):
            raise BadInputError(f'auto x has shape {x.shape}, expected ({self.size},)')
        return self.x0 + self.E @ x

    def to_standard(self, x: np.ndarray) -> np.ndarray:
        """Standard parameters ``pi(x)`` (units on 'none' and links outside the groups at
        CAD)."""
        pi = self._pi0.copy()
        pi[self._free_rows] = self.grouped.to_standard(self._grouped_x(x))[self._free_rows]
        return pi

    def jacobian(self, x: np.ndarray) -> np.ndarray:
        """``d pi / d x`` = the grouped Jacobian times ``E``, shape (len(pi), size)."""
        jac = np.zeros((self.pi_cad.size, self.size))
        full = self.grouped.jacobian(self._grouped_x(x)) @ self.E
        jac[self._free_rows] = full[self._free_rows]
        return jac

    def curvature(self, x: np.ndarray, g: np.ndarray) -> np.ndarray:
        """``sum_k g_k d2 pi_k / dx2`` = ``E^T C E`` with the grouped set's ``C`` (rows of
        units on 'none' do not depend on ``x``)."""
        gm = np.zeros(self.pi_cad.size)
        gm[self._free_rows] = np.asarray(g, float)[self._free_rows]
        return self.E.T @ self.grouped.curvature(self._grouped_x(x), gm) @ self.E

    def cad(self) -> np.ndarray:
        """CAD values of ``x`` (axial shifts 0)."""
        return self._x_cad.copy()

    def from_standard(self, pi: np.ndarray) -> np.ndarray:
        """``x`` whose grouped point is closest to the grouped point of ``pi`` (exact for the
        estimated components; an axial shift is the projection of the COM change on the
        axis)."""
        d = self.grouped.from_standard(pi) - self.x0
        return np.linalg.lstsq(self.E, d, rcond=None)[0] if self.size else np.zeros(0)

    def mass_row(self) -> np.ndarray:
        """Row ``c`` with ``c . x`` the estimated links' total mass [kg] (add
        ``fixed_mass``)."""
        return self.E.T @ self.grouped.mass_row()

    def scales(self) -> np.ndarray:
        """The grouped set's scales of the estimated components (``com_scale`` per axial
        shift)."""
        return self._scales.copy()

    def bounds(self, mass_lo: float = 0.2, mass_hi: float = 3.0, com_box_m: float = 0.1):
        """The grouped set's box on the estimated components (axial shift +- ``com_box_m``)."""
        lb_g, ub_g = self.grouped.bounds(mass_lo, mass_hi, com_box_m)
        lb, ub = np.empty(self.size), np.empty(self.size)
        for k, name in enumerate(self.names):
            if name.startswith('d_'):
                lb[k], ub[k] = -com_box_m, com_box_m
            else:
                j = int(np.argmax(self.E[:, k]))
                lb[k], ub[k] = lb_g[j], ub_g[j]
        return lb, ub

    def table(self) -> List[dict]:
        """Per unit: its level and the names of its estimated parameters."""
        return [{'unit': u, 'level': self.levels.get(u, 'none'),
                 'parameters': [n for n in self.names if n.split('_', 1)[1] == u]}
                for u in self.units]


def unit_axes(robot: Robot, grouped: GroupedSet) -> Dict[str, Optional[np.ndarray]]:
    """Leg axis of each unit in the frame of its first (left or unsided) link (None: no
    axis)."""
    out: Dict[str, Optional[np.ndarray]] = {}
    for mem in grouped.members:  # the unit's frame: its member not mirrored
        unit = grouped.units[mem.unit]
        if unit not in out and np.allclose(mem.mirror, np.eye(3)):
            out[unit] = leg_axis(robot, robot.body_names[mem.index])
    for unit in grouped.units:
        out.setdefault(unit, None)
    return out


def parse_levels(text: str | Sequence[str]) -> Dict[str, str]:
    """``'leg_3=mass+axial,trunk=mass+com'`` (or a list of ``unit=level``) -> ``{unit:
    level}``."""
    items = text.split(',') if isinstance(text, str) else list(text)
    out = {}
    for item in items:
        item = item.strip()
        if not item:
            continue
        unit, sep, level = item.partition('=')
        if not sep or not unit.strip():
            raise BadInputError(f'auto levels expect UNIT=LEVEL (e.g. leg_3=mass+axial), got '
                                f'{item!r}')
        out[unit.strip()] = level_name(parse_level(level.strip()))
    return out
