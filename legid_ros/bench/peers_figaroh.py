"""FIGAROH's dynamic identification run through its own workflow class, for ``legid bench peers``.

FIGAROH (figaroh 1.0.2, ``pip install figaroh``) is used as its documentation and examples
show: a unified YAML config written for the robot, the robot loaded from a URDF by
:func:`figaroh.tools.robot.load_robot`, and a subclass of
:class:`figaroh.identification.base_identification.BaseIdentification` that only says where
the data are (``load_trajectory_data``) and which joints are active, as FIGAROH's robot
examples do. FIGAROH then filters and differentiates the positions, builds its regressor
(rigid body + its friction ``fv qd + fs sign(qd)``, actuator inertia ``ia qdd`` and a joint
offset), finds its base parameters by QR, and solves by least squares, by its weighted least
squares, or by its physically consistent LMI fit (``select_stage: physical_fit``, cvxopt).
The held-out run goes in as FIGAROH's ``validation_data_file`` and its predictions are read
from ``result['validation_metrics']``.

Both tools get the same random Fourier excitation here; FIGAROH's optimal excitation design is
compared with ours apart (:mod:`legid_ros.bench.excitation_figaroh`, ``legid bench
excitation``).
"""

from __future__ import annotations

import contextlib
import io
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import numpy as np
import yaml

# variant name -> (weighted LS, physically consistent fit, joint offset column)
VARIANTS = {'ls': (False, False, True), 'wls': (True, False, True),
            'physical_fit': (False, True, True), 'ls_no_offset': (False, False, False),
            'physical_fit_no_offset': (False, True, False)}
PHYSICAL_SOLVER = 'cvxopt'
# QR rank threshold relative to the largest pivot: FIGAROH's own advice (its warning on an
# ill-conditioned base regressor, and its SO-101 example) instead of the absolute 1e-6
QR_RELATIVE_TOLERANCE = 1e-4


@dataclass
class Trajectory:
    """One recording as FIGAROH reads it.

    Attributes:
        t: Times [s], (N,).
        q: Measured joint positions [rad], (N, nj), columns in ``joints`` order.
        tau: Measured joint torques [N.m], (N, nj).
    """

    t: np.ndarray
    q: np.ndarray
    tau: np.ndarray


@dataclass
class FigarohSettings:
    """FIGAROH settings of one case (the same filter as ours).

    Attributes:
        urdf: URDF FIGAROH loads (fixed base).
        joints: Active joints, in the recordings' column order.
        rate_hz: Sample rate [Hz]. cutoff_hz: Butterworth cut-off [Hz] (order 4).
        decimation: FIGAROH's decimation factor of the regressor and torques.
        friction, actuator_inertia: FIGAROH's model components (the joint offset is set
            per variant).
        actuator_inertia_prior: CAD actuator inertias [kg.m^2] (prior of the physical fit).
        qr_relative_tolerance: FIGAROH's relative QR rank threshold (None: its absolute one).
    """

    urdf: Path
    joints: List[str]
    rate_hz: float
    cutoff_hz: float
    decimation: int = 5
    friction: bool = True
    actuator_inertia: bool = True
    actuator_inertia_prior: Optional[Sequence[float]] = None
    qr_relative_tolerance: Optional[float] = QR_RELATIVE_TOLERANCE


@dataclass
class FigarohResult:
    """One FIGAROH variant on one case.

    Attributes:
        variant: A key of :data:`VARIANTS`.
        status: 'ok' or 'failed' (with ``reason``).
        wall_s: Data processing + regressor + solve [s] (its held-out evaluation excluded).
        cpu_s: The same in process CPU time [s] (steadier than wall time on a shared host).
        tau_heldout: Predicted held-out torques (N, nj) [N.m].
        base_names: FIGAROH's base parameter expressions. phi_base: Their values.
        consistent: Physical consistency of the reported estimate (None: not checked: plain
            base parameters carry no per-link inertia to check).
        cond: Condition number of FIGAROH's base regressor.
        info: Extra facts (physical fit status, stages).
    """

    variant: str
    status: str
    reason: str = ''
    wall_s: float = float('nan')
    cpu_s: float = float('nan')
    tau_heldout: Optional[np.ndarray] = None
    base_names: List[str] = field(default_factory=list)
    phi_base: Optional[np.ndarray] = None
    base_regressor: Optional[np.ndarray] = None
    consistent: Optional[bool] = None
    cond: float = float('nan')
    info: dict = field(default_factory=dict)


