"""Reference IK with pink (PyPI ``pin-pink``) on the same leg and targets, for comparison.

The leg's three pitch joints are kept (hip roll and spring locked at 0, other legs locked);
each target is the foot pose that the extended-Jacobian task defines (foot position and the
distal-link pitch ``a3``), so pink solves exactly the same square problem. Pink iterates
Gauss-Newton steps (``dt = 1``, task gain 1) until the position error is below ``tol_m`` and
the orientation error below ``tol_rad``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from legid_ros.core.errors import SolverError
from legid_ros.core.ik.leg import LegKinematics


@dataclass
class PinkResult:
    """Pink solutions of a target sequence.

    Attributes:
        th: Pitch joints per target (N, 3) [rad].
        iterations: QP iterations per target (N,).
        foot_err: Final foot position error per target [m].
    """

    th: np.ndarray
    iterations: np.ndarray
    foot_err: np.ndarray


class PinkLegSolver:
    """pink on the three pitch joints of one leg.

    Args:
        kin: The leg's kinematics (its model is reduced here).
        solver: qpsolvers backend; 'auto' takes quadprog (exact dense active set) when
            installed, else osqp with tolerances tight enough for 1e-9 m.
        solver_options: Backend options (override the defaults).
    """

    def __init__(self, kin: LegKinematics, solver: str = 'auto', **solver_options):
        import pink  # local import: optional heavy dependency
        from pink.tasks import FrameTask

        self._pink = pink
        model = kin.model
        keep = set(kin.joint_ids[1:])
        lock = [j for j in range(1, model.njoints) if j not in keep]
        self.model = pin.buildReducedModel(model, lock, pin.neutral(model))
        self.data = self.model.createData()
        self.frame = model.frames[kin.foot_frame].name
        self.hip = kin.hip_placement()
        self.task = FrameTask(self.frame, position_cost=1.0, orientation_cost=1.0)
        if solver == 'auto':  # a dense active-set solver suits these tiny QPs best
            import qpsolvers
            solver = 'quadprog' if 'quadprog' in qpsolvers.available_solvers else 'osqp'
        self.solver = solver
        self.options = solver_options or (
            {'eps_abs': 1e-12, 'eps_rel': 1e-12, 'verbose': False} if solver == 'osqp' else {})

    def target(self, xz: np.ndarray, a3: float) -> pin.SE3:
        """Foot pose in the reduced model's world for planar target (x, z) [m] and a3 [rad]."""
        rot = pin.utils.rpyToMatrix(0.0, -float(a3), 0.0)
        return self.hip * pin.SE3(rot, np.array([xz[0], 0.0, xz[1]]))

    def solve(self, xz: np.ndarray, a3: np.ndarray, th0: np.ndarray, tol_m: float = 1e-9,
              tol_rad: float = 1e-9, max_iter: int = 50) -> PinkResult:
        """Solve a sequence of targets, each warm-started from the previous solution.

        Raises:
            SolverError: A target did not converge in ``max_iter`` iterations.
        """
        pink = self._pink
        n = len(xz)
        th = np.empty((n, 3))
        iters = np.zeros(n, int)
        err = np.empty(n)
        conf = pink.Configuration(self.model, self.data, np.asarray(th0, float))
        for k in range(n):
            self.task.set_target(self.target(xz[k], a3[k]))
            for it in range(max_iter + 1):
                e = self.task.compute_error(conf)
                if np.linalg.norm(e[:3]) <= tol_m and np.linalg.norm(e[3:]) <= tol_rad:
                    break
                if it == max_iter:
                    raise SolverError('pink did not converge', status=f'error {e}',
                                      iterations=it, last_state=conf.q.copy())
                try:
                    vel = pink.solve_ik(conf, [self.task], 1.0, solver=self.solver,
                                        **self.options)
                except Exception as exc:  # noqa: BLE001  (pink's own exception classes)
                    raise SolverError(f'pink failed: {exc}', status=type(exc).__name__,
                                      iterations=it, last_state=conf.q.copy()) from exc
                conf.integrate_inplace(vel, 1.0)
            iters[k] = it
            th[k] = conf.q
            err[k] = np.linalg.norm(self.task.compute_error(conf)[:3])
        return PinkResult(th=th, iterations=iters, foot_err=err)
