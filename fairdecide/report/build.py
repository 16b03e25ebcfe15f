"""Building the audit report from a table of logged decisions.

The steps, each a function of count tables (:mod:`fairdecide.report.tables`):

1. read the table, keep the audited columns (:mod:`fairdecide.report.inputs`);
2. count G[z, a, y] on all rows, and C[x, z, a, y] on two random halves (train, test);
   with ``dp_epsilon``, release every table through a differentially private mechanism
   instead (the halves are disjoint, so their two releases cost one share of the budget:
   parallel composition) and use only the releases from here on;
3. group rates with intervals, small cells suppressed (exact counts) or noise-aware
   intervals (private counts);
4. each criterion's deviation with its interval, posterior and Bayes-factor test;
5. a fair alternative: the best policy under the chosen criterion in the world estimated
   from the training half; the logged decisions, the unconstrained best and the fair
   policy evaluated on the test half (value and deviation with intervals); the Pareto
   frontier of the training world;
6. what the audit could not tell.

Steps 1-4 read only the labels of the actions and outcomes, never a utility. Without a
utility or a kind where no default applies, step 5 is skipped: the report holds the
groups, rates and tests, and a sentence saying what to give to get the rest
(:func:`fairdecide.report.words.skipped_text`).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fairdecide._common.validation import as_bool, as_int, as_real, check_random_state
from fairdecide.evaluation.audit import audit_table, labels_problem
from fairdecide.exceptions import FairdecideError
from fairdecide.privacy import (
    SMALL_CELL_THRESHOLD,
    PrivacyBudget,
    release_counts,
    replicate_releases,
)
from fairdecide.privacy._opendp import require_opendp
from fairdecide.report import alternative
from fairdecide.report import tables as tb
from fairdecide.report.inputs import prepare_data, read_table
from fairdecide.report.limits import limitations
from fairdecide.report.rates import group_sizes, rate_tables
from fairdecide.report.report import AuditReport
from fairdecide.report.utility import make_problem
from fairdecide.report.words import bayes_factor_text, skipped_text

__all__ = ["audit_report"]

CRITERIA = alternative.CRITERIA


_PARALLEL = (
    " The cell tables are the counts n(x, z, a, y) of two random halves of the rows (one to "
    "fit the fair alternative, one to evaluate it); the halves are disjoint, so the two "
    "releases together cost the cell tables' share once (parallel composition).")


class _Steps:
    """Progress: each step's name and the seconds since the start, to ``callback``."""

    def __init__(self, callback: Callable[[str], Any] | None, total: int) -> None:
        self.callback, self.total, self.k, self.t0 = callback, total, 0, time.perf_counter()

    def __call__(self, what: str) -> None:
        self.k += 1
        if self.callback is not None:
            self.callback(f"[{self.k}/{self.total}] {what} "
                          f"({time.perf_counter() - self.t0:.1f} s)")


def _release(tables: dict[str, np.ndarray], dp_epsilon: float | None, mechanism: str
             ) -> tuple[dict, dict, Any]:
    """Exact tables, or their private releases: (estimates, releases, budget)."""
    if dp_epsilon is None:
        return dict(tables), {}, None

    shares = ({"group table": 0.5, "cell tables": 0.5} if "train" in tables else
              {"group table": 1.0})  # no value asked for: the group table has it all
    budget = PrivacyBudget(epsilon=dp_epsilon, shares=shares)
    eps = {k: budget.epsilon_of("group table" if k == "group" else "cell tables")
           for k in tables}
    releases = {k: release_counts(T.astype(np.int64), eps[k], mechanism)
                for k, T in tables.items()}
    return {k: r.estimate() for k, r in releases.items()}, releases, budget


def _replicates(key: str, est: dict, releases: dict, n: int, rng: np.random.RandomState
                ) -> np.ndarray:
    if key in releases:
        return replicate_releases(releases[key], n, random_state=rng)
    return tb.resample_tables(est[key], n, rng)


