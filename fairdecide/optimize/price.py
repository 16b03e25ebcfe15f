"""What a guarantee costs: a certified policy beside the best constant rule and the
plug-in policy.

A policy certified over a confidence set can be little better than a coin: the set is
wide where data are few, and its worst case pulls the policy towards rules that are
safe in every world. Its certified value alone does not show that. :class:`Price` puts
beside it, on the same set,

- the policy's own estimated value (at the set's centre, the maximum-likelihood world);
- the best constant rule, the one action taken for everyone (the majority class in a
  classification) that has the highest estimated value: its estimated and certified
  values (a constant rule is fair by independence and separation in every world);
- the plug-in policy, optimised at the centre under the same criteria and trade-off
  without the guarantee: its estimated and certified values, and its criteria's bounds
  over the set;

and :meth:`Price.below_constant` says when the certified policy is estimated to be
worth less than the constant rule (a warning at every door).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairdecide._common.tables import result_table
from fairdecide.criteria.base import ByCriterion, resolve_names
from fairdecide.exceptions import FairdecideError, PriceWarning
from fairdecide.optimize.guarantee import deviation_bounds
from fairdecide.policies.tabular import TabularPolicy
from fairdecide.worlds.table import expected_utility

__all__ = ["Price", "PriceWarning", "constant_rules", "price_of", "priced",
           "warn_below_constant"]

#: The certified policy counts as below the constant rule when its estimated value is
#: lower by more than this.
BELOW_TOL = 1e-9


@dataclass(frozen=True)
class Price:
    """What a guarantee costs (see the module).

    Attributes
    ----------
    utility : str
        The utility by what it is ("accuracy" where the problem is a classification,
        else "expected utility").
    estimated, certified : float
        The policy's value at the set's centre, and over the set (its guarantee).
    constant : str
        The best constant rule, in words ("always 'no'").
    constant_estimated, constant_certified : float
    plug_in : str
        How the plug-in policy was fitted.
    plug_in_estimated, plug_in_certified : float or None
        None when the plug-in policy could not be fitted (``plug_in`` says why).
    plug_in_bounds : dict[str, float or None]
        The plug-in policy's deviations bounded over the same set.
    narrower : str
        What would narrow the set, for the warning.
    """

    utility: str
    estimated: float
    certified: float
    constant: str
    constant_estimated: float
    constant_certified: float
    plug_in: str
    plug_in_estimated: float | None = None
    plug_in_certified: float | None = None
    plug_in_bounds: dict = field(default_factory=ByCriterion)
    narrower: str = "more data or a larger delta"

    @property
    def below_constant(self) -> bool:
        """The certified policy's estimated value is below the best constant rule's."""
        return self.estimated < self.constant_estimated - BELOW_TOL

    def sentences(self) -> list[str]:
        """The price in words a non-specialist can read."""
        u = self.utility
        lines = [f"At the estimate (the most likely world) this policy's {u} is "
                 f"{self.estimated:.4g}; {self.constant} would have {self.constant_estimated:.4g}"
                 f" there, certified {self.constant_certified:.4g}."]
        if self.plug_in_estimated is None:
            lines.append(f"No plug-in policy to compare with: {self.plug_in}.")
        else:
            bounds = "; ".join(f"its {n} certified only below {b:.4g}" if b is not None
                               else f"its {n} not certified"
                               for n, b in self.plug_in_bounds.items())
            lines.append(f"The plug-in policy ({self.plug_in}, no guarantee) has {u} "
                         f"{self.plug_in_estimated:.4g} at the estimate and certified "
                         f"{self.plug_in_certified:.4g}" + (f" ({bounds})" if bounds else "")
                         + ".")
        if self.below_constant:
            lines.append(f"WARNING: at the estimate this certified policy is worth less than "
                         f"{self.constant} ({self.estimated:.4g} against "
                         f"{self.constant_estimated:.4g}): the set is too wide for the "
                         f"guarantee to pay; {self.narrower} would narrow it.")
        return lines

    def to_frame(self) -> Any:
        """One row per policy compared: ``estimated`` and ``certified`` values."""
        return result_table([
            {"policy": "certified policy", "estimated": self.estimated,
             "certified": self.certified},
            {"policy": self.constant, "estimated": self.constant_estimated,
             "certified": self.constant_certified},
            {"policy": f"plug-in ({self.plug_in})", "estimated": self.plug_in_estimated,
             "certified": self.plug_in_certified}]).set_index("policy")


def constant_rules(confidence: Any, problem: Any) -> list[tuple[str, Any, float, float]]:
    """Every constant rule over the set's cells (one action for everyone): its words,
    policy, estimated value (at the centre) and certified value (over the set)."""
    center = confidence.center
    out = []
    for a, label in enumerate(problem.action_labels):
        policy = TabularPolicy.constant(center.n_x, center.n_z, np.eye(problem.n_actions)[a],
                                        x_labels=center.x_labels,
                                        group_labels=center.group_labels)
        out.append((f"always {label!r}", policy,
                    float(expected_utility(problem, center, policy)),
                    float(confidence.value(policy, problem))))
    return out


def price_of(policy: Any, confidence: Any, problem: Any, plug_in: Any, plug_in_what: str,
             criteria: list, names: list[str]) -> Price:
    """The :class:`Price` of ``policy`` certified over ``confidence``: ``plug_in`` is the
    plug-in policy (None if it could not be fitted; ``plug_in_what`` says how it was, or
    why not), bounded by ``criteria`` (named ``names``; as
    :meth:`~fairdecide.criteria.Criterion.over_set` returns them, None where it did not)."""
    words, _, est, cert = max(constant_rules(confidence, problem),
                              key=lambda r: (r[2], r[3]))
    kw: dict[str, Any] = {}
    if plug_in is not None:
        kw = {"plug_in_estimated": float(expected_utility(problem, confidence.center,
                                                          plug_in)),
              "plug_in_certified": float(confidence.value(plug_in, problem)),
              "plug_in_bounds": deviation_bounds(plug_in, criteria, names)[0]}
    narrower = "more data or a larger delta" + (
        "" if confidence.pooled else ", or a set pooled over the groups (pooled=True) for "
        "a group-blind policy")
    return Price(problem.utility_name, float(expected_utility(problem, confidence.center,
                                                              policy)),
                 float(confidence.value(policy, problem)), words, est, cert, plug_in_what,
                 narrower=narrower, **kw)


def warn_below_constant(price: Price, stacklevel: int = 3) -> None:
    """Warn (:class:`~fairdecide.exceptions.PriceWarning`) when the certified policy is
    estimated to be worth less than the best constant rule."""
    import warnings

    if price.below_constant:
        warnings.warn(
            f"the certified policy's estimated {price.utility} is {price.estimated:.4g}, "
            f"below {price.constant}'s {price.constant_estimated:.4g}: the confidence set "
            "is too wide for the guarantee to pay here (see result.guarantee.price); "
            f"{price.narrower} would narrow it",
            PriceWarning, stacklevel=stacklevel)


def priced(guarantee: Any, policy: Any, confidence: Any, problem: Any, criteria: list,
           names: list[str], plug_in: Callable[[], Any], plug_criteria: list,
           tradeoff: dict, group_blind: bool, stacklevel: int = 3) -> Any:
    """``guarantee`` with its :class:`Price`: ``plug_in()`` fits the plug-in policy (at
    the set's centre under ``plug_criteria`` and ``tradeoff``, keyword arguments of
    :func:`~fairdecide.optimize_policy`; said in words), whose deviations are bounded by
    ``criteria`` (named ``names``, as :meth:`~fairdecide.criteria.Criterion.over_set`
    returns them); warns when ``policy`` is estimated to be worth less than the best
    constant rule."""
    what = describe_plug_in(plug_criteria, tradeoff) + (", group-blind" if group_blind
                                                         else "")
    try:
        plug = plug_in()
    except FairdecideError as err:  # e.g. a tolerance the centre cannot meet
        plug, what = None, f"the plug-in policy ({what}) could not be fitted: {err}"
    price = price_of(policy, confidence, problem, plug, what, criteria, names)
    warn_below_constant(price, stacklevel=stacklevel + 1)
    return dataclasses.replace(guarantee, price=price)


def describe_plug_in(criteria: list, tradeoff: dict) -> str:
    """How the plug-in policy is fitted, in words (``tradeoff``: ``{"epsilon": ...}`` or
    ``{"tradeoff": Tradeoff}``)."""
    if not criteria:
        return "the best policy at the estimate, without fairness criteria"
    if "epsilon" in tradeoff:
        eps = tradeoff["epsilon"]
        eps = list(eps) if isinstance(eps, list | tuple | np.ndarray) else [eps] * len(
            criteria)
        parts = ", ".join(c.tolerance_text(float(e)) for c, e in zip(criteria, eps,
                                                                     strict=True))
        return f"the best policy at the estimate with {parts}"
    return (f"the best policy at the estimate to "
            f"{tradeoff['tradeoff'].describe(resolve_names(criteria))}")
