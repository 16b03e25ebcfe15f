"""Designs of the unit interior point measured by the benchmarks.

``gondzio``: Mehrotra's predictor-corrector with up to two of Gondzio's centrality
correctors a step (``unit_ipm.mehrotra(..., correctors=2)``, see its docstring), which
the package now uses (``unit_ipm.CORRECTORS``); ``plain``: without them, as before.
"""

from __future__ import annotations

from functools import partial

from fairdecide.optimize.engine import unit_ipm

DESIGNS = {"gondzio": partial(unit_ipm.mehrotra, correctors=2),
           "plain": partial(unit_ipm.mehrotra, correctors=0)}


def use(name: str) -> None:
    """Put design ``name`` in the package's place for this process (the unit interior
    point passes its own ``correctors``, which the design's overrides)."""
    design = DESIGNS[name]
    unit_ipm.mehrotra = lambda *args, **kw: design(*args[:5], **kw)
