"""The parameter set chosen by the data (``--param-set auto``).

Per symmetric link group, which components are estimated (none, mass, mass + axial COM,
mass + 3-D COM, + inertia) is chosen by forward selection with an F-test on the effective
number of independent samples, or by held-out validation:

- :mod:`.levels`: :class:`~.levels.AutoSet`, the set of the chosen levels (same interface as
  the other sets), and the leg axis of each link;
- :mod:`.stats`: effective sample size and the nested-model F-test;
- :mod:`.fit`: one candidate's fit on the rows' normal equations;
- :mod:`.select`: the forward selection (build separate from solve), two units at a time
  when every move the data want is implausible alone;
- :mod:`.report`: the selection table for the terminal and ``report.md``.
"""
