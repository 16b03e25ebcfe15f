"""What a given policy is guaranteed over a confidence set, with the guarantee's price
(:func:`certify_policy`)."""

from __future__ import annotations

from typing import Any

from fairdecide._common.deprecation import old_order
from fairdecide._common.validation import check_instance
from fairdecide.criteria.base import as_criteria, resolve_names
from fairdecide.exceptions import FairdecideError
from fairdecide.optimize.api import optimize_policy
from fairdecide.optimize.guarantee import Guarantee, deviation_bounds, over_set
from fairdecide.optimize.price import priced
from fairdecide.policies.base import Policy
from fairdecide.problem import DecisionProblem
from fairdecide.uncertainty.confidence import ConfidenceSet

__all__ = ["certify_policy"]


def certify_policy(problem: DecisionProblem, confidence: ConfidenceSet, policy: Policy,
                   criteria: Any = None, *, epsilon: Any = None,
                   group_blind: bool | None = None) -> Guarantee:
    """What a given policy is guaranteed over a confidence set: any policy, not only the
    maximin one (a deployed rule, a plug-in or Bayes policy, a hand-written one).

    With probability at least 1 - delta over the data (the set's level), the policy's
    true expected utility is at least min over the set of V(pi, theta) (closed form,
    :meth:`~fairdecide.uncertainty.confidence.ConfidenceSet.worst_value`), and each criterion's
    true deviation is at most its bound over every world of the set
    (the bound of :meth:`~fairdecide.criteria.Criterion.over_set`: exact for the largest
    pairwise gap, a sound upper bound for the other measures; sufficiency too, for a
    given policy); a criterion without a bound is named in ``uncertified`` with the
    reason. ``price`` compares the policy with the best constant rule and the plug-in
    policy (:class:`~fairdecide.optimize.price.Price`), and a
    :class:`~fairdecide.exceptions.PriceWarning` says when the policy is estimated to be
    worth less than the constant rule.

    Parameters
    ----------
    problem : DecisionProblem
    confidence : ConfidenceSet
    policy : Policy
        A policy over the set's cells and groups (group-blind for a ``pooled`` set).
    criteria : Criterion or sequence of Criterion, optional
        (The order ``(policy, confidence, problem, criteria)`` of earlier releases still
        works, with a DeprecationWarning.)
    epsilon : float or sequence of float, optional
        The tolerance the plug-in policy of the price is optimised at (with
        ``criteria``); default: the plug-in policy without fairness criteria.
    group_blind : bool, optional
        Whether the plug-in policy may read the group; default: as ``policy`` does
        (always for a ``pooled`` set).

    Returns
    -------
    Guarantee
        Read optimistically if the set is (``ConfidenceSet.as_optimistic``).

    Examples
    --------
    >>> import numpy as np
    >>> import fairdecide as fd
    >>> problem = fd.DecisionProblem.classification(2)
    >>> data = fd.LoggedData(x=[0, 0, 1, 1] * 50, z=[0, 1, 0, 1] * 50,
    ...                      y=[0, 1, 1, 1] * 50)
    >>> cs = fd.ConfidenceSet.from_data(data, problem, delta=0.1)
    >>> always_1 = fd.TabularPolicy.constant(2, 2, [0.0, 1.0])
    >>> g = fd.certify_policy(problem, cs, always_1, fd.Independence())
    >>> round(g.value, 4) == round(cs.worst_value(always_1, problem), 4), g.deviations
    (True, {'independence, TV summed vs pooled': 0.0})
    >>> g.price.constant
    'always 1'
    """
    problem, confidence, policy, criteria = old_order(
        "certify_policy", (problem, confidence, policy, criteria),
        ("problem", "confidence", "policy", "criteria"),
        ("policy", "confidence", "problem", "criteria"), DecisionProblem)
    check_instance(confidence, "confidence", ConfidenceSet, "a ConfidenceSet")
    check_instance(problem, "problem", DecisionProblem, "a DecisionProblem")
    check_instance(policy, "policy", Policy, "a Policy over the set's cells and groups")
    crits = as_criteria(criteria)
    names = resolve_names(crits)
    value = confidence.value(policy, problem)
    over, refused = [], {}
    for crit, name in zip(crits, names, strict=True):
        try:
            over.append(over_set(crit, name, problem, confidence))
        except FairdecideError as err:  # not bounded over this set: said, not raised
            over.append(None)
            refused[name] = str(err)
    bounds, why = deviation_bounds(policy, over, names)
    why.update(refused)
    if group_blind is None:
        group_blind = confidence.pooled or bool(getattr(policy, "is_group_blind", False))
    trade = {} if epsilon is None or not crits else {"epsilon": epsilon}
    guarantee = Guarantee(confidence.level, value, bounds, confidence.method, why,
                          confidence.kind, confidence.reading, 0.0,
                          {n: c.measure_words for c, n in zip(crits, names, strict=True)},
                          exact={n: o.exact for o, n in zip(over, names, strict=True)
                                 if o is not None},
                          utility=problem.utility_name)
    plug_crits = crits if trade else []

    def plug_in() -> Policy:
        return optimize_policy(problem, confidence.center, plug_crits or None,
                               group_blind=group_blind, **trade).policy

    return priced(guarantee, policy, confidence, problem, over, names, plug_in,
                  plug_crits, trade, group_blind)
