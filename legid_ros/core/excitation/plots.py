"""Figures of a designed excitation (matplotlib, Agg): support polygons with the CAD ZMP path,
joint ranges used, predicted std per combination before (standing excitation) and after."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np

from legid_ros.core.excitation.design import Candidate
from legid_ros.core.excitation.information import combination_tolerance
from legid_ros.core.robot import Robot
from legid_ros.core.sim.described.excitation import _polygon


def _plt():
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    return plt


def plot_support(robot: Robot, cand: Candidate, path: Path) -> Path:
    """Every support polygon of the plan (outline) and the CAD ZMP path [mm]."""
    from scipy.spatial import ConvexHull
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.5, 6))
    feet = list(robot.feet)
    tr = cand.trajectory
    seen = set()
    for _, _, _, stance in cand.plan.phases:
        if stance in seen:
            continue
        seen.add(stance)
        pts = 1e3 * _polygon(robot, cand.plan.feet_world, stance)
        if len(pts) >= 3:
            hull = ConvexHull(pts)
            loop = np.append(hull.vertices, hull.vertices[0])
            ax.plot(pts[loop, 0], pts[loop, 1], lw=1, label='+'.join(stance))
        else:
            ax.plot(pts[:, 0], pts[:, 1], 'o-', lw=1, label='+'.join(stance))
    single = np.array([sum(tr.stance[f][k] for f in feet) < len(feet)
                       for k in range(len(tr.t))])
    ax.plot(1e3 * tr.zmp_cad[~single, 0], 1e3 * tr.zmp_cad[~single, 1], 'k.', ms=1,
            label='ZMP, all feet')
    ax.plot(1e3 * tr.zmp_cad[single, 0], 1e3 * tr.zmp_cad[single, 1], 'r.', ms=1,
            label='ZMP, a foot lifted')
    ax.set_aspect('equal')
    ax.set_xlabel('x [mm]')
    ax.set_ylabel('y [mm]')
    ax.set_title(f'{robot.name}: support polygons and CAD ZMP '
                 f'(margin {1e3 * cand.constraints.zmp_margin_min_m:.0f} mm)')
    ax.legend(fontsize=6, loc='best')
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_joint_ranges(robot: Robot, cand: Candidate, path: Path) -> Path:
    """Per joint, its range (grey) and the range the motion uses (blue) [rad]."""
    plt = _plt()
    model = robot.model
    lo, hi = model.lowerPositionLimit[7:], model.upperPositionLimit[7:]
    q = cand.trajectory.q[:, 7:]
    names = robot.actuated_joint_names
    fig, ax = plt.subplots(figsize=(8, 0.3 * len(names) + 1.5))
    y = np.arange(len(names))
    ax.barh(y, hi - lo, left=lo, color='0.85', label='limits')
    ax.barh(y, q.max(axis=0) - q.min(axis=0), left=q.min(axis=0), color='tab:blue',
            height=0.5, label='used')
    ax.set_yticks(y)
    ax.set_yticklabels(names, fontsize=7)
    ax.set_xlabel('[rad]')
    ax.legend(fontsize=7)
    ax.set_title(f'{robot.name}: joint ranges used')
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_std(cand: Candidate, baseline: Optional[Candidate], path: Path,
             static_rank: Optional[int] = None) -> Path:
    """Predicted std (with bias) of every combination in tolerance units, sorted, before and
    after; below 1: determined. ``static_rank``: the set's static ceiling (a line after the
    combinations a quasi-static motion can determine at most)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, c, style in (('standing (before)', baseline, 'o--'),
                            ('designed (after)', cand, 'o-')):
        if c is None:
            continue
        p = c.prediction
        u = p.uncertainty
        s = np.sort(np.hypot(u.combination_total_std, p.bias) / combination_tolerance(u))
        ax.semilogy(np.arange(1, s.size + 1), np.where(np.isfinite(s), s, 1e6), style, ms=3,
                    label=f'{label}: {int(p.determined.sum())} of {s.size} determined')
    ax.axhline(1.0, color='k', lw=0.8)
    if static_rank is not None:
        ax.axvline(static_rank + 0.5, color='tab:red', lw=0.8, ls=':',
                   label=f'static ceiling: {static_rank} (beyond: accelerations only)')
    ax.set_xlabel('combination (best first)')
    ax.set_ylabel('predicted std / tolerance [-]')
    ax.set_title('predicted identifiability (tolerance: 2 % mass, 3 mm COM)')
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
