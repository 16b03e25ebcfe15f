"""The set of :meth:`~fairdecide.uncertainty.confidence.ConfidenceSet.from_refits`: a simultaneous
bootstrap band around a fitted model's outcome probabilities for a fixed population of
individuals, written as a tabular world whose cells are the individuals.

For individual i (and action a, in an intervention) let p_hat_i be the model's
probabilities and p_b,i those of bootstrap refit b = 1..B. With d_b,i = ||p_b,i -
p_hat_i||_1 and the scale s_i = mean_b d_b,i, the band's radius is r_i = c s_i, where c
is the smallest number with max_i d_b,i / s_i <= c for at least (1 - delta) B refits
(the studentised "max" band: simultaneous over the individuals, each as wide as its own
spread). It holds 1 - delta of the refits by construction; that it holds the true
probabilities with probability 1 - delta is the bootstrap's approximation, and the
model's own misspecification is not covered.

A population of n individuals is the tabular world with one cell per individual: cell
i has weight P(i, z_i) = w_i in its own group and none in the others, so the exact
maximin program of the tabular sets serves it unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairdecide._common.validation import as_int, as_real
from fairdecide.exceptions import FairdecideError
from fairdecide.worlds.sample import SampleWorld
from fairdecide.worlds.world import TabularWorld

__all__ = ["refit_band"]


def refit_band(model: Any, delta: Any, n_refits: Any, random_state: Any, weights: Any,
               refits: Any = None) -> tuple[TabularWorld, np.ndarray, int]:
    """(centre, radii, number of refits) of the band of ``model``'s ``n_refits``
    bootstrap refits over its training individuals (see the module), or of ``refits``
    already drawn (``model.bootstrap_worlds``)."""
    from fairdecide.models.individuals import IndividualOutcomeModel  # heavy: sklearn

    if not isinstance(model, IndividualOutcomeModel) or not hasattr(model, "X_"):
        raise FairdecideError(
            f"model must be a fitted IndividualOutcomeModel (call fit first), got "
            f"{type(model).__name__}")
    delta = as_real(delta, "delta", low=0, high=1, low_open=True, high_open=True)
    center = model.world(weights=weights)
    p_hat = center.p_y  # (n, [n_a,] n_y)
    if refits is None:
        n_refits = as_int(n_refits, "n_refits", minimum=1)
    else:
        if not isinstance(refits, list | tuple) or not refits or any(
                not isinstance(w, SampleWorld) or w.p_y.shape != p_hat.shape
                for w in refits):
            raise FairdecideError(
                "refits must be a list of the model's refits for its training individuals "
                f"(model.bootstrap_worlds): SampleWorlds with p_y of shape {p_hat.shape}")
        n_refits = len(refits)
    if n_refits * delta < 1:
        raise FairdecideError(
            f"n_refits = {n_refits} refits cannot place a band that leaves out delta = "
            f"{delta:g} of them: use at least {int(np.ceil(1 / delta))} (200 or more "
            "for a stable band)")
    if refits is None:
        refits = model.bootstrap_worlds(n_refits, random_state, weights)
    draws = np.stack([w.p_y for w in refits])
    d = np.abs(draws - p_hat).sum(axis=-1).reshape(n_refits, len(p_hat), -1)
    scale = d.mean(axis=0)
    ratio = np.where(scale > 0, d / np.where(scale > 0, scale, 1.0),
                     np.where(d > 0, np.inf, 0.0))
    worst = ratio.reshape(n_refits, -1).max(axis=1)
    keep = int(np.ceil((1.0 - delta) * n_refits - 1e-9))  # refits the band must hold
    c = float(np.sort(worst)[max(keep, 1) - 1])
    if not np.isfinite(c):
        raise FairdecideError(
            "the refits moved an individual whose other refits did not move at all: the "
            "band is unbounded; use more refits (n_refits)")
    radius = np.minimum(2.0, c * scale).reshape(p_hat.shape[:-1])
    n, n_z = center.n, len(center.group_labels)
    p_xz = np.zeros((n, n_z))
    p_xz[np.arange(n), center.z] = center.weights
    cells = np.broadcast_to(p_hat[:, None], (n, n_z, *p_hat.shape[1:]))
    r = np.zeros((n, n_z, *radius.shape[1:]))
    r[np.arange(n), center.z] = radius  # a cell out of its own group weighs nothing
    world = TabularWorld(p_xz, np.ascontiguousarray(cells), x_labels=range(n),
                         group_labels=center.group_labels)
    return world, r, n_refits
