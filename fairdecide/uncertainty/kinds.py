"""What a set of worlds is (:class:`SetKind`): what its level means, and which policies
it certifies; and how a policy's value is read over it (:data:`READINGS`)."""

from __future__ import annotations

from dataclasses import dataclass

from fairdecide._common.validation import check_choice

__all__ = ["CREDIBLE", "DATA", "POOLED", "READINGS", "REFIT_BAND", "SetKind"]


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
    """

    name: str
    statement: str
    pooled: bool = False

    def __post_init__(self) -> None:
        check_choice(self.statement, "statement", ("coverage", "posterior", "approximate"))

    def probability(self, level: float) -> str:
        """The level in words: "at least 90%", or "about 90%" where it is not a bound."""
        word = "at least" if self.statement == "coverage" else "about"
        return f"{word} {100 * level:.3g}%"

    def sentence(self, level: float, value: float, utility: str, method: str) -> str:
        """What the set's worst value of a policy guarantees, in words."""
        pct = self.probability(level)
        if self.statement == "posterior":
            return (f"Under the posterior, with probability {pct}, this policy's {utility} is "
                    f"at least {value:.4g} (its worst case over a credible region: {method}; "
                    "a Bayesian statement, not a coverage over data sets).")
        if self.statement == "approximate":
            return (f"With probability {pct} over the data (a bootstrap approximation, not "
                    f"a bound), this policy's true {utility} is at least {value:.4g} (its "
                    f"worst case over {method}).")
        return (f"With probability {pct} over the data, this policy's true {utility} is at "
                f"least {value:.4g} (its worst case over a confidence set: {method}).")


#: A confidence set from data (:meth:`ConfidenceSet.from_data`).
DATA = SetKind("confidence set", "coverage")
#: The same, its outcome regions pooled over the groups of a cell (``pooled=True``).
POOLED = SetKind("confidence set pooled over the groups of a cell", "coverage", pooled=True)
#: A posterior credible region (:meth:`ConfidenceSet.from_posterior`).
CREDIBLE = SetKind("posterior credible region", "posterior")
#: A bootstrap band of an outcome model's individuals (:meth:`ConfidenceSet.from_refits`).
REFIT_BAND = SetKind("bootstrap band", "approximate")
#: How a policy's value is read over a set: its worst, or (the optimistic twin) its best.
READINGS = ("worst", "best")
