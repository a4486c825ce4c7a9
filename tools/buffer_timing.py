"""Time the buffer's core on 10 s of a Solo12 MuJoCo run (1 kHz): its row assembly
(``RowAssembler.__call__``) and the whole feed (add + flush), best of 3, for the canonical
readout and, with ``--conventions``, two readouts in other conventions converted by the buffer
(IMU mounted rotated with a heading and world-axes forces; foot-axes forces).

Usage: ``python tools/buffer_timing.py [--conventions]`` (on a checkout without the
``conventions`` argument of ``recording_windows`` run it without ``--conventions``).
"""

import argparse
import copy
import pathlib
import tempfile
import time

import yaml

from legid_ros.core.buffer import rows as rows_mod
from legid_ros.core.pipeline.replay import recording_windows
from legid_ros.core.robot import load_robot
from legid_ros.core.sim.conventions import Readout, read_out
from legid_ros.core.sim.described import perturbed_truth, simulate_described


def main() -> None:
    """Print the timings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--conventions', action='store_true')
    args = parser.parse_args()
    solo = load_robot('solo12')
    pi, _ = perturbed_truth(solo, seed=1)
    run = simulate_described(solo, pi, duration_s=45.0, seed=1).slice(0, 10000)
    root = pathlib.Path(tempfile.mkdtemp())

    def robot_of(desc, name):
        desc = copy.deepcopy(desc)
        desc['urdf'] = str(solo.urdf_path)
        (root / name).write_text(yaml.safe_dump(desc))
        return load_robot(str(root / name))

    desc = copy.deepcopy(solo.description)
    for f in desc['feet'].values():
        f['ft_frame'] = f['link']
    canon = robot_of(desc, 'canonical.yaml')
    spent = [0.0]  # [s]
    call = rows_mod.RowAssembler.__call__

    def timed(self, *a):
        t = time.perf_counter()
        out = call(self, *a)
        spent[0] += time.perf_counter() - t
        return out

    rows_mod.RowAssembler.__call__ = timed

    def measure(rec, robot, **kw) -> str:
        best = []
        for _ in range(3):
            spent[0] = 0.0
            t = time.perf_counter()
            n = sum(1 for _ in recording_windows(rec, robot, **kw))
            best.append((spent[0], time.perf_counter() - t))
        rows_s, feed_s = min(best)
        return (f'row assembly {rows_s * 1e3:.0f} ms, whole feed {feed_s * 1e3:.0f} ms '
                f'({n} windows)')

    print('canonical:', measure(run, canon))
    if args.conventions:
        for label, ro in (
                ('imu rotated + heading, world forces', Readout(
                    imu_topic='/imu/data', imu_rpy=(0.1, -0.2, 1.5), imu_heading_rad=0.7,
                    force_topic='feet/{foot}/force', force_expressed_in='world')),
                ('foot-axes forces', Readout(force_topic='feet/{foot}/force',
                                             force_expressed_in='foot'))):
            setup = robot_of(ro.description(canon), f'{len(label)}.yaml')
            print(f'{label} (converted):', measure(read_out(run, canon, ro), setup,
                                                   conventions=True))


if __name__ == '__main__':
    main()
