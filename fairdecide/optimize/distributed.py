"""Fair policies for populations too large for one machine (a units table, a
:class:`~fairdecide.worlds.frame.FrameWorld`): the columns of its outcome probabilities
(:func:`outcome_columns`). Its master, the program in the space of its coupling rows
(Dantzig-Wolfe), is :mod:`fairdecide.optimize.engine.distributed_master`; its session,
settings and route are :mod:`fairdecide.optimize.routes.units`.
"""

from __future__ import annotations

from fairdecide.worlds.frame import outcome_columns

__all__ = ["outcome_columns"]
