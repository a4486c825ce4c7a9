"""Report of a pipeline run (``legid demo``): identified vs truth, ZMP deviation, figures."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Sequence

import numpy as np

from legid_ros.core.inertial import link_index
from legid_ros.core.robot import Robot


def group_masses(pi: np.ndarray, robot: Robot) -> Dict[str, float]:
    """Per link group of the description, the summed mass of its links [kg]."""
    return {name: float(sum(pi[10 * link_index(robot.model, link)] for link in g.links))
            for name, g in robot.link_groups.items()}


def mass_table(robot: Robot, cad: np.ndarray, truth: Optional[np.ndarray],
               identified: Optional[np.ndarray]) -> List[str]:
    """Text lines: per group CAD, truth, identified mass [kg] and the errors."""
    lines = [f'{"group":<8} {"CAD kg":>8} {"truth kg":>9} {"ident kg":>9} {"CAD err":>8} '
             f'{"ident err":>9}']
    cm = group_masses(cad, robot)
    tm = group_masses(truth, robot) if truth is not None else {}
    im = group_masses(identified, robot) if identified is not None else {}
    for g in cm:
        t = tm.get(g, np.nan)
        i = im.get(g, np.nan)
        lines.append(f'{g:<8} {cm[g]:8.3f} {t:9.3f} {i:9.3f} {cm[g] - t:+8.3f} {i - t:+9.3f}')
    if tm and im:
        e_cad = sum(abs(cm[g] - tm[g]) for g in cm)
        e_id = sum(abs(im[g] - tm[g]) for g in cm)
        lines.append(f'sum of |mass errors|: CAD {e_cad:.3f} kg, identified {e_id:.3f} kg')
    return lines


def _finish(plt, fig, ax, path: Path) -> Path:
    """Grid, tight layout, save as PNG at 110 dpi and close; returns the path."""
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_figures(out: Path, robot: Robot, history: Sequence, cad: np.ndarray,
                  truth: Optional[np.ndarray], zmp_t: np.ndarray, zmp_dev: np.ndarray,
                  solve_ms: Sequence[float]) -> List[Path]:
    """PNG figures: group masses over time, ZMP deviation over time, solve times.

    Args:
        out: Output directory.
        robot: Robot (link groups).
        history: (time [s], standard parameters) of every published set.
        cad, truth: CAD and true standard parameters.
        zmp_t, zmp_dev: Stamps [s] and |measured - predicted ZMP| [m].
        solve_ms: Estimator solve times [ms].
    """
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    paths = []
    fig, ax = plt.subplots(figsize=(8, 4.5))
    if history:
        t0 = history[0][0]
        ts = np.array([h[0] - t0 for h in history])
        masses = [group_masses(h[1], robot) for h in history]
        for i, g in enumerate(robot.link_groups):
            color = f'C{i}'
            ax.plot(ts, [m[g] for m in masses], color=color, label=f'{g} identified')
            if truth is not None:
                ax.axhline(group_masses(truth, robot)[g], color=color, ls='--', lw=1)
            ax.axhline(group_masses(cad, robot)[g], color=color, ls=':', lw=1)
    ax.set_xlabel('time since the first estimate [s]')
    ax.set_ylabel('group mass [kg]')
    ax.set_title('identified group masses (dashed: truth, dotted: CAD)')
    ax.legend(fontsize=8)
    paths.append(_finish(plt, fig, ax, out / 'demo_masses.png'))

    fig, ax = plt.subplots(figsize=(8, 3.5))
    if len(zmp_t):
        ax.plot(zmp_t - zmp_t[0], 1000 * zmp_dev, lw=0.8)
    ax.set_xlabel('time [s]')
    ax.set_ylabel('|measured - predicted ZMP| [mm]')
    ax.set_title('ZMP deviation with the published parameters')
    paths.append(_finish(plt, fig, ax, out / 'demo_zmp_deviation.png'))

    fig, ax = plt.subplots(figsize=(8, 3.5))
    if len(solve_ms):
        ax.plot(np.arange(len(solve_ms)), solve_ms, 'o-', ms=3)
    ax.set_xlabel('update')
    ax.set_ylabel('solve time [ms]')
    ax.set_title('estimator update (QP) time: constant as the history grows')
    paths.append(_finish(plt, fig, ax, out / 'demo_solve_times.png'))
    return paths
