"""Disclosure control for audit reports: small-cell suppression and differential privacy.

Without differential privacy, a report hides small cells (:func:`suppress_small_cells`,
threshold :data:`SMALL_CELL_THRESHOLD`). With it, every released count comes from
:func:`release_counts` (two-sided geometric or Laplace noise of scale 1/epsilon,
sensitivity 1 under add/remove-one-row neighbours, drawn by OpenDP's exact samplers from
a secure generator; OpenDP is the ``privacy`` extra, ``pip install 'fairdecide[privacy]'``,
imported at the first release) at its share of a :class:`PrivacyBudget`; rates and their
intervals come from :func:`rate_interval` with the noise variance, and intervals of other
statistics of a table from :func:`replicate_releases`. Everything computed from the
released tables is post-processing. See docs/privacy.md.
"""

from fairdecide.privacy.budget import PrivacyBudget
from fairdecide.privacy.intervals import RateInterval, rate_interval
from fairdecide.privacy.mechanisms import (
    MECHANISMS,
    NoisyCounts,
    noise_variance,
    release_counts,
    replicate_releases,
)
from fairdecide.privacy.suppression import SMALL_CELL_THRESHOLD, suppress_small_cells

__all__ = [
    "MECHANISMS",
    "SMALL_CELL_THRESHOLD",
    "NoisyCounts",
    "PrivacyBudget",
    "RateInterval",
    "noise_variance",
    "rate_interval",
    "release_counts",
    "replicate_releases",
    "suppress_small_cells",
]
