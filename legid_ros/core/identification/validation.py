"""ZMP validation of an identified set on held-out samples, and its report.

The held-out recording (the last quarter of the bag, or a second bag) is prepared exactly as
the training one, its wrench regressors computed once, and each set's predicted ZMP compared
with the measured one (:func:`legid_ros.core.identification.report.write_report` writes the
report and its plot). None of this depends on the identification until the predictions, so
:class:`HeldOutValidation` does it in a second process (forked: nothing is copied or
pickled on the way in) while the identification runs in the first, and then the predictions
and the report there too. The same process reads the recordings first (a loader the caller
gives, e.g. the bag reader) while the first imports the identification's modules, and sends
back the training part only. On a machine with two cores the read overlaps the imports and
the validation overlaps the identification.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Optional

import numpy as np

# what the forked worker inherits from the parent and keeps between its two jobs
_JOB: dict = {}


@dataclass
class ValidationOutcome:
    """What the validation gives the caller.

    Attributes:
        report: Path of ``report.md`` (beside it ``zmp.png``).
        dev_mm: Mean ZMP deviation from the measured one per parameter set ('identified',
            'CAD', 'truth' when known) [mm].
        n_samples: Held-out samples compared.
    """

    report: Path
    dev_mm: Dict[str, float]
    n_samples: int


def _prepare(rec, robot, prep) -> dict:
    """The held-out samples and their wrench regressors."""
    from legid_ros.core.identification.prepare import prepare
    from legid_ros.core.identification.rows.linear import regressors_for

    samples = prepare(rec, robot, prep)
    return {'robot': robot, 'samples': samples,
            'wrench': regressors_for(samples, robot, []).wrench}


def _report(state: dict, out: Path, result, pi_cad: np.ndarray,
            pi_true: Optional[np.ndarray]) -> ValidationOutcome:
    """Predictions of each set, the deviations and the report."""
    from legid_ros.core.identification.report import write_report
    from legid_ros.core.identification.rows.zmp import model_zmp

    samples, wrench = state['samples'], state['wrench']
    sets = {'identified': result.pi, 'CAD': pi_cad}
    if pi_true is not None:
        sets['truth'] = pi_true
    pred = {name: model_zmp(wrench, pi)[0] for name, pi in sets.items()}
    dev = {name: float(np.linalg.norm(z - samples.zmp, axis=1).mean() * 1e3)
           for name, z in pred.items()}
    extra = None
    if result.info.get('auto_selection'):  # the set chosen by the data, as a table
        from legid_ros.core.identification.parameters.auto.report import selection_markdown
        extra = {'Parameter set chosen by the data': selection_markdown(
            result.info['auto_selection'])}
    path = write_report(out, state['robot'], result, samples.t, samples.zmp, pred, pi_cad,
                        pi_true, extra)
    return ValidationOutcome(Path(path), dev, int(samples.n))


def _load_job():
    """Worker: load the recordings, keep the held-out one, return the training one."""
    train, held = _JOB.pop('load')()
    _JOB['held'] = held
    return train


def _prepare_job(prep) -> int:
    """Worker: prepare the held-out recording; warm the report's imports meanwhile."""
    import matplotlib.backends.backend_agg  # noqa: F401  (the report's plot)
    import matplotlib.figure  # noqa: F401

    _JOB['state'] = _prepare(_JOB.pop('held'), _JOB['robot'], prep)
    return int(_JOB['state']['samples'].n)


def _report_job(out: Path, result, pi_cad, pi_true) -> ValidationOutcome:
    """Worker: the report from the prepared state."""
    return _report(_JOB['state'], out, result, pi_cad, pi_true)


class HeldOutValidation:
    """The recordings loaded, the held-out one prepared and, later, compared with an
    identified set: in a second process when the platform forks, else in this one.

    Use: :meth:`start_load` (the worker reads while this process imports the identification),
    :meth:`training` (the training recording, sent back), :meth:`prepare` (the held-out one
    is prepared in the worker while this process prepares and identifies), :meth:`report`.

    Args:
        robot: The robot (inherited by the worker, never pickled).
        background: Use a second process when the platform forks (False: all in this one).
    """

    def __init__(self, robot, background: bool = True):
        self._robot = robot
        self._pool = None
        self._local: dict = {}
        self._jobs = []
        if background and 'fork' in multiprocessing.get_all_start_methods():
            self._pool = concurrent.futures.ProcessPoolExecutor(
                1, mp_context=multiprocessing.get_context('fork'))

    def start_load(self, load: Callable[[], tuple]) -> None:
        """Run ``load() -> (training recording, held-out recording)`` (in the worker)."""
        if self._pool is None:
            self._local['train'], self._local['held'] = load()
            return
        _JOB.update(load=load, robot=self._robot)  # inherited by the fork, never pickled
        try:
            self._loaded = self._pool.submit(_load_job)
        finally:
            _JOB.clear()

    def training(self):
        """The training recording (waits for the load; raises what the load raised)."""
        if self._pool is None:
            return self._local.pop('train')
        return self._loaded.result()

    def prepare(self, prep) -> None:
        """Start preparing the held-out recording with the training samples' options."""
        if self._pool is None:
            self._local['state'] = _prepare(self._local.pop('held'), self._robot, prep)
        else:
            self._prepared = self._pool.submit(_prepare_job, prep)

    def report(self, out: Path, result, pi_cad: np.ndarray,
               pi_true: Optional[np.ndarray] = None) -> ValidationOutcome:
        """Compare ``result`` (and CAD, and the truth when known) on the held-out samples and
        write the report into ``out``.

        Raises:
            Whatever the preparation of the held-out recording raised (e.g.
            :class:`legid_ros.core.errors.BadInputError` for too few usable samples).
        """
        if self._pool is None:
            return _report(self._local['state'], Path(out), result, pi_cad, pi_true)
        try:
            self._prepared.result()  # its error, if the preparation failed
            return self._pool.submit(_report_job, Path(out), result, pi_cad,
                                     pi_true).result()
        finally:
            self.close()

    def close(self) -> None:
        """Stop the second process (if any)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
