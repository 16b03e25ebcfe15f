"""What the audit could not tell: small groups, suppressed cells, weak overlap, and the
assumptions its estimates rest on, as plain sentences."""

from __future__ import annotations

import numpy as np
import pandas as pd

from fairdecide.problem import DecisionProblem

__all__ = ["SMALL_GROUP", "limitations"]

#: A group with fewer rows than this gets a sentence: its rates are rough.
SMALL_GROUP = 100


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def limitations(est: dict, pol: dict | None, sizes: pd.DataFrame, rates: dict,
                problem: DecisionProblem | None, meta: dict, min_cell: int) -> list[str]:
    """The report's list of limitations (see the module docstring); without the values
    and the fair alternative (``pol`` and ``problem`` None), only those of the groups,
    rates and tests."""
    out = []
    private = meta["min_cell"] is None
    small = sizes[(sizes["n"] < SMALL_GROUP) | sizes["suppressed"]]
    for _, row in small.iterrows():
        size = ("fewer than " + str(min_cell) if row["suppressed"] else
                f"about {row['n']:.0f}" if private else f"only {row['n']:.0f}")
        out.append(f"The group {row['group']!r} has {size} rows: its rates and its part "
                   "of every deviation are rough (see the widths of the intervals).")
    n_sup = sum(int(t["suppressed"].sum()) for t in rates.values())
    n_all = sum(len(t) for t in rates.values())
    if n_sup:
        what = ("no count was released for them" if private else
                f"their group has a count of 1 to {min_cell - 1} people, which its other "
                "counts would disclose by subtraction")
        out.append(f"{n_sup} of {n_all} rates are not shown: {what}.")
    if pol is not None:
        out += _value_limits(est, pol, problem, meta, min_cell)
    out.append("The Bayes factors compare Dirichlet(1) priors on the conditional "
               "distributions; other priors give other factors, most of all for small "
               "groups. A deviation is a sum of absolute differences over groups and "
               "conditioning values, so it can exceed 1.")
    if private:
        out.append("With privacy, the posterior columns and the Bayes factors treat the "
                   "released (noisy) counts as if they were exact; the bootstrap "
                   "intervals carry the noise.")
    if pol is not None and not np.isfinite(
            pol["table"][["value", "deviation"]].to_numpy()).all():
        out.append("Some values could not be estimated.")  # pragma: no cover - guarded
    return out


def _value_limits(est: dict, pol: dict, problem: DecisionProblem, meta: dict,
                  min_cell: int) -> list[str]:
    """The limitations of the values and of the fair alternative."""
    out = []
    C = est["test"]
    n_xz = C.sum(axis=(2, 3))
    thin = float(n_xz[(n_xz > 0) & (n_xz < min_cell)].sum() / C.sum())
    if thin > 0.01:
        out.append(f"{_pct(thin)} of the test rows are in cells (features and group) with "
                   f"fewer than {min_cell} rows: values there are estimated from very few "
                   "people.")
    if problem.outcome_depends_on_action:
        n_xza = C.sum(axis=-1)
        single = ((n_xza > 0).sum(axis=-1) == 1) & (n_xz > 0)
        share = float(n_xz[single].sum() / C.sum())
        if share > 0.01:
            out.append(f"In cells holding {_pct(share)} of the rows only one decision was "
                       "ever logged: what another decision would have done there is not in "
                       "the data (weak overlap).")
        for _, row in pol["table"].iterrows():
            if row["unsupported"] > 0.01:
                out.append(
                    f"{_pct(row['unsupported'])} of the decisions of the {row['policy']} "
                    "policy are of an action never logged in that cell: its value there "
                    "comes from the same group's other cells (or from everyone), not from "
                    "people like them.")
        out.append("Off-policy values of an intervention assume the logged decisions "
                   "depended only on the recorded features and group (no unrecorded "
                   "reason that also affects the outcome).")
    else:
        out.append("The alternatives decide from the features given "
                   f"({', '.join(meta['features']) or 'none'}) and "
                   f"{'not ' if meta['group_blind'] else ''}the group; the logged "
                   "decisions may have used more (a score, an interview), so compare their "
                   "values and deviations, not their decisions.")
    fair = pol["table"].iloc[-1]
    out.append(
        "The alternatives were fitted on a random half of the rows and are evaluated on "
        "the other half, so their values are not flattered by overfitting; the "
        f"tolerance {meta['epsilon']:g} holds in the world estimated from the training "
        "half, and on the test half the fair policy's deviation is "
        f"{fair['deviation']:.3f} [{fair['deviation_low']:.3f}, "
        f"{fair['deviation_high']:.3f}].")
    return out