def write_config(path: Path, name: str, s: FigarohSettings, variant: str) -> Path:
    """Write FIGAROH's unified identification config for one variant."""
    wls, physical, offset = VARIANTS[variant]
    n = len(s.joints)
    prior = [float(x) for x in (s.actuator_inertia_prior or [0.0] * n)]
    task = {
        'type': 'dynamic_identification', 'enabled': True,
        'problem': {'use_joint_torques': True, 'include_external_forces': False, 'wls': wls,
                    'qr_relative_tolerance': s.qr_relative_tolerance,
                    'model_components': {'friction': s.friction,
                                         'actuator_inertia': s.actuator_inertia,
                                         'joint_offset': offset}},
        'signal_processing': {'sampling_frequency': float(s.rate_hz),
                              'cutoff_frequency': float(s.cutoff_hz),
                              'filter_type': 'butterworth', 'filter_order': 4},
        'data': {'validation_data_file': 'heldout'},
    }
    if physical:
        task['select_stage'] = 'physical_fit'
        task['physical_fit'] = {'enabled': True, 'solver': PHYSICAL_SOLVER}
    cfg = {
        'meta': {'schema_version': '2.0'},
        'robot': {'name': name, 'properties': {
            'joints': {'active_joints': list(s.joints)},
            'mechanics': {'reduction_ratios': [1.0] * n,
                          'friction_coefficients': {'viscous': [0.0] * n,
                                                    'static': [0.0] * n},
                          'actuator_inertias': prior, 'joint_offsets': [0.0] * n}}},
        'tasks': {'identification': task},
    }
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def _identification_class():
    """The workflow subclass (built lazily: figaroh is imported only when a case runs)."""
    from figaroh.identification.base_identification import BaseIdentification

    class ArrayIdentification(BaseIdentification):
        """FIGAROH's workflow on in-memory recordings ('train' and 'heldout')."""

        def __init__(self, robot, config_file, sets: Dict[str, Trajectory],
                     settings: FigarohSettings):
            self._sets = sets
            self.eval_s = 0.0
            self.eval_cpu_s = 0.0
            super().__init__(robot, config_file)
            cfg = self.identif_config
            jids = [self.model.getJointId(j) for j in settings.joints]
            cfg['act_Jid'] = jids
            cfg['act_J'] = [self.model.joints[j] for j in jids]
            cfg['act_idxq'] = [self.model.joints[j].idx_q for j in jids]
            cfg['act_idxv'] = [self.model.joints[j].idx_v for j in jids]
            cfg['idx_act_joints'] = [j - 1 for j in jids]
            self.filter_config = {'differentiation_method': 'gradient',
                                  'filter_params': {'nbutter': 4,
                                                    'f_butter': settings.cutoff_hz,
                                                    'med_fil': 5,
                                                    'f_sample': settings.rate_hz}}

        def load_trajectory_data(self, data_source: str = None):
            d = self._sets[data_source or 'train']
            return {'timestamps': d.t.reshape(-1, 1), 'positions': d.q, 'velocities': None,
                    'accelerations': None, 'torques': d.tau}

        def _load_validation_data(self, data_source):  # timed apart: held-out evaluation
            t0, c0 = time.perf_counter(), time.process_time()
            try:
                return super()._load_validation_data(data_source)
            finally:
                self.eval_s += time.perf_counter() - t0
                self.eval_cpu_s += time.process_time() - c0

        def _compute_validation_metrics(self):  # timed apart: held-out evaluation
            t0, c0 = time.perf_counter(), time.process_time()
            try:
                return super()._compute_validation_metrics()
            finally:
                self.eval_s += time.perf_counter() - t0
                self.eval_cpu_s += time.process_time() - c0

    return ArrayIdentification


@contextlib.contextmanager
def _quiet(extra_loggers=()):
    """FIGAROH prints its quality report on stdout and logs warnings: keep both out (and the
    loggers named in ``extra_loggers``, '' for the root logger)."""
    loggers = [logging.getLogger(n or None)
               for n in ('figaroh', 'UnifiedConfigParser', *extra_loggers)]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        for lg, lv in zip(loggers, levels):
            lg.setLevel(lv)


