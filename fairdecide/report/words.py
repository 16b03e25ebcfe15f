"""The report in plain words: what each test found, and how strongly.

Bayes factors are read on the scale of Kass and Raftery (1995, "Bayes factors", JASA
90:773), in favour of whichever hypothesis the data support:

==========  =====================================
BF          evidence
==========  =====================================
1 to 3      not worth more than a bare mention
3 to 20     positive
20 to 150   strong
above 150   very strong
==========  =====================================
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from fairdecide.criteria.base import short_name

__all__ = ["RECONCILE", "bayes_factor_text", "evidence_strength", "size_text",
           "skipped_text", "statement"]

_SCALE = ((150.0, "very strong"), (20.0, "strong"), (3.0, "positive"),
          (1.0, "weak (not worth more than a bare mention)"))


def evidence_strength(log_bf: float) -> str:
    """The Kass-Raftery label of a Bayes factor exp(|log_bf|) >= 1."""
    bf = math.exp(min(abs(log_bf), 700.0))
    for bound, label in _SCALE:
        if bf >= bound:
            return label
    return _SCALE[-1][1]  # pragma: no cover - bf >= 1 always


def format_bf(log_bf: float) -> str:
    """A Bayes factor exp(|log_bf|) as text, in powers of ten when it is huge."""
    x = abs(log_bf)
    if x < math.log(1e6):
        return f"{math.exp(x):.3g}"
    return f"10^{x / math.log(10):.0f}"


def statement(criterion: str, group: str, action: str, outcome: str) -> tuple[str, str]:
    """What a criterion's violation means, and what it holding means, in words."""
    if criterion == "independence":
        return (f"decisions ({action}) depend on {group}",
                f"decisions ({action}) are independent of {group}")
    if criterion == "separation":
        return (f"decisions ({action}) depend on {group} among people with the same "
                f"outcome ({outcome})",
                f"decisions ({action}) are independent of {group} given the outcome "
                f"({outcome})")
    if criterion == "sufficiency":
        return (f"outcomes ({outcome}) depend on {group} among people given the same "
                f"decision ({action})",
                f"outcomes ({outcome}) are independent of {group} given the decision "
                f"({action})")
    return (f"{criterion} does not hold", f"{criterion} holds")


def bayes_factor_text(criterion: str, log_bf: float, group: str, action: str,
                      outcome: str) -> str:
    """One sentence: the direction, strength and size of the evidence.

    ``log_bf`` is the log Bayes factor of the criterion's independence against
    dependence (as :func:`fairdecide.evaluation.audit` reports it).

    Examples
    --------
    >>> from fairdecide.report.words import bayes_factor_text
    >>> print(bayes_factor_text("separation", -4.2, "race", "high risk", "reoffended"))
    decisions (high risk) depend on race among people with the same outcome (reoffended):
    strong evidence, BF = 66.7 against separation
    """
    criterion = short_name(criterion)  # the test is of exact independence: any measure
    violated, holds = statement(criterion, group, action, outcome)
    strength = evidence_strength(log_bf)
    bf = format_bf(log_bf)
    if log_bf < 0:
        return f"{violated}: {strength} evidence, BF = {bf} against {criterion}"
    return f"{holds}: {strength} evidence, BF = {bf} for {criterion}"


#: How a Bayes factor and a deviation's interval fit together, for the page a
#: non-specialist reads (docs/evaluation.md says it at length).
RECONCILE = (
    "The evidence and the size answer different questions. The Bayes factor weighs "
    "whether a criterion holds exactly; the interval says how large the departure from it "
    "is. Very strong evidence of a violation can come with a wide interval: the data are "
    "sure the groups differ, not by how much. And evidence for a criterion can come with "
    "an interval above 0: a small departure that the data cannot yet tell from none, not "
    "proof of fairness.")


