"""The named group fairness criteria: factories of ConditionalIndependence.

Each preset returns a plain :class:`ConditionalIndependence`, so presets compare equal
to the criterion they stand for and ``dataclasses.replace`` works on them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fairdecide._common.validation import as_labels
from fairdecide.criteria.base import named
from fairdecide.criteria.conditional import ConditionalIndependence

__all__ = ["Independence", "Separation", "Sufficiency"]


@named("independence")
def Independence(
    measure: str = "tv", weighting: str = "uniform", name: str | None = None,
    reference: str = "pooled",
) -> ConditionalIndependence:
    """Independence (demographic parity): the action is independent of the group.

    Compares P(a | z) with P(a). With the default measure::

        F = sum_z w(z) sum_a |P(a | z) - P(a)|

    with w(z) = 1 (``weighting="uniform"``) or P(z) (``weighting="group"``); ``"kl"``
    uses sum_z w(z) KL(P(. | z) || P(.)) and ``"max"`` max_z w(z) max_a |P(a | z) - P(a)|.
    ``reference="pairwise"`` compares every two groups instead: with ``measure="max"``,
    F = max_{z, z'} max_a |P(a | z) - P(a | z')|, Fairlearn's
    ``demographic_parity_difference`` (the criterion named
    "demographic_parity_difference"). Linear in the policy for every problem.

    Examples
    --------
    >>> from fairdecide import Independence, TabularPolicy
    >>> from fairdecide.datasets import make_bail_problem
    >>> problem, world = make_bail_problem()
    >>> release_all = TabularPolicy.constant(world.n_x, world.n_z, [0.0, 1.0])
    >>> Independence().deviation(release_all, world, problem)
    0.0
    """
    return ConditionalIndependence(target="action", given=None, measure=measure,
                                   weighting=weighting, name=name, reference=reference)


@named("separation")
def Separation(
    measure: str = "tv",
    weighting: str = "uniform",
    outcomes: Sequence[Any] | None = None,
    name: str | None = None,
    reference: str = "pooled",
) -> ConditionalIndependence:
    """Separation (balance, equalized odds): the action is independent of the group given
    the outcome.

    Compares P(a | y, z) with P(a | y). With the default measure::

        F = sum_y sum_z w(z, y) sum_a |P(a | y, z) - P(a | y)|

    with w = 1 or P(z | y) (``weighting="group"``, the balance measure of Bayesian
    fairness). ``outcomes`` restricts the comparison to chosen outcome values: for a
    binary prediction with positive outcome 1, ``Separation(outcomes=[1])`` is equal
    opportunity (equal true-positive rates) and ``Separation(outcomes=[0])`` equal
    false-positive rates. ``reference="pairwise"`` compares every two groups instead:
    with ``measure="max"``, F = max_y max_{z, z'} max_a |P(a | y, z) - P(a | y, z')|,
    Fairlearn's ``equalized_odds_difference`` (the criterion named
    "equalized_odds_difference"). Linear in the policy when the outcome does not depend
    on the action; otherwise a ratio of linear functions, optimised by successive linearisation.

    Examples
    --------
    >>> from fairdecide import Separation
    >>> Separation(outcomes=[1]).label
    'separation[y=1], TV summed vs pooled'
    >>> from fairdecide import ConditionalIndependence
    >>> Separation(outcomes=[1]) == ConditionalIndependence("action", "outcome",
    ...                                                     given_values=[1])
    True
    """
    if outcomes is not None:  # checked here so that an error names this argument
        outcomes = as_labels(outcomes, "outcomes", "outcome label", non_empty=True)
    return ConditionalIndependence(target="action", given="outcome", measure=measure,
                                   weighting=weighting, given_values=outcomes, name=name,
                                   reference=reference)


@named("sufficiency")
def Sufficiency(
    measure: str = "tv",
    weighting: str = "uniform",
    actions: Sequence[Any] | None = None,
    name: str | None = None,
    reference: str = "pooled",
) -> ConditionalIndependence:
    """Sufficiency (calibration within groups): the outcome is independent of the group
    given the action.

    Compares P(y | a, z) with P(y | a). With the default measure::

        F = sum_a sum_z w(z, a) sum_y |P(y | a, z) - P(y | a)|

    with w = 1 or P(z | a). ``actions`` restricts the comparison to chosen actions. Not
    convex in the policy (both conditionals are ratios of linear functions of pi); it is
    optimised by successive linearisation with a trust region, which returns a verified,
    locally optimal policy. With uniform weights, a group that never receives an action
    other groups receive drops out of that action's comparison, so the criterion can be
    met vacuously by segregating groups across actions; ``weighting="group"`` has no
    such jump (see :func:`fairdecide.optimize_policy`, Notes).

    Examples
    --------
    >>> from fairdecide import Sufficiency
    >>> Sufficiency(measure="max").label
    'sufficiency, largest gap vs pooled'
    """
    if actions is not None:  # checked here so that an error names this argument
        actions = as_labels(actions, "actions", "action label", non_empty=True)
    return ConditionalIndependence(target="outcome", given="action", measure=measure,
                                   weighting=weighting, given_values=actions, name=name,
                                   reference=reference)


@named("demographic_parity_difference")
def _demographic_parity_difference() -> ConditionalIndependence:
    """The largest gap between two groups' action rates (Fairlearn's metric of the name)."""
    return Independence(measure="max", reference="pairwise",
                        name="demographic_parity_difference")


@named("equalized_odds_difference")
def _equalized_odds_difference() -> ConditionalIndependence:
    """The largest gap between two groups' action rates among those with one outcome
    (Fairlearn's metric of the name)."""
    return Separation(measure="max", reference="pairwise", name="equalized_odds_difference")
