"""Robot descriptions: what a description YAML says, the model it asks for, and a generator.

- :mod:`~legid_ros.core.description.spec`: feet, force sensors, link groups, frames (parsed
  and checked key by key).
- :mod:`~legid_ros.core.description.build`: the pinocchio model (URDF, joint-name map,
  locked joints folded into their parents, frames).
- :mod:`~legid_ros.core.description.generate`: a starting description from a URDF
  (``legid describe``); :mod:`~legid_ros.core.description.from_bag`: it mapped onto a bag's
  streams (``legid describe --bag``); :mod:`~legid_ros.core.description.check`: a description
  against a recording's topics (``legid check``).

Errors name the key at fault and the fix (:class:`~legid_ros.core.description.errors.
DescriptionKeyError`). :func:`legid_ros.core.robot.load_robot` is the entry point.
"""