def size_text(criterion: str, log_bf: float, value: float, low: float, high: float,
              level: float) -> str:
    """How large a criterion's deviation is, said beside the evidence about it.

    Examples
    --------
    >>> from fairdecide.report.words import size_text
    >>> print(size_text("sufficiency", -30.0, 1.2, 0.26, 5.05, 0.95))
    How large: sufficiency's deviation is 1.2 (95% interval 0.26 to 5.05; 0 means it holds
    exactly). The data are sure it does not hold exactly, much less sure how far from it
    they are.
    """
    out = (f"How large: {criterion}'s deviation is {value:.3g} ({level:.0%} interval "
           f"{low:.3g} to {high:.3g}; 0 means it holds exactly).")
    wide = high - low > max(value, 1e-12)
    if log_bf < -math.log(20) and wide:
        out += (" The data are sure it does not hold exactly, much less sure how far from "
                "it they are.")
    elif log_bf > math.log(3) and low > 0:
        out += (" The evidence favours the criterion, yet the interval is above 0: a small "
                "departure the data cannot yet tell from none.")
    return out


def _values(labels: Sequence[str], shown: int = 8) -> str:
    return ", ".join(labels[:shown]) + (", ..." if len(labels) > shown else "")


def _why_no_default(missing: Sequence[str], meta: dict) -> str:
    """Why the defaults (accuracy, prediction) do not apply: the decisions take other
    values than the outcome; the one or few values only one of them takes are named."""
    acts, outs = list(meta["action_labels"]), list(meta["outcome_labels"])
    out = (f"The decisions ({meta['action']}: {_values(acts)}) take other values than "
           f"the outcome ({meta['outcome']}: {_values(outs)})")
    only_out = [y for y in outs if y not in acts]
    only_act = [a for a in acts if a not in outs]
    if set(acts) & set(outs) and 0 < len(only_out) + len(only_act) <= 3:
        parts = ([f"only the outcome has {', '.join(only_out)}"] if only_out else []) + (
            [f"only the decisions have {', '.join(only_act)}"] if only_act else [])
        out += f": {' and '.join(parts)}"
    default = {"utility": "utility (accuracy)", "kind": "kind (prediction)"}
    return out + f", so no {' or '.join(default[m] for m in missing)} applies by default."


def skipped_text(missing: Sequence[str], command_line: bool = False,
                 meta: dict | None = None) -> str:
    """The sentence a report shows in place of its value sections: what to give to get
    them. ``missing`` lists "utility" and/or "kind"; the command line's wording names its
    options, Python's the keyword arguments of ``audit_report``. With ``meta`` (the
    report's), it first says why no default applies: the decisions take other values than
    the outcome, naming the few values only one of them has (a typo kept in the outcome,
    say).

    Examples
    --------
    >>> from fairdecide.report.words import skipped_text
    >>> print(skipped_text(["utility", "kind"], command_line=True))
    Add --utility and --kind to see the value of these decisions and a fair alternative.
    >>> print(skipped_text(["kind"]))
    Pass kind="prediction" or kind="intervention" to audit_report to see the value of these
    decisions and a fair alternative.
    >>> meta = {"action": "flag", "outcome": "recid", "action_labels": ["0", "1"],
    ...         "outcome_labels": ["0", "1", "yes"]}
    >>> print(skipped_text(["utility", "kind"], command_line=True, meta=meta))
    The decisions (flag: 0, 1) take other values than the outcome (recid: 0, 1, yes): only
    the outcome has yes, so no utility (accuracy) or kind (prediction) applies by default.
    Add --utility and --kind to see the value of these decisions and a fair alternative.
    """
    if command_line:
        names = {"utility": "--utility", "kind": "--kind"}
        if list(missing) == ["kind"]:
            names["kind"] = "--kind prediction or --kind intervention"
        verb, where = "Add", ""
    else:
        names = {"utility": "utility=", "kind": "kind="}
        if list(missing) == ["kind"]:
            names["kind"] = 'kind="prediction" or kind="intervention"'
        verb, where = "Pass", " to audit_report"
    why = "" if meta is None else _why_no_default(missing, meta) + " "
    return (f"{why}{verb} {' and '.join(names[m] for m in missing)}{where} to see the "
            "value of these decisions and a fair alternative.")
