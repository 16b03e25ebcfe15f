"""Designs of the unit interior point measured by the benchmarks, not the package's.

``gondzio``: Mehrotra's predictor-corrector with up to two of Gondzio's centrality
correctors a step (``unit_ipm.mehrotra(..., correctors=2)``, see its docstring): fewer
steps, each with one or two more solves.
"""

from __future__ import annotations

from functools import partial

from fairdecide.optimize.engine import unit_ipm

DESIGNS = {"gondzio": partial(unit_ipm.mehrotra, correctors=2)}


def use(name: str) -> None:
    """Put design ``name`` in the package's place for this process."""
    unit_ipm.mehrotra = DESIGNS[name]