def _heldout_prediction(val: dict, joints: List[str]) -> np.ndarray:
    pred = val['tau_identified_per_joint']
    return np.column_stack([np.asarray(pred[j], float) for j in joints])


def run_variant(workdir: Path, name: str, settings: FigarohSettings, train: Trajectory,
                heldout: Trajectory, variant: str) -> FigarohResult:
    """Run one FIGAROH variant on ``train``; predict ``heldout``."""
    import warnings

    from figaroh.tools.robot import load_robot

    config = write_config(workdir / f'{name}_{variant}.yaml', name, settings, variant)
    cls = _identification_class()
    try:
        with _quiet(), warnings.catch_warnings():
            warnings.simplefilter('ignore')
            t0, c0 = time.perf_counter(), time.process_time()
            robot = load_robot(str(settings.urdf), package_dirs=str(settings.urdf.parent))
            iden = cls(robot, str(config), {'train': train, 'heldout': heldout}, settings)
            iden.initialize()
            iden.solve(decimate=settings.decimation > 1,
                       decimation_factor=max(2, int(settings.decimation)), plotting=False,
                       save_results=False, wls=VARIANTS[variant][0])
            wall = time.perf_counter() - t0 - iden.eval_s
            cpu = time.process_time() - c0 - iden.eval_cpu_s
    except Exception as exc:  # report FIGAROH's failure, never hide it
        return FigarohResult(variant, 'failed', f'{type(exc).__name__}: {exc}')
    res = iden.result
    val = res.get('validation_metrics') or {}
    if val.get('validation_source') != 'validation_data':
        return FigarohResult(variant, 'failed', 'held-out run not used by FIGAROH',
                             wall_s=wall)
    out = FigarohResult(variant, 'ok', wall_s=wall, cpu_s=cpu,
                        tau_heldout=_heldout_prediction(val, settings.joints),
                        base_names=list(iden.params_base),
                        phi_base=np.asarray(iden.phi_base, float),
                        base_regressor=np.asarray(res['base regressor'], float),
                        cond=float(res['condition number']))
    sel = res.get('selected')
    if VARIANTS[variant][1]:
        pf = res.get('physical_fit') or {}
        out.info['physical_fit'] = {k: pf.get(k) for k in ('status', 'reason', 'solver_status',
                                                           'runtime_s')}
        accepted = bool(sel and sel.get('status') == 'accepted')
        out.consistent = accepted and all(v['ok'] for v in sel['feasibility'].values())
        if not accepted:
            out.status = 'failed'
            out.reason = f"physical fit rejected: {(sel or {}).get('reason', pf.get('reason'))}"
        elif sel.get('phi_base_equivalent') is not None:
            out.info['phi_base_fit'] = out.phi_base
            out.phi_base = np.asarray(sel['phi_base_equivalent'], float)
    return out


def true_base(base_names: List[str], truth: Dict[str, float]) -> np.ndarray:
    """FIGAROH's base parameters evaluated on a true standard parameter dict.

    Uses FIGAROH's own :func:`base_param_from_standard` on its base-parameter expressions;
    parameters missing from ``truth`` (friction, offsets: the truth is outside that class)
    count as zero.
    """
    from figaroh.identification.identification_tools import base_param_from_standard

    class _Zero(dict):
        def __missing__(self, key):
            return 0.0

    return np.asarray(base_param_from_standard(_Zero(truth), base_names), float)


def rigid_mask(base_names: List[str]) -> np.ndarray:
    """Base parameters led by a rigid-body or actuator-inertia parameter.

    A base parameter is named by its independent column first, then the columns regrouped into
    it; those led by friction (``fv_``, ``fs_``) or offset (``off_``) columns are left out
    (their truth is outside the model class; small numerical regroupings into rigid ones
    count at zero).
    """
    return np.array([not n.split(' ')[0].split('*')[-1].startswith(('fv_', 'fs_', 'off_'))
                     for n in base_names])


def figaroh_version() -> str:
    """Installed FIGAROH version ('' if not importable)."""
    try:
        import figaroh
        return str(figaroh.__version__)
    except ImportError:
        return ''
