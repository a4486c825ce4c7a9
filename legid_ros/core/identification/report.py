"""Identification report: plots (measured vs predicted ZMP) and a parameter table (markdown).

The validation of Wu & Gao 2021: the model ZMP of an identified set against the measured one,
and the ZMP reduced set next to CAD.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Optional

import numpy as np

from legid_ros.core.identification.parameters.sets import ReducedSet
from legid_ros.core.identification.result import IdentResult
from legid_ros.core.robot import Robot

#: What to do about a parameter set that is not physically consistent.
CONSISTENT_ADVICE = ('for a consistent set use a method that enforces it: --method sdp '
                     '(pseudo-inertia LMIs), zmp_newton, primitives, or a linear-row method '
                     'on a grouped set (e.g. --method zmp_qp --param-set grouped)')


def plot_zmp(t: np.ndarray, measured: np.ndarray, predicted: Dict[str, np.ndarray],
             path: Path) -> Path:
    """Measured and predicted ZMP (x and y) over time into a PNG.

    Drawn through matplotlib's object API on the Agg canvas (no pyplot: a third of the
    import time of ``legid identify``'s report stage, and no global figure state).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 6))
    FigureCanvasAgg(fig)
    axes = fig.subplots(2, 1, sharex=True)
    for i, ax in enumerate(axes):
        ax.plot(t, 1e3 * measured[:, i], 'k', lw=1.0, label='measured')
        for name, z in predicted.items():
            ax.plot(t, 1e3 * z[:, i], lw=0.8, label=name)
        ax.set_ylabel(f'ZMP {"xy"[i]} [mm]')
        ax.grid(alpha=0.3)
    axes[0].legend(loc='upper right', fontsize=8)
    axes[-1].set_xlabel('time [s]')
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return Path(path)


def parameter_table(robot: Robot, result: IdentResult, pi_cad: np.ndarray,
                    pi_true: Optional[np.ndarray] = None) -> str:
    """Markdown table: reduced set (if the robot has link groups), then per-link mass/COM."""
    from legid_ros.core.urdf_io import link_inertials

    lines = []
    if robot.link_groups:
        red = ReducedSet(robot, pi_cad)
        cols = ['identified', 'CAD'] + (['truth'] if pi_true is not None else [])
        vals = [red.from_standard(result.pi), red.from_standard(pi_cad)]
        if pi_true is not None:
            vals.append(red.from_standard(pi_true))
        lines += ['| parameter | ' + ' | '.join(cols) + ' |', '|---' * (len(cols) + 1) + '|']
        for i, name in enumerate(red.names):
            unit = 1e3 if name.startswith('lc_') else 1.0
            u = 'mm' if unit > 1 else 'kg'
            lines.append(f'| {name} [{u}] | ' + ' | '.join(f'{v[i] * unit:.3f}' for v in vals)
                         + ' |')
        lines.append('')
    ident = link_inertials(robot.model, result.pi)
    cad = link_inertials(robot.model, pi_cad)
    true = link_inertials(robot.model, pi_true) if pi_true is not None else None
    head = '| link | mass [kg] | CAD | ' + ('truth | ' if true else '') + 'COM [mm] | CAD COM |'
    lines += [head, '|---' * (6 if true else 5) + '|']
    for name, v in ident.items():
        row = f'| {name} | {v["mass"]:.3f} | {cad[name]["mass"]:.3f} | '
        if true:
            row += f'{true[name]["mass"]:.3f} | '
        row += (' '.join(f'{1e3 * c:.1f}' for c in v['com']) + ' | '
                + ' '.join(f'{1e3 * c:.1f}' for c in cad[name]['com']) + ' |')
        lines.append(row)
    return '\n'.join(lines)


