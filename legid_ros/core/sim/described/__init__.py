"""Robots we did not design, simulated from their description: truth, excitation, MuJoCo run.

- :mod:`.truth`: a true robot outside every parameterisation the methods use.
- :mod:`.excitation`: a standing excitation planned on the CAD model (stance feet fixed, the
  trunk shifting and tilting, one foot lifted at a time over the others' support).
- :mod:`.locomotion`: a trot in place (four feet) and stepping in place (two soles), plans of
  the same form.
- :mod:`.run`: the MuJoCo run of that plan with the true inertials, as a
  :class:`legid_ros.core.recording.Recording`.
"""

from legid_ros.core.sim.described.excitation import StandingPlan, plan_standing
from legid_ros.core.sim.described.run import DescribedRun, simulate_described
from legid_ros.core.sim.described.truth import perturbed_truth

__all__ = ['DescribedRun', 'StandingPlan', 'perturbed_truth', 'plan_standing',
           'simulate_described']
