"""Estimator node: online identification on the buffer's windows.

Subscribes ``legid/window``; folds each new row once into the sufficient statistics of
:class:`legid_ros.core.identification.online.OnlineEstimator` (constant cost per update) and
solves every ``update_period_s``. Publishes ``legid/parameters`` (standard parameters, names in
the layout; transient local), ``legid/zmp/predicted``, ``legid/markers`` and ``/diagnostics``
(solve time, residual, condition number, consistency); a solution that is not physically
consistent is never published: the solvers enforce consistency (LMIs, or a parameter set whose
points are all consistent), nothing is substituted. ``/diagnostics`` carries the standard
deviation of every core parameter (group masses [kg], COM offsets [m]) and the poorly
determined combinations; the markers draw each group's COM sphere with a radius of its COM
standard deviation. Forgetting is defined in time (``forgetting_half_life_s``). Services
``~/save`` (identified URDF + YAML + state) and ``~/reset``. With ``use_ankle_ft``, windows
carrying raw ankle F/T channels add the swinging feet's F/T rows (the ZMP alone cannot tell the
foot mass from the shank's). ``base_acc`` and ``min_contacts`` fold as ``legid identify``'s
``--base-acc`` and ``--min-contacts`` prepare (fast gaits). The state
(:mod:`legid_ros.ros.estimator_files`) is saved on ``~/save`` and shutdown, restored at start.
The weights, periods and outputs marked ``runtime`` in ``PARAMETERS`` may change while it runs.

A window that cannot be used costs that window and a count per cause in ``/diagnostics``
(published at most once per period); nothing non-finite is ever published. A state file that
cannot be restored (truncated, empty, NaN, another robot or method) is moved aside as
``<name>.corrupt-<time>``, reported once, and the estimator starts fresh. At start-up a method
the sensing cannot feed (``floating_qp`` without 6-axis foot wrenches) is refused in one line.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PointStamped
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger
from visualization_msgs.msg import MarkerArray

from legid_ros.core.atomic_files import quarantine, remove_stale_temps
from legid_ros.core.buffer.window import support_to_world, unpack_window
from legid_ros.core.contact.base_state import support_base_state
from legid_ros.core.errors import LegidError, NotIdentifiableError, SolverNotConvergedError
from legid_ros.core.identification.defaults import resolve
from legid_ros.core.identification.online import OnlineEstimator
from legid_ros.core.identification.online.solve import default_reg
from legid_ros.core.identification.rows.zmp import model_zmp_from_state
from legid_ros.core.inertial import check_consistency
from legid_ros.core.pipeline.online_folding import FoldSettings, WindowFolder
from legid_ros.core.pipeline.scene import SceneBuilder, scene_to_world
from legid_ros.core.robot import load_robot
from legid_ros.ros import conversions as cv
from legid_ros.ros.estimator_files import load_state, save_state, write_identified
from legid_ros.ros.estimator_parameters import (  # noqa: F401  (re-exported)
    DIAG_NAME, METHODS, PARAMETERS, auto_levels_of, param_set_of, refuse_method)
from legid_ros.ros.executor import run_node
from legid_ros.ros.node_util import latched_qos
from legid_ros.ros.parameters import declare_parameters
from legid_ros.ros.robustness import GuardedNode


class EstimatorNode(GuardedNode):
    """ROS adapter around :class:`OnlineEstimator`."""

    def __init__(self, **kwargs):
        super().__init__('estimator', **kwargs)
        p = self.p = declare_parameters(self, PARAMETERS, apply=self._apply_parameters)
        self.diag_gate.period_s = p.diagnostics_period_s
        self.robot = load_robot(p.robot)
        sensing = p.force_sensing or self.robot.description.get('force_sensing', 'wrench')
        self.choice = resolve(self.robot, p.method, p.param_set, sensing)
        self.method = self.choice.method
        self.param_set = param_set_of(self.method, self.choice.param_set or '')
        refuse_method(self.method, sensing)
        self.auto_levels = auto_levels_of(self.robot, self.param_set, p.auto_levels)
        self.est = self._new_estimator()
        self.scene = SceneBuilder(self.robot)
        self.pub_params = self.create_publisher(Float64MultiArray, 'legid/parameters',
                                                latched_qos())
        self.pub_zmp = self.create_publisher(PointStamped, 'legid/zmp/predicted', 10)
        self.pub_markers = self.create_publisher(MarkerArray, 'legid/markers', 10)
        self.pub_diag = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self.create_subscription(Float64MultiArray, 'legid/window', self._on_window, 50)
        self.pub_tf = None
        if p['publish_tf']:
            try:
                from tf2_msgs.msg import TFMessage
                self._tf_cls = TFMessage
                self.pub_tf = self.create_publisher(TFMessage, '/tf', 10)
            except ImportError:
                self.get_logger().info('tf2_msgs not installed: no world -> base transform')
        self.create_service(Trigger, '~/save', self._on_save)
        self.create_service(Trigger, '~/reset', self._on_reset)
        p.timer('update_period_s', self._update)
        p.timer('diagnostics_period_s', self._on_diag_timer)
        self.folder = WindowFolder(self._fold_settings())
        self.windows = 0
        self.folded = 0
        self.new_since_update = 0
        self.updates = 0
        self.rejected = 0
        self.result = None
        self.published = None  # (pi, names) last published (consistent) set
        self.events = {}
        self.last_error = ''
        self.solve_times = []
        self.consistent = None
        self.restored = False
        self.restored = self._restore()
        if self.published is not None:
            self._publish_parameters()
        self.get_logger().info(
            f'estimator: {self.choice.line()}, {self.robot.name}'
            + (f', state restored from {p["state_file"]} ({self.est.normal.n:.0f} samples)'
               if self.restored else ''))

    def _new_estimator(self) -> OnlineEstimator:
        p = self.p
        return OnlineEstimator(
            self.robot, method=METHODS[self.method], param_set=self.param_set,
            half_life_s=p.forgetting_half_life_s,
            reg=p.regularization if p.regularization >= 0 else None,
            total_mass=p.total_mass_kg if p.total_mass_kg > 0 else None,
            min_samples=p.min_samples,
            ft_sigma=(p.ankle_ft_force_sigma_n, p.ankle_ft_moment_sigma_nm),
            auto_levels=self.auto_levels)

    def _fold_settings(self) -> FoldSettings:
        p = self.p
        return FoldSettings(margin_rows=int(p.fold_margin_rows),
                            derivative_window_s=p.derivative_window_s, smooth_zmp=p.smooth_zmp,
                            fold_rate_hz=p.fold_rate_hz, use_ankle_ft=p.use_ankle_ft,
                            jump_back_s=p.jump_back_s, base=p.base_state,
                            base_acc=p.base_acc, min_contacts=int(p.min_contacts),
                            transition_s=None if p.transition_s < 0 else p.transition_s)

    def _apply_parameters(self, changes):
        """Run-time estimator settings (timers follow their periods; the rest is read on use)."""
        self.diag_gate.period_s = self.p.diagnostics_period_s
        est = self.est
        if 'forgetting_half_life_s' in changes:
            est.half_life_s = changes['forgetting_half_life_s']
        est.min_samples = changes.get('min_samples', est.min_samples)
        if 'regularization' in changes:
            reg = changes['regularization']
            if reg >= 0:
                est.reg = reg
            else:  # the set's default, chosen again from the data where the set's weight is
                est.reg = default_reg(est.param_set)
                est.choose_reg_from_data()

    # ------------------------------------------------------------------ input
    def _event(self, kind: str, message: str, level: str = 'warn'):
        """Count ``kind``; its first occurrence is logged and published early (at most one
        /diagnostics publication per period)."""
        first = kind not in self.events
        self.events[kind] = self.events.get(kind, 0) + 1
        self.last_error = message[:500]
        if first:
            self.get_logger().warning(f'{kind}: {message}'[:500])
            self.publish_diagnostics_now(level=level, message=message[:500])

    def _on_window(self, msg: Float64MultiArray):
        try:
            self._fold(msg)
        except (LegidError, ValueError, IndexError, TypeError, KeyError,
                FloatingPointError, np.linalg.LinAlgError) as exc:
            self._event('bad_window', str(exc), 'error')

    def _fold(self, msg):
        win, schema = cv.window_from_msg(msg)
        data = unpack_window(win, schema)
        self.windows += 1
        out = self.folder.fold(self.est, data)
        for kind, message in out.events:
            self._event(kind, message)
        self.folded += out.folded
        self.new_since_update += out.folded
        if out.new_rows:
            self._publish_views(data, out.view_row, out.qd, out.qdd)

    # ---------------------------------------------------------------- solving
    def _update(self):
        if self.new_since_update == 0:
            return
        try:
            res = self.est.update()
        except NotIdentifiableError as exc:
            self.last_error = str(exc)
            return
        except SolverNotConvergedError as exc:
            self._event('solver_not_converged', f'{exc}; previous parameters kept', 'warn')
            return
        except LegidError as exc:
            self._event('solver_error', str(exc), 'error')
            return
        self.new_since_update = 0
        self.updates += 1
        self.result = res
        self.solve_times.append(res.solve_time_s)
        del self.solve_times[:-1000]
        pi = res.pi.copy()
        if not np.isfinite(pi).all():
            self.rejected += 1
            self._event('nonfinite_solution', 'solution not finite; not published', 'error')
            return
        report = check_consistency(pi, self.robot.body_names)
        self.consistent = report.ok
        if not report.ok:
            self.rejected += 1
            self._event('inconsistent_solution', 'solution not physically consistent (links '
                        f'{", ".join(report.failing)}); not published', 'error')
            return
        self.published = (pi, list(res.param_names))
        if res.uncertainty is not None:
            self.scene.set_uncertainty(dict(zip(res.uncertainty.names, res.uncertainty.std)))
        self._publish_parameters()

    def _publish_parameters(self):
        pi, names = self.published
        self.pub_params.publish(cv.parameters_msg(pi, names))
        self.scene.set_parameters(pi)

    def _publish_views(self, data, k, qd, qdd):
        if not data.ok[k] or not np.isfinite(data.q[k]).all():
            return
        frame = self.p['world_frame']
        try:
            st = support_base_state(self.robot, data.q[k:k + 1], qd[k:k + 1], qdd[k:k + 1],
                                    data.support[k], data.imu_quat[k:k + 1])
        except LegidError:
            return
        anchor = data.anchor[k] if data.anchor is not None else np.zeros(2)
        heading = float(data.heading[k]) if data.heading is not None else 0.0
        if not (np.isfinite(anchor).all() and np.isfinite(heading)):
            anchor, heading = np.zeros(2), 0.0
        pred = None
        if self.published is not None:
            pred = model_zmp_from_state(self.robot, st['q'][0], st['v'][0], st['a'][0],
                                        self.published[0])
            if np.isfinite(pred[:2]).all() and np.isfinite(data.t[k]):
                pred = support_to_world(pred[:2], anchor, heading)[0]
                self.pub_zmp.publish(cv.point_msg(data.t[k], frame, pred[0], pred[1]))
            else:
                pred = None
        if self.pub_tf is not None and np.isfinite(data.base[k]).all():
            self.pub_tf.publish(self._tf_cls(transforms=[cv.transform_msg(
                data.t[k], frame, self.robot.base_link, data.base[k])]))
        if self.p['publish_markers']:
            feet = [f for f, c in zip(data.feet, data.contact[k]) if c > 0.5]
            scene = scene_to_world(self.scene.scene(st['q'][0], feet), anchor, heading)
            self.pub_markers.publish(cv.markers_msg(data.t[k], frame, scene, np.zeros(3),
                                                    data.zmp_world[k], pred))

    # --------------------------------------------------------- state, services
    def _state_path(self):
        return Path(self.p['state_file']) if self.p['state_file'] else None

    def save_state(self) -> Path:
        """Write the estimator state (.npz, no pickle); returns the path."""
        path = self._state_path()
        if path is None:
            return None
        return save_state(path, self.est, self.robot.name, self.folded, self.published)

    def _restore(self) -> bool:
        """Restore the state file; one that cannot be used is moved aside (fresh start)."""
        path = self._state_path()
        if path is None:
            return False
        remove_stale_temps(path)  # left by a save killed mid-write
        if not path.is_file():
            return False
        try:
            self.folded, self.published = load_state(path, self.est, self.robot.name)
            return True
        except Exception as exc:  # noqa: BLE001  (BadZipFile, EOFError, ...: never fatal)
            self.est = self._new_estimator()
            self.folded, self.published = 0, None
            try:
                aside = f'moved aside as {quarantine(path)}'
            except OSError as err:
                aside = f'cannot move it aside ({err})'
            self._event('state_file_unusable', f'cannot restore {path}: '
                        f'{type(exc).__name__}: {exc}; {aside}; starting fresh', 'error')
            return False

    def _on_save(self, request, response):
        try:
            state = self.save_state()
            written = [] if state is None else [state]
            if self.published is not None:
                extra = {'method': self.method, 'samples': int(self.est.normal.n)}
                if self.result is not None:
                    r = self.result
                    extra.update({'residual_rms': float(r.residual_rms),
                                  'condition_number': float(r.condition_number),
                                  'param_set': self.est.param_set,
                                  'consistent_by': r.info.get('consistent_by', ''),
                                  'forgetting_half_life_s': float(self.est.half_life_s)})
                    if r.uncertainty is not None:
                        u = r.uncertainty
                        extra['std'] = {n: float(v) for n, v in zip(u.names, u.std)}
                        extra['poorly_determined'] = [
                            c for c, ok in zip(u.combinations, u.identifiable) if not ok]
                written += write_identified(Path(self.p['output_dir']), self.robot,
                                            self.published[0], extra)
            # absolute paths: the caller (legid save, ros2 service call) runs elsewhere
            response.message = ('wrote ' + ', '.join(str(Path(p).absolute()) for p in written)
                                if written else 'nothing written (state_file is empty)')
            if self.published is None:
                response.message += ' (no parameter set yet: no URDF or YAML written)'
            response.success = True
        except (LegidError, OSError, ValueError) as exc:
            response.success = False
            response.message = f'save failed: {exc}'
        return response

    def _on_reset(self, request, response):
        self.est.reset()
        self.folder.reset()
        self.result = None
        self.published = None
        self.new_since_update = 0
        response.success = True
        response.message = 'estimator reset (statistics and solution forgotten)'
        return response

    def on_shutdown(self):
        """Called by :func:`run_node` on exit: save the state."""
        path = self.save_state()
        if path is not None:
            print(f'estimator: state saved to {path}', flush=True)

    # ------------------------------------------------------------ diagnostics
    def status(self):
        """(level, message, values) of the current diagnostic."""
        r = self.result
        values = {'windows': self.windows, 'samples_folded': self.folded,
                  'samples_in_statistics': f'{self.est.normal.n:.0f}', 'updates': self.updates,
                  'rejected_inconsistent': self.rejected, 'restored': self.restored,
                  'total_mass_kg': self.est.total_mass,
                  'ankle_ft_rows': f'{self.est.ft_rows:.0f}',
                  'ankle_ft_dropped': self.est.ft_dropped}
        if self.folder.choice is not None:  # what the contacts decided (base state, margin)
            values['rows'] = self.folder.choice.text()
        values.update({f'event.{k}': v for k, v in sorted(self.events.items())})
        values.update({f'event.{k}': v for k, v in sorted(self.problems.counts.items())})
        level, message = 'ok', 'ok'
        if r is None:
            level, message = 'warn', self.last_error or 'waiting for data'
        else:
            values.update({'solve_time_ms': 1000 * r.solve_time_s,
                           'solve_cpu_ms': 1000 * float(r.info.get('cpu_time_s', np.nan)),
                           'residual_rms_m': r.residual_rms,
                           'condition_number': r.condition_number,
                           'consistent': bool(self.consistent),
                           'raw_solution_consistent': r.consistency.ok,
                           'param_set': self.est.param_set,
                           'consistent_by': r.info.get('consistent_by', ''),
                           'forgetting_half_life_s': self.est.half_life_s,
                           'solver_status': r.info.get('status', '')})
            values.update(physical_values(self.robot, r))
            values.update(uncertainty_values(r.uncertainty))
            if not self.consistent:
                level, message = 'error', 'last solution inconsistent (not published)'
        if (self.events or self.problems.counts) and level == 'ok':
            level = 'warn'
            message = 'input problems: ' + ', '.join(sorted(self.events)
                                                     + sorted(self.problems.counts))
        return level, message, values

    def _publish_diagnostics(self, level=None, message=None):
        lv, msg, values = self.status()
        now = self.get_clock().now().nanoseconds * 1e-9
        self.pub_diag.publish(cv.diagnostic_msg(now, DIAG_NAME, 'legid_ros', level or lv,
                                                message or msg, values))


def physical_values(robot, result) -> dict:
    """Diagnostic values leading with what the data determine
    (:func:`legid_ros.core.identification.summary.summarize`); none when it cannot be made."""
    from legid_ros.core.identification.summary import summarize
    unc = getattr(result, 'uncertainty', None)
    if unc is None or not getattr(unc, 'covariance_pi', np.zeros(0)).size:
        return {}
    try:
        if getattr(result, 'physical', None) is None:  # once per solution, not per period
            result.physical = summarize(robot, result.pi, unc)
        return result.physical.diagnostic_values()
    except (ValueError, np.linalg.LinAlgError, KeyError, IndexError) as exc:
        return {'determined': f'not computed ({type(exc).__name__})'}


def uncertainty_values(unc) -> dict:
    """Diagnostic values of an :class:`Uncertainty`: std per core parameter, poor combinations."""
    if unc is None:
        return {}
    out = {}
    for name, std in zip(unc.names, unc.std):
        unit = 'kg' if name.startswith('m_') else 'm'
        out[f'std.{name}_{unit}'] = f'{std:.3g}' if np.isfinite(std) else 'not determined'
    poor = [c for c, ok in zip(unc.combinations, unc.identifiable) if not ok]
    out['poorly_determined'] = '; '.join(poor[:4]) + (f' (+{len(poor) - 4})'
                                                      if len(poor) > 4 else '')
    return out


def main(args=None) -> int:
    """Console script ``estimator_node``."""
    return run_node(EstimatorNode, args)


if __name__ == '__main__':
    raise SystemExit(main())