def uncertainty_table(unc) -> list:
    """Markdown lines: per core parameter value +- std, then the combinations."""
    lines = ['Standard deviations from the residual and the information of the rows (sandwich '
             'covariance over blocks of samples, `core/identification/uncertainty/`): '
             '"std" is that of the error: noise, model error and the method\'s prior toward '
             'CAD (at least its width where the data do not determine it); "data '
             'alone" is what the data determine by themselves.', '',
             '| parameter | value | std | data alone |', '|---|---|---|---|']
    for n, v, sd, dd in zip(unc.names, unc.value, unc.std, unc.std_data):
        k, u = (1e3, 'mm') if n.startswith('lc_') else (1.0, 'kg' if n.startswith('m_') else '')
        sd_t = f'{k * sd:.2g}' if np.isfinite(sd) else 'not determined (no prior)'
        dd_t = f'{k * dd:.2g}' if np.isfinite(dd) else 'not determined'
        lines.append(f'| {n} [{u}] | {k * v:.4g} | {sd_t} | {dd_t} |')
    lines += ['', '| combination (core-scale units) | std | identifiable |', '|---|---|---|']
    for c, sd, ok in zip(unc.combinations, unc.combination_total_std, unc.identifiable):
        sd_t = f'{sd:.3g}' if np.isfinite(sd) else 'not seen'
        lines.append(f'| {c} | {sd_t} | {"yes" if ok else "no"} |')
    return lines


def consistency_warning(result: IdentResult) -> list:
    """Markdown lines heading the report of a set that is not physically consistent: that
    no URDF was written, each failing link with its problems, and :data:`CONSISTENT_ADVICE`;
    no lines for a consistent set."""
    if result.consistency.ok:
        return []
    lines = ['> **Not physically consistent: no URDF was written from this set.** '
             f'{len(result.consistency.failing)} of {len(result.consistency.links)} links '
             'fail:', '>']
    lines += [f'> - `{link.link}`: {"; ".join(link.problems)}'
              for link in result.consistency.links if not link.ok]
    return lines + ['>', f'> {CONSISTENT_ADVICE[0].upper()}{CONSISTENT_ADVICE[1:]}.', '']


def write_report(out_dir: Path, robot: Robot, result: IdentResult, t: np.ndarray,
                 zmp_measured: np.ndarray, zmp_predicted: Dict[str, np.ndarray],
                 pi_cad: np.ndarray, pi_true: Optional[np.ndarray] = None,
                 extra: Optional[Dict[str, str]] = None) -> Path:
    """Write ``report.md`` and ``zmp.png`` into ``out_dir``; returns the report path.

    A set that is not physically consistent is headed by :func:`consistency_warning`.
    """
    from legid_ros.core.metrics import zmp_deviation

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    plot_zmp(t, zmp_measured, zmp_predicted, out_dir / 'zmp.png')
    lines = [f'# Identification report ({result.method})', ''] + consistency_warning(result)
    if result.physical is not None:
        lines += ['## What the data determine', '',
                  'First the quantities the data determine (std: noise, model error and the '
                  "method's prior toward CAD), then every link's values, each flagged: "
                  'values flagged "prior" are decided by the prior toward CAD, within the std '
                  'shown.', '']
        lines += result.physical.markdown() + ['']
    lines += ['```', result.summary(physical=False), '```',
              '', '## ZMP: measured vs predicted', '', '![ZMP](zmp.png)', '',
              '| parameters | mean [mm] | 95th pct [mm] | max [mm] |', '|---|---|---|---|']
    for name, z in zmp_predicted.items():
        d = zmp_deviation(z, zmp_measured)
        lines.append(f'| {name} | {d.mean_mm:.2f} | {d.p95_mm:.2f} | {d.max_mm:.2f} |')
    lines += ['', '## Parameters against CAD' + (' and truth' if pi_true is not None else ''),
              '', 'Per-link values: see "What the data determine" for which the data decide.'
              if result.physical is not None else '',
              '', parameter_table(robot, result, pi_cad, pi_true), '',
              '## Physical consistency', '', '```', str(result.consistency), '```']
    if result.uncertainty is not None:
        lines += ['', '## Uncertainty', ''] + uncertainty_table(result.uncertainty)
    if result.friction is not None:
        nj = result.friction.size // 2
        lines += ['', '## Friction', '', '| joint | viscous [N.m.s/rad] | Coulomb [N.m] |',
                  '|---|---|---|']
        for j, name in enumerate(robot.actuated_joint_names[:nj]):
            lines.append(f'| {name} | {result.friction[j]:.3f} | '
                         f'{result.friction[nj + j]:.3f} |')
    for title, text in (extra or {}).items():
        lines += ['', f'## {title}', '', text]
    path = out_dir / 'report.md'
    path.write_text('\n'.join(lines) + '\n')
    return path
