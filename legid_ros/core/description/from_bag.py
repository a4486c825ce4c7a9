"""A generated description mapped onto a bag's streams (``legid describe --bag``).

From the bag's topics, types and frame ids (:class:`legid_ros.core.description.check.
RecordingFacts`): the IMU topic (the ``sensor_msgs/Imu`` topic) and its frame; per foot the
``WrenchStamped`` topic whose name shares the most tokens with the foot's name and link
(each topic to one foot), the frame its values are expressed in (``world``/``map``/``odom``
-> ``expressed_in: world``; a frame of the foot -> ``ft_frame``) and ``frame_id``; the
declared ``force_sensing``. A frame the description creates never takes a name the bag gives
to another place: it is renamed (``<name>_centre``) with a one-line reason. The joint names
of ``/joint_states`` are compared with the model's: those named otherwise are mapped
(``joint_name_map``) as given, else by a name match (namespace, case, ``_joint`` affix).
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional

from legid_ros.core.description.check import IMU_TYPE, WRENCH_TYPE, RecordingFacts

WORLD_FRAMES = ('world', 'map', 'odom')
_BAD_TOKEN = re.compile(r'(^|/)[0-9]')


def refused_topic(topic: str) -> Optional[str]:
    """Why a live ROS 2 node would refuse ``topic`` (None if it would not)."""
    if _BAD_TOKEN.search(topic.lstrip('/')):
        return 'a name token starts with a digit'
    if not re.fullmatch(r'[A-Za-z0-9_/~{}]+', topic):
        return 'it holds a character other than letters, digits, _ and /'
    return None


def _tokens(text: str) -> set:
    return {t for t in re.split(r'[/_\-\s]+', text.lower()) if t}


def _foot_tokens(name: str, link: str) -> set:
    toks = _tokens(name) | _tokens(link)
    for t in list(toks):  # 'lf' <-> 'fl', 'left' <-> 'l'
        if len(t) == 2:
            toks.add(t[::-1])
    return toks - {'foot', 'link', 'sole'}


WRENCH_WORDS = {'wrench', 'ft', 'fts', 'force', 'forces', 'wrenches'}


def _assign(feet: Dict[str, dict], topics: List[str]) -> Dict[str, str]:
    """Foot -> wrench topic, greedily by shared name tokens (each topic once); the sole
    sensors' topics the description lists are not candidates, and a topic whose name says
    wrench / ft / force beats one whose last token is an index."""
    sensors = {'/' + s['topic'].lstrip('/') for e in feet.values()
               for s in e.get('force_sensors') or []}

    def score(f, e, t):
        toks = _tokens(t)
        shared = len(_foot_tokens(f, e['link']) & toks)
        return (shared, bool(toks & WRENCH_WORDS), not t.rstrip('/')[-1:].isdigit())

    ranked = sorted(((score(f, e, t), f, t) for f, e in feet.items() for t in topics
                     if t not in sensors), reverse=True)
    out, used = {}, set()
    for s, f, t in ranked:
        if s[0] > 0 and f not in out and t not in used:
            out[f], _ = t, used.add(t)
    return out


def _rename_frame(desc: dict, old: str, warnings: List[str], why: str) -> None:
    """Rename a frame the description creates (and every reference to it)."""
    new = f'{old}_centre'
    desc['frames'][new] = desc['frames'].pop(old)
    for f in desc['feet'].values():
        if f.get('sole_frame') == old:
            f['sole_frame'] = new
    for spec in desc['frames'].values():
        if spec.get('parent') == old:
            spec['parent'] = new
    warnings.append(f'frame {old!r} renamed {new!r}: {why}')


def add_frame(desc: dict, name: str, spec: dict, urdf_frames: List[str]) -> List[str]:
    """Add a user-defined frame (``legid describe --frame``); a frame the description created
    under that name is renamed. Returns the warnings.

    Raises:
        BadInputError: The URDF has a frame of that name, or the parent is unknown.
    """
    from legid_ros.core.errors import BadInputError

    warnings: List[str] = []
    if name in urdf_frames:
        raise BadInputError(f'--frame {name}: the URDF has a frame {name!r}; name the sensor '
                            'frame otherwise')
    frames = desc.setdefault('frames', {})
    if name in frames:
        _rename_frame(desc, name, warnings, f'--frame gives the name {name!r} to another place')
    if spec['parent'] not in urdf_frames and spec['parent'] not in frames:
        raise BadInputError(f'--frame {name}: parent {spec["parent"]!r} is not a frame of the '
                            'URDF or the description')
    frames[name] = spec
    return warnings


def assign_by_load(robot, rec, topics: Dict[str, tuple]) -> Dict[str, str]:
    """Feet -> force topics by which foot is loaded when: a foot lifted (its contact point
    1 cm above the lowest one, kinematics and the IMU) carries almost no force.

    Args:
        robot: The described robot (joint states and IMU mapped).
        rec: Its recording (``meta['stamp0_ns']`` the time origin).
        topics: Candidate topic -> (header times [s], force norms [N]) of sampled messages.

    Returns:
        Foot -> topic for the robot's feet, the assignment with the fewest samples where a
        lifted foot is loaded or a standing one empty (every foot; empty if fewer topics).
    """
    from itertools import permutations

    import numpy as np

    from legid_ros.core.conventions.consistency import WorldView

    feet = list(robot.feet)
    names = list(topics)
    if len(names) < len(feet) or len(names) > 8:
        return {}
    v = WorldView(robot, rec, 'wrench')
    t = rec.t[v.idx] + rec.meta.get('stamp0_ns', 0) * 1e-9
    h = np.column_stack([v.height(f) for f in feet])
    lifted = h - h.min(axis=1, keepdims=True) > 0.01  # [m]
    empty = {c: np.interp(t, *topics[c]) < 0.05 * v.weight / len(feet) for c in names}
    cost = {(f, c): float(np.mean(empty[c] != lifted[:, j])) for j, f in enumerate(feet)
            for c in names}
    best = min(permutations(names, len(feet)),
               key=lambda perm: sum(cost[f, c] for f, c in zip(feet, perm)))
    return dict(zip(feet, best))


def set_wrench_topic(desc: dict, foot: str, topic: str, facts: RecordingFacts,
                     urdf_frames: List[str], user_frames=()) -> List[str]:
    """Make ``topic`` the foot's wrench topic, with the frame and axes its frame id says (a
    world-like id: world axes; a frame of the URDF or the description: ``ft_frame``); a frame
    the generator created under that name is renamed. Returns the warnings."""
    warnings: List[str] = []
    entry = desc['feet'][foot]
    entry['wrench_topic'] = topic
    entry.setdefault('ft_frame', entry['link'])  # the frame the forces are about
    ids = facts.topics[topic].frame_ids
    frame = ids[0] if ids else ''
    created = set(desc.get('frames') or {}) - set(user_frames)
    if frame in created:
        _rename_frame(desc, frame, warnings, f'the bag names {topic}\'s frame so')
    if frame in WORLD_FRAMES:
        entry['expressed_in'] = 'world'
        entry['frame_id'] = frame
    elif frame and frame != entry['ft_frame']:
        if frame in urdf_frames or frame in (desc.get('frames') or {}):
            entry['ft_frame'] = frame
        else:
            entry['frame_id'] = frame
            warnings.append(f'feet.{foot}.frame_id: {topic} is in frame {frame!r}, which the '
                            'URDF lacks: its values are taken in the axes and about the origin '
                            f'of {entry["ft_frame"]!r}; if not, give --frame '
                            f'{frame}=PARENT:x,y,z')
    return warnings


def map_streams(desc: dict, facts: RecordingFacts, urdf_frames: List[str],
                imu_rpy=None, user_frames=(), joint_map=None) -> List[str]:
    """Map ``desc`` (from :func:`~legid_ros.core.description.generate.describe_urdf`) onto
    the bag's streams, in place; returns the warnings (one line each). ``user_frames``:
    the frames the user defined (``--frame``), never renamed; ``joint_map``: bag joint
    name -> URDF joint name pairs given (``--joint-map``), others matched by name."""
    warnings: List[str] = []
    imus = sorted(t for t, tf in facts.topics.items() if tf.msgtype == IMU_TYPE)
    if imus:
        topic = min(imus, key=lambda t: ('imu' not in t.lower(), t))
        imu = {'topic': topic}
        ids = facts.topics[topic].frame_ids
        if ids and ids[0] in urdf_frames:
            imu['frame'] = ids[0]
            desc.pop('imu_frame', None)
        elif ids:
            imu['frame_id'] = ids[0]
            warnings.append(f'imu: frame_id {ids[0]!r} is not a URDF frame: the IMU is taken at '
                            f'{desc.get("imu_frame")!r}; define {ids[0]} under frames: if it '
                            'is elsewhere')
        if imu_rpy is not None and any(imu_rpy):
            imu['rpy'] = [float(x) for x in imu_rpy]
        desc['imu'] = imu
        if len(imus) > 1:
            warnings.append(f'imu: {len(imus)} IMU topics ({", ".join(imus)}); took {topic}')
    else:
        warnings.append('imu: the bag has no sensor_msgs/Imu topic')
    wrenches = sorted(t for t, tf in facts.topics.items() if tf.msgtype == WRENCH_TYPE)
    chosen = _assign(desc['feet'], wrenches)
    for foot, entry in desc['feet'].items():
        topic = chosen.get(foot)
        if topic is None:
            warnings.append(f'feet.{foot}.wrench_topic: no WrenchStamped topic of the bag names '
                            f'foot {foot}; kept {entry["wrench_topic"]}')
            continue
        warnings += set_wrench_topic(desc, foot, topic, facts, urdf_frames, user_frames)
    if len(chosen) == len(desc['feet']):
        desc['force_sensing'] = 'wrench'
    model_joints = {j for leg in desc.get('legs', {}).values() for j in leg['joints']}
    warnings += map_joint_names(desc, model_joints, facts.joint_names, joint_map or {})
    return warnings


def joint_key(name: str) -> str:
    """A joint name as matched across setups: its last ``/`` token, lower case, without a
    ``joint`` affixes and separators (``robot/FL_HAA_joint`` -> ``flhaa``)."""
    key, done = name.rsplit('/', 1)[-1].lower(), ''
    while key != done:  # every joint affix (``leg_1_joint_joint``)
        key, done = re.sub(r'(^joint[_\-]?|[_\-]?joint$)', '', key), key
    return re.sub(r'[^a-z0-9]', '', key)


def map_joint_names(desc: dict, model_joints, bag_joints: List[str],
                    given: Dict[str, str]) -> List[str]:
    """Set ``joint_name_map`` (bag name -> URDF name) for the model joints the bag names
    otherwise: the ``given`` pairs (``--joint-map``), then the bag names that match one model
    joint by :func:`joint_key`; in place, returns the warnings."""
    if not bag_joints:
        return []
    bag = set(bag_joints)
    out: Dict[str, str] = {b: u for b, u in given.items() if b in bag and u in model_joints}
    warnings = [f'--joint-map {b}={u}: ' + (f'{b!r} is not in /joint_states' if b not in bag
                                            else f'{u!r} is not a moving URDF joint')
                for b, u in given.items() if (b, u) not in out.items()]
    missing = sorted(set(model_joints) - bag - set(out.values()))
    free = [b for b in bag_joints if b not in model_joints and b not in out]
    by_key: Dict[str, List[str]] = {}
    for b in free:
        by_key.setdefault(joint_key(b), []).append(b)
    matched = {}
    for j in missing:
        hits = by_key.get(joint_key(j), [])
        if len(hits) == 1 and sum(joint_key(m) == joint_key(j) for m in missing) == 1:
            matched[hits[0]] = j
    out.update(matched)
    if out:
        desc['joint_name_map'] = dict(sorted(out.items()))
    if matched:
        warnings.append(f'joint_name_map: {len(matched)} joints of /joint_states named otherwise'
                        f' than the URDF, matched by name ({next(iter(matched))} -> '
                        f'{matched[next(iter(matched))]} ...): check them')
    left = sorted(set(missing) - set(matched.values()))
    if left:
        warnings.append(f'joints {", ".join(left[:4])}{" ..." if len(left) > 4 else ""} are '
                        'not in /joint_states: map the bag\'s names in joint_name_map '
                        '(--joint-map BAG=URDF)')
    return warnings
