"""What a set of worlds is (:class:`SetKind`): what its level means, and which policies
it certifies; and how a policy's value is read over it (:data:`READINGS`). A held-out
test (:data:`HELD_OUT`) certifies through the same words: it bounds one policy's own
rates and value from rows it was not fitted on, instead of every world of a set."""

from __future__ import annotations

from dataclasses import dataclass

from fairdecide._common.validation import check_choice

__all__ = ["CREDIBLE", "DATA", "HELD_OUT", "POOLED", "READINGS", "REFIT_BAND", "ReadsKind",
           "SetKind"]


@dataclass(frozen=True)
class SetKind:
    """What a set of worlds is: what its level means and which policies it certifies.

    Attributes
    ----------
    name : str
        The kind in words, for a set's description.
    statement : {"coverage", "posterior", "approximate"}
        The set holds the truth with probability at least its level over the data
        (a confidence set); with posterior probability about its level (a credible
        region); or about its level by an approximation (a bootstrap band).
    pooled : bool
        Its outcome regions are the cells' P(y | [a,] x), shared by the groups of a cell:
        it certifies group-blind policies only.
    source : {"set", "held-out"}
        Where the bounds come from: the worst case over every world of a set, or
        confidence bounds of the chosen policy's own rates and value on held-out rows.
    measured : str
        What a measurement found of the level, where it is not a bound (an
        approximation's coverage in a benchmark): said in the guarantee's sentence.
    """

    name: str
    statement: str
    pooled: bool = False
    source: str = "set"
    measured: str = ""

    def __post_init__(self) -> None:
        check_choice(self.statement, "statement", ("coverage", "posterior", "approximate"))
        check_choice(self.source, "source", ("set", "held-out"))

    @property
    def credible(self) -> bool:
        """The level is a posterior probability (the set is a credible region)."""
        return self.statement == "posterior"

    @property
    def approximate(self) -> bool:
        """The level is an approximation (a bootstrap band), not a bound."""
        return self.statement == "approximate"

    @property
    def where(self) -> str:
        """Where a deviation's bound holds, in words ("over the set", or "by the
        held-out test")."""
        return "over the set" if self.source == "set" else "by the held-out test"

    def probability(self, level: float) -> str:
        """The level in words: "at least 90%", or "about 90%" where it is not a bound."""
        word = "at least" if self.statement == "coverage" else "about"
        return f"{word} {100 * level:.3g}%"

    def sentence(self, level: float, value: float, utility: str, method: str) -> str:
        """What the set's worst value of a policy guarantees, in words."""
        pct = self.probability(level)
        if self.source == "held-out":
            return (f"With probability {pct} over the data, this policy's true {utility} is "
                    f"at least {value:.4g} (a lower confidence bound from rows the policy "
                    f"was not fitted on: {method}).")
        if self.statement == "posterior":
            return (f"Under the posterior, with probability {pct}, this policy's {utility} is "
                    f"at least {value:.4g} (its worst case over a credible region: {method}; "
                    "a Bayesian statement, not a coverage over data sets).")
        if self.statement == "approximate":
            found = f" Measured: {self.measured}." if self.measured else ""
            return (f"With probability {pct} over the data (a bootstrap approximation, not "
                    f"a bound), this policy's true {utility} is at least {value:.4g} (its "
                    f"worst case over {method}).{found}")
        return (f"With probability {pct} over the data, this policy's true {utility} is at "
                f"least {value:.4g} (its worst case over a confidence set: {method}).")



class ReadsKind:
    """What a set or a guarantee says of its level, read from its ``kind``: one
    definition for :class:`~fairdecide.uncertainty.confidence.ConfidenceSet` and
    :class:`~fairdecide.optimize.guarantee.Guarantee`."""

    kind: SetKind

    @property
    def credible(self) -> bool:
        """The level is a posterior probability (the set is a credible region)."""
        return self.kind.credible

    @property
    def approximate(self) -> bool:
        """The level is an approximation (a bootstrap band), not a bound."""
        return self.kind.approximate


#: A confidence set from data (:meth:`ConfidenceSet.from_data`).
DATA = SetKind("confidence set", "coverage")
#: The same, its outcome regions pooled over the groups of a cell (``pooled=True``).
POOLED = SetKind("confidence set pooled over the groups of a cell", "coverage", pooled=True)
#: A posterior credible region (:meth:`ConfidenceSet.from_posterior`).
CREDIBLE = SetKind("posterior credible region", "posterior")
#: A bootstrap band of an outcome model's individuals (:meth:`ConfidenceSet.from_refits`).
REFIT_BAND = SetKind(
    "bootstrap band", "approximate",
    measured="at 90% asked, the band held a well-specified logistic truth's probabilities "
    "for all 1,000 people at once in 80.5% of 200 data sets [74.3%, 85.8%], and a "
    "misspecified one in none, while the certified value held in 100% and 88% of them "
    "(benchmarks/results/certified_refits.txt): read the level as optimistic")
#: A held-out test (:func:`~fairdecide.optimize_held_out`): bounds of one policy's rates
#: and value from rows it was not fitted on.
HELD_OUT = SetKind("held-out test", "coverage", source="held-out")
#: How a policy's value is read over a set when it is optimised: its worst (the book's
#: maximin), its best (the optimistic twin), or its value at the set's centre, the
#: estimate, with the criteria still held over the whole set ("estimate": fairness
#: certified, the value the decision maker's own estimate; the guarantee still states
#: the worst value over the set).
READINGS = ("worst", "best", "estimate")
