"""Whole-body excitation design for floating robots with feet (``legid excite``).

:mod:`.motion` (the parameterised motion), :mod:`.trajectory` (dense grid, CAD dynamics),
:mod:`.constraints` and :mod:`.collision` (what it must respect), :mod:`.information` (predicted
identifiability), :mod:`.design` (the problem and the search), :mod:`.plots`. See
``docs/excitation.md``.
"""
