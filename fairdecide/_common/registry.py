"""Classes a lower package reaches without importing the package above it.

Only for deprecated doors: ``BayesianOutcomeModel.belief()`` (deprecated for
``Belief.from_posterior``) builds a Belief, which sits above the models; the Belief
class puts itself here when :mod:`fairdecide.uncertainty.beliefs` is imported (as
``import fairdecide`` does), so the models import nothing above them.
"""

from __future__ import annotations

__all__ = ["REGISTRY"]

#: Name -> class, filled by the packages that define them.
REGISTRY: dict[str, type] = {}