def audit_report(
    data: pd.DataFrame | str | Path, *, group: str, action: str, outcome: str,
    features: Sequence[str] | None = None, groups: Sequence[Any] | None = None,
    bins: dict | None = None, utility: Any = None, kind: str | None = None,
    criterion: str = "separation", epsilon: float = 0.05, group_blind: bool = False,
    level: float = 0.95, dp_epsilon: float | None = None, dp_mechanism: str = "geometric",
    min_cell: int | None = None, n_boot: int = 300, max_levels: int = 8,
    random_state: Any = 0, outcome_labels: Sequence[Any] | None = None,
    action_labels: Sequence[Any] | None = None, accept_rare_labels: bool = False,
    progress: Callable[[str], Any] | None = None,
) -> AuditReport:
    """Audit logged decisions: group rates, fairness tests and a fair alternative.

    Parameters
    ----------
    data : DataFrame, or the path of a CSV or Parquet file
    group, action, outcome : str
        Columns: the sensitive attribute z, the logged decision a, the outcome y.
    features : list of str, optional
        Columns a decision may depend on (cells x); numeric ones with more than
        ``max_levels`` values are cut into quantile bins. Default: none (cells = groups).
    groups : list, optional
        Audit only these values of the group column (default: all).
    bins : dict, optional
        Bin edges of numeric features, ``{column: [e0, e1, ...]}`` (intervals
        [e_k, e_k+1)); with privacy, the only way to use a numeric feature with many
        values.
    utility : JSON text, "@file.json" or mapping ``{action: {outcome: value}}``, optional
        U(a, y). Default: accuracy, when the actions are the outcomes.
    kind : {"prediction", "intervention"}, optional
        Whether the outcome could depend on the decision. Default: prediction when the
        actions are the outcomes.

        The values and the fair alternative need both ``utility`` and ``kind``; the
        groups, rates, deviations and tests need neither. When the actions are not the
        outcomes and either is missing, the report holds only the fairness parts
        (``policies``, ``fair_policy`` and ``frontier`` are None) and ``skipped`` says
        what to pass to get the rest. A given one is checked either way.
    criterion : {"independence", "separation", "sufficiency"}, default="separation"
        The criterion the fair alternative satisfies (all three are tested).
    epsilon : float, default=0.05
        The fair alternative's tolerance on that criterion's deviation (in the world
        estimated from the training half).
    group_blind : bool, default=False
        Whether the fair alternative may not read the group.
    level : float, default=0.95
        Level of every interval.
    dp_epsilon : float, optional
        Release everything through pure epsilon-differential privacy: the group table and
        the cell tables each get half of the budget (:mod:`fairdecide.privacy`). Needs
        OpenDP, the privacy extra (``pip install 'fairdecide[privacy]'``).
    dp_mechanism : {"geometric", "laplace"}, default="geometric"
    min_cell : int, optional
        Without privacy, counts from 1 to ``min_cell - 1`` and the rates they reveal are
        suppressed. Default :data:`fairdecide.privacy.SMALL_CELL_THRESHOLD`; 1 turns
        suppression off.
    n_boot : int, default=300
        Replicate tables for the intervals, >= 50.
    max_levels : int, default=8
    random_state : int, RandomState or None, default=0
        The split into halves and the replicate tables (reproducible by default). It
        never seeds the privacy noise, which comes from OpenDP's secure generator and
        cannot be seeded: a private report differs from run to run.
    outcome_labels, action_labels : list, optional
        The values the outcome and action columns may take (matched as text, so ``"1"``
        names the value 1 of a numeric column): any other value is an error naming it
        and its rows (the table's index). Without them, a rare value whose form looks
        like a typo of a frequent one (one ``"yes"`` among thousands of 0s and 1s,
        ``"Meduim"`` beside ``"Medium"``; :func:`~fairdecide.labels.suspect_labels`)
        stops the audit: a :class:`~fairdecide.exceptions.SuspiciousLabelError` names
        the column, the value and its rows, and the ways on. A rare value of the same
        form as the others (an item chosen 4 times among 80) is no typo and passes.
    accept_rare_labels : bool, default=False
        Keep values that look like typos as values of their own instead of stopping
        (the report's notes name each one).
    progress : callable, optional
        Called with a line of text at each step.

    Returns
    -------
    AuditReport
        ``summary()``, ``to_html()``, ``to_json()``, ``to_dict()``.

    Examples
    --------
    >>> from fairdecide.datasets import make_bail_problem, sample_logged_data
    >>> from fairdecide.report import audit_report
    >>> problem, world = make_bail_problem()
    >>> df = sample_logged_data(problem, world, 2000, random_state=0).to_frame()
    >>> utility = {"detain": {"0": 0, "1": -1, "2": -2}, "release": {"0": 1, "1": 0, "2": -1}}
    >>> rep = audit_report(df, group="z", action="a", outcome="y", features=["x"],
    ...                    utility=utility, kind="intervention", criterion="independence",
    ...                    n_boot=50)
    >>> list(rep.policies["policy"])
    ['logged decisions', 'unconstrained best',
     'fair (independence, TV summed vs pooled <= 0.05)']

    Without a utility and a kind, the fairness parts alone:

    >>> rep = audit_report(df, group="z", action="a", outcome="y", n_boot=50)
    >>> rep.policies is None, list(rep.criteria["criterion"])
    (True, ['independence, TV summed vs pooled', 'separation, TV summed vs pooled',
     'sufficiency, TV summed vs pooled'])
    >>> print(rep.skipped)
    The decisions (a: detain, release) take other values than the outcome (y: 0, 1, 2), so
    no utility (accuracy) or kind (prediction) applies by default. Pass utility= and kind=
    to audit_report to see the value of these decisions and a fair alternative.

    A value that looks like a typo stops the audit, naming its rows:

    >>> df["y"] = df["y"].astype(object)
    >>> df.loc[7, "y"] = "yes"
    >>> audit_report(df, group="z", action="a", outcome="y", n_boot=50)
    Traceback (most recent call last):
    ...
    fairdecide.exceptions.SuspiciousLabelError: outcome column 'y' has the value 'yes' ...
    """
    if not isinstance(criterion, str) or criterion not in CRITERIA:
        raise FairdecideError(f"criterion must be one of {list(CRITERIA)}, got {criterion!r}")
    epsilon = as_real(epsilon, "epsilon", low=0)
    level = as_real(level, "level", 0, 1, low_open=True, high_open=True)
    n_boot = as_int(n_boot, "n_boot", minimum=50)
    group_blind = as_bool(group_blind, "group_blind")
    min_cell = SMALL_CELL_THRESHOLD if min_cell is None else as_int(min_cell, "min_cell",
                                                                    minimum=1)
    if dp_epsilon is not None:
        dp_epsilon = as_real(dp_epsilon, "dp_epsilon", low=0, low_open=True)
        require_opendp()  # no OpenDP: say so (the privacy extra) before reading the data
    rng = check_random_state(random_state)
    step = _Steps(progress, 6)
    if not isinstance(data, str | Path | pd.DataFrame):
        raise FairdecideError("data must be a DataFrame or the path of a CSV or Parquet "
                              f"file, got {type(data).__name__}")
    if isinstance(data, str | Path) and not Path(data).is_file():
        raise FairdecideError(f"data={str(data)!r} is not a file; give the path of a CSV "
                              "or Parquet table of logged decisions")
    source = str(data) if isinstance(data, str | Path) else "a DataFrame"
    step(f"reading {source}")
    frame = read_table(data) if isinstance(data, str | Path) else data
    logged, notes = prepare_data(frame, group=group, action=action, outcome=outcome,
                                 features=features, groups=groups, bins=bins,
                                 max_levels=max_levels, public_cells=dp_epsilon is not None,
                                 outcome_labels=outcome_labels, action_labels=action_labels,
                                 accept_rare_labels=accept_rare_labels)
    problem, missing = make_problem(logged, utility, kind)
    labels = problem if problem is not None else labels_problem(logged)
    step(f"counting {'and releasing privately ' if dp_epsilon else ''}the tables")
    half = rng.permutation(logged.n)
    train, test = logged.subset(half[: logged.n // 2]), logged.subset(half[logged.n // 2:])
    tables = {"group": tb.group_table(logged, labels)}
    if problem is not None or dp_epsilon is None:
        # The halves' tables serve only the values, but are counted and resampled without
        # privacy either way: the random draws, hence every fairness number, are then the
        # same with and without a utility. A private release of unused tables would
        # spend budget for nothing.
        tables.update(train=tb.cell_table(train, labels), test=tb.cell_table(test, labels))
    est, releases, budget = _release(tables, dp_epsilon, dp_mechanism)
    for key, T in est.items():
        if T.sum() <= 0:
            raise FairdecideError(f"the private {key} table is all zeros: dp_epsilon "
                                  f"({dp_epsilon}) is too small for {logged.n} rows")
    reps = {k: _replicates(k, est, releases, n_boot, rng) for k in est}
    step("group rates")
    sizes = group_sizes(est["group"], logged.group_labels, releases.get("group"), min_cell)
    rates = rate_tables(est["group"], labels, logged.group_labels, level,
                        releases.get("group"), min_cell)
    step("testing the criteria")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        draws = reps["group"] / reps["group"].sum(axis=(1, 2, 3), keepdims=True)
        crit_table = audit_table(est["group"], draws, labels, list(CRITERIA.values()),
                                 level=level, random_state=rng,
                                 group_labels=logged.group_labels)
    notes += [" ".join(str(w.message).split()) for w in caught]
    crit_table["in_words"] = [bayes_factor_text(c, lb, group, action, outcome) for c, lb in
                              zip(crit_table["criterion"], crit_table["log_bayes_factor"],
                                  strict=True)]
    pol = None
    if problem is None:
        step(f"no values and no fair alternative: no {' and no '.join(missing)}")
    else:
        step(f"finding a fair alternative ({criterion} <= {epsilon:g})")
        pol = alternative.policies(est, reps, problem, criterion, epsilon, group_blind,
                                   logged, level, 7, releases.get("test"))
        pol["table"] = pd.DataFrame([
            alternative.logged_row(est, releases, problem, crit_table, criterion, level),
            *pol["table"].to_dict("records")])
        notes += pol["notes"]
    step("writing the report")

    meta = {"source": source, "group": group, "action": action, "outcome": outcome,
            "features": list(features or []), "kind": kind if problem is None else
            "intervention" if problem.outcome_depends_on_action else "prediction",
            "utility": None if problem is None else problem.utility.tolist(),
            "action_labels": [str(a) for a in labels.action_labels],
            "outcome_labels": [str(y) for y in labels.outcome_labels],
            "group_labels": [str(g) for g in logged.group_labels],
            "n_cells": logged.n_x, "criterion": criterion,
            "criterion_label": CRITERIA[criterion].label, "epsilon": epsilon,
            "group_blind": group_blind, "level": level, "n_boot": n_boot,
            "min_cell": None if dp_epsilon else min_cell,
            "n_rows": (max(0.0, float(np.sum(releases["group"].values))) if dp_epsilon
                       else int(logged.n))}
    if pol is None:
        meta["missing"] = missing
    return AuditReport(
        meta=meta, groups=sizes, rates=rates, criteria=crit_table,
        policies=None if pol is None else pol["table"],
        fair_policy=None if pol is None else alternative.decisions(
            pol, problem, logged, est, None if dp_epsilon else min_cell),
        frontier=None if pol is None else pol["frontier"], notes=notes,
        limitations=([] if pol is None else pol["limits"])
        + limitations(est, pol, sizes, rates, problem, meta, min_cell),
        privacy=None if budget is None else {
            "epsilon": dp_epsilon, "mechanism": dp_mechanism, "budget": budget.to_dict(),
            "statement": budget.describe() + ("" if pol is None else _PARALLEL)},
        seconds=time.perf_counter() - step.t0,
        skipped=None if pol is not None else skipped_text(missing, meta=meta))
