"""Displays in scikit-learn's pattern: a classmethod computes, ``plot`` draws.

- :class:`ParetoFrontierDisplay`: expected utility against a criterion's deviation, one
  line per frontier, plus single points of other methods;
- :class:`GroupRatesDisplay`: P(a | z), P(a | y, z) or P(y | a, z) by group, with
  bootstrap intervals (or exact, from an optimisation result in a known world);
- :class:`GroupCalibrationDisplay`: reliability curves of a predicted probability by group.

Each ``from_*`` classmethod stores the computed numbers as public attributes
(``frontiers_``, ``rates_``, ``curves_``); ``plot(ax=None, **kwargs)`` draws onto ``ax``
(a new figure if None), stores ``ax_``, ``figure_`` and the artists, and returns the
display. matplotlib is imported only when something is drawn (``pip install
"fairdecide[plot]"``), so importing this package does not import it.
"""

from fairdecide.plot.calibration import GroupCalibrationDisplay
from fairdecide.plot.frontier import ParetoFrontierDisplay
from fairdecide.plot.rates import GroupRatesDisplay

__all__ = ["GroupCalibrationDisplay", "GroupRatesDisplay", "ParetoFrontierDisplay"]
