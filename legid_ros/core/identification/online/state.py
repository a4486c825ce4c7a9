"""The whole state of an online estimator as plain arrays, and its restoration: what the
estimator node saves on ``save_state`` and loads at start-up (``np.savez``), so a restarted
node goes on from its statistics, not from CAD."""

from __future__ import annotations

from typing import Dict

import numpy as np

from legid_ros.core.errors import BadInputError
from legid_ros.core.identification.online.ankle_ft import AnkleFtRows


def state_of(est) -> Dict[str, np.ndarray]:
    """Plain numpy arrays of the whole state of an
    :class:`~legid_ros.core.identification.online.estimator.OnlineEstimator` (for
    ``np.savez``)."""
    ft = est.ankle.normal
    return {'H': est.normal.H.copy(), 'h': est.normal.h.copy(),
            'bb': np.array(est.normal.bb), 'n': np.array(est.normal.n),
            'x': np.asarray(est.x, float).copy(), 'pi': est.pi.copy(),
            'mass_sum': np.array(est.mass_sum), 'mass_n': np.array(est.mass_n),
            'dropped': np.array(est.dropped),
            'double_support_dropped': np.array(est.double_support_dropped),
            'method': np.array(est.method), 'param_set': np.array(est.param_set),
            'half_life_s': np.array(est.half_life_s),
            'reg': np.array(est.reg), 'sigma': np.array(est.sigma),
            'ft_H': ft.H.copy(), 'ft_h': ft.h.copy(), 'ft_bb': np.array(ft.bb),
            'ft_n': np.array(ft.n), 'ft_rows': np.array(est.ankle.rows),
            'ft_dropped': np.array(est.ankle.dropped),
            'ft_sigma': est.ankle.ft_sigma.copy(),
            **_solver_state(est),
            'full': np.asarray(est.full, float).copy(), 'solved': np.array(est.solved),
            **est.correlation.state(),
            **({'t_ref': np.array(est.forgetting.t_ref)}
               if np.isfinite(est.forgetting.t_ref) else {})}


def _solver_state(est) -> Dict[str, np.ndarray]:
    """The auto set's levels, or the LMI cuts kept by the standard-set solver: rows
    ``[link, v (4)]``."""
    levels = getattr(est.solver, 'levels', None)
    if levels and est.param_set == 'auto':  # the set chosen, as 'unit=level,...'
        return {'auto_levels': np.array(','.join(f'{u}={v}' for u, v in levels.items()))}
    cuts = getattr(est.solver, 'cuts', None)
    if cuts is None:
        return {}
    rows = [[i, *v] for i, vs in enumerate(cuts.cuts) for v in vs]
    return {'lmi_cuts': np.array(rows, float).reshape(-1, 5)}


def restore(est, state: Dict[str, np.ndarray]) -> None:
    """Restore ``est`` from a state of :func:`state_of` (same robot, method and parameter
    set).

    States written before the time-based forgetting and the parameter sets are read too
    (standard set; their per-sample forgetting factor is not carried over).
    """
    saved_set = str(state['param_set']) if 'param_set' in state else 'standard'
    if (str(state['method']) != est.method or state['H'].shape != est.normal.H.shape
            or saved_set != est.param_set):
        raise BadInputError(f'state is for method {str(state["method"])!r}, set '
                            f'{saved_set!r} with {state["H"].shape[0]} columns; estimator: '
                            f'{est.method!r}, set {est.param_set!r} with '
                            f'{est.normal.H.shape[0]}')
    est.normal.H = np.array(state['H'], float)
    est.normal.h = np.array(state['h'], float)
    est.normal.bb = float(state['bb'])
    est.normal.n = float(state['n'])
    est.x = np.array(state['x'], float)
    est.pi = np.array(state['pi'], float) if 'pi' in state else est.x.copy()
    full = np.array(state['full'], float) if 'full' in state else np.zeros(0)
    est.full = full if full.shape == est.full.shape else np.concatenate(
        [est.pi, np.zeros(est.nf)])
    est.solved = bool(state['solved']) if 'solved' in state else False
    est.correlation.load(state)
    est.mass_sum = float(state['mass_sum'])
    est.mass_n = float(state['mass_n'])
    est.dropped = int(state['dropped'])
    est.double_support_dropped = int(state.get('double_support_dropped', 0))
    est.forgetting.t_ref = float(state['t_ref']) if 't_ref' in state else -np.inf
    est.reg = float(state['reg'])
    est.sigma = float(state['sigma'])
    est.ankle = AnkleFtRows(est.robot, est.param.size,
                            state['ft_sigma'] if 'ft_sigma' in state else est._ft_sigma)
    if 'auto_levels' in state and est.param_set == 'auto' and str(state['auto_levels']):
        from legid_ros.core.identification.parameters.auto.levels import parse_levels
        est.solver.set_levels(parse_levels(str(state["auto_levels"])))
    cuts = getattr(est.solver, 'cuts', None)
    if cuts is not None and 'lmi_cuts' in state:  # valid whatever the data: kept
        for row in np.asarray(state['lmi_cuts'], float).reshape(-1, 5):
            if 0 <= int(row[0]) < cuts.n_links and np.linalg.norm(row[1:]) > 0:
                cuts.add_cut(int(row[0]), row[1:])
        cuts.refresh()
    if 'ft_H' in state:  # states saved before the ankle F/T rows have none
        est.ankle.normal.H = np.array(state['ft_H'], float)
        est.ankle.normal.h = np.array(state['ft_h'], float)
        est.ankle.normal.bb = float(state['ft_bb'])
        est.ankle.normal.n = float(state['ft_n']) if 'ft_n' in state else 0.0
        est.ankle.rows = float(state['ft_rows'])
        est.ankle.dropped = int(state['ft_dropped'])
    est._unc, est._unc_t = None, -np.inf  # of the data before: recomputed
    est._exc, est._exc_t = None, -np.inf
