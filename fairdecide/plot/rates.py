"""Group rates of actions and outcomes with intervals: the quantities the three group
criteria compare, by group."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from fairdecide._common.validation import as_int, as_real, check_random_state
from fairdecide.exceptions import FairdecideError
from fairdecide.labels import Labels, as_object_vector
from fairdecide.plot import _rates
from fairdecide.plot._common import (
    axes,
    check_choice,
    check_labels,
    check_lengths,
    encode,
    policy_rows,
    response,
)
from fairdecide.worlds.table import decision_table

__all__ = ["GroupRatesDisplay"]

# Below this probability mass a group's action (or outcome) counts as absent in exact
# rates: an LP's rounding residue would otherwise decide P(y | a, z) for an action never
# taken.
EXACT_MASS_TOL = 1e-12


class GroupRatesDisplay:
    """Rates by group of one of three kinds, with intervals.

    - ``"action"``: P(a | z), which independence (demographic parity) equalises;
    - ``"action_given_outcome"``: P(a | y, z), which separation (equalized odds)
      equalises;
    - ``"outcome_given_action"``: P(y | a, z), which sufficiency (calibration within
      groups) equalises.

    From predictions, the rates are exact averages of the policy's probabilities over the
    rows of each group (see :meth:`from_predictions`), with percentile-bootstrap
    intervals; from an optimisation result they are the exact rates in a known world.

    Parameters
    ----------
    rates : DataFrame
        Columns ``group``, ``action``, ``outcome`` (for the conditional kinds), ``rate``,
        ``lower``, ``upper``; optionally ``n`` and ``denominator``.
    kind : {"action", "action_given_outcome", "outcome_given_action"}
    level : float, optional
        Level of the intervals, for the record (None for exact rates).

    Attributes
    ----------
    rates_ : DataFrame
        One row per group and cell: ``group``, ``action``, [``outcome``], ``rate``,
        ``lower``, ``upper``, ``n`` (rows the rate rests on; <NA> for exact rates) and
        ``denominator`` (the mass divided by: a row count or sum of probabilities, or a
        probability for exact rates). A cell with nothing to condition on (a group with
        no rows of that outcome, an action with zero mass) has ``denominator`` 0 and
        NaN in ``rate``, ``lower`` and ``upper``: a warning names it when it is computed,
        and :meth:`plot` writes "n/a" there instead of a bar.
    kind : str
    level : float or None
    ax_, figure_ : matplotlib Axes and Figure
        Set by :meth:`plot`, as are the following.
    containers_ : dict of group label to matplotlib container
        The bars (``BarContainer``, whose ``errorbar`` holds the intervals) or points
        (``ErrorbarContainer``) of each group.
    missing_texts_ : list of matplotlib Text
        The "n/a" marks of missing cells.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from fairdecide.plot import GroupRatesDisplay
    >>> z = ["a", "a", "a", "b", "b", "b"]
    >>> proba = [[0.5, 0.5], [0, 1], [0, 1], [1, 0], [1, 0], [0.5, 0.5]]
    >>> display = GroupRatesDisplay.from_predictions(None, proba, z, n_boot=50,
    ...                                              random_state=0)
    >>> display.rates_[["group", "action", "rate"]]
      group  action      rate
    0     a       0  0.166667
    1     a       1  0.833333
    2     b       0  0.833333
    3     b       1  0.166667
    >>> display = display.plot()
    >>> display.ax_.get_ylabel(), len(display.containers_)
    ('P(a | z)', 2)
    >>> matplotlib.pyplot.close(display.figure_)
    """

    def __init__(self, rates: pd.DataFrame, *, kind: str = "action",
                 level: float | None = None) -> None:
        self.kind = check_choice(kind, "kind", _rates.KINDS)
        if not isinstance(rates, pd.DataFrame):
            raise FairdecideError(f"rates must be a DataFrame, got {type(rates).__name__}")
        need = ["group", "action", "rate", "lower", "upper"]
        if kind != "action":
            need.insert(2, "outcome")
        missing = [c for c in need if c not in rates.columns]
        if missing:
            raise FairdecideError(
                f"rates has no column(s) {missing}; kind={kind!r} needs {need}")
        if len(rates) == 0:
            raise FairdecideError("rates has no rows; there is nothing to display")
        self.rates_ = rates
        self.level = None if level is None else as_real(level, "level", 0, 1, True, True)

    @classmethod
    def from_predictions(cls, y: Any, action_proba: Any, sensitive_features: Any, *,
                         kind: str = "action",
                         action_labels: Sequence[Any] | None = None,
                         outcome_labels: Sequence[Any] | None = None,
                         level: float = 0.95, n_boot: int = 200,
                         random_state: Any = None) -> GroupRatesDisplay:
        """Group rates of a policy's probabilities on a sample, with bootstrap intervals.

        With pi(a | x_i) the policy's row for person i and G_z the rows of group z:

            P(a | z)    = (1 / |G_z|) sum_{i in G_z} pi(a | x_i)
            P(a | y, z) = the same mean over the rows of G_z with y_i = y
            P(y | a, z) = sum_{i in G_z} pi(a | x_i) [y_i = y] / sum_{i in G_z} pi(a | x_i)

        Intervals are percentile-bootstrap intervals: each of ``n_boot`` resamples draws
        each group's rows with replacement (groups keep their sizes), and the interval
        holds the central ``level`` of the resampled rates.

        Parameters
        ----------
        y : array-like of shape (n,) or None
            Outcome labels; may be None for ``kind="action"``.
        action_proba : array-like of shape (n, n_actions) or (n,)
            Each person's row pi(. | x_i) of a (possibly randomised) policy, on the
            simplex; or a 1-d array of the action labels decided (read as one-hot rows).
        sensitive_features : array-like of shape (n,)
            Group label of each row.
        kind : {"action", "action_given_outcome", "outcome_given_action"}, default="action"
        action_labels : sequence, optional
            Labels of the columns of ``action_proba``, or for decided actions the labels
            and their order. Default: 0..n_actions-1, or the sorted labels decided.
        outcome_labels : sequence, optional
            The outcome labels and their order; default the sorted labels of ``y``.
        level : float, default=0.95
            Interval level, in (0, 1).
        n_boot : int, default=200
            Bootstrap resamples; 0 computes no intervals (``lower`` and ``upper`` NaN,
            no error bars drawn).
        random_state : int, RandomState or None
            Seeds the resampling.

        Returns
        -------
        GroupRatesDisplay
        """
        return cls._from_arrays(y, action_proba, sensitive_features, kind, action_labels,
                                outcome_labels, level, n_boot, random_state)

    @classmethod
    def from_estimator(cls, estimator: Any, X: Any, y: Any, *, sensitive_features: Any,
                       kind: str = "action", response_method: str = "auto",
                       pass_sensitive_features: bool | str = "auto",
                       action_labels: Sequence[Any] | None = None,
                       outcome_labels: Sequence[Any] | None = None,
                       level: float = 0.95, n_boot: int = 200,
                       random_state: Any = None) -> GroupRatesDisplay:
        """Group rates of a fitted estimator's probabilities on ``X``.

        Calls ``estimator.<response_method>(X, sensitive_features=sensitive_features)``
        (or without the keyword, see ``pass_sensitive_features``) and passes the rows to
        :meth:`from_predictions`.

        Parameters
        ----------
        estimator : fitted estimator
        X : array-like
        y : array-like of shape (n,) or None
        sensitive_features : array-like of shape (n,)
        kind : str, default="action"
            As for :meth:`from_predictions`.
        response_method : {"auto", "predict_proba", "action_proba"}, default="auto"
            "auto" is ``predict_proba`` for a classifier
            (``sklearn.base.is_classifier``) and ``action_proba`` otherwise.
        pass_sensitive_features : bool or "auto", default="auto"
            Whether to pass ``sensitive_features`` to the method; "auto" passes them
            when the method has a parameter of that name.
        action_labels : sequence, optional
            Default: ``estimator.classes_``, else ``estimator.action_labels_``, else
            0..n_actions-1.
        outcome_labels, level, n_boot, random_state
            As for :meth:`from_predictions`.

        Returns
        -------
        GroupRatesDisplay
        """
        method = check_choice(response_method, "response_method",
                              ["auto", "predict_proba", "action_proba"])
        if method == "auto":
            from sklearn.base import is_classifier

            method = "predict_proba" if is_classifier(estimator) else "action_proba"
        proba = response(estimator, X, method, sensitive_features, pass_sensitive_features)
        if action_labels is None:
            for attr in ("classes_", "action_labels_"):
                if getattr(estimator, attr, None) is not None:
                    action_labels = list(getattr(estimator, attr))
                    break
        return cls._from_arrays(y, proba, sensitive_features, kind, action_labels,
                                outcome_labels, level, n_boot, random_state)

    @classmethod
    def _from_arrays(cls, y: Any, action_proba: Any, sensitive_features: Any, kind: str,
                     action_labels: Sequence[Any] | None,
                     outcome_labels: Sequence[Any] | None, level: float, n_boot: int,
                     random_state: Any) -> GroupRatesDisplay:
        """:meth:`from_predictions` (one frame below both public constructors, so that
        warnings point at the caller's line)."""
        kind = check_choice(kind, "kind", _rates.KINDS)
        level = as_real(level, "level", 0, 1, low_open=True, high_open=True)
        n_boot = as_int(n_boot, "n_boot", minimum=0)
        rng = check_random_state(random_state)
        g, group_labels = encode(sensitive_features, "sensitive_features")
        pi, action_labels = policy_rows(action_proba, action_labels)
        if y is None:
            if kind != "action":
                raise FairdecideError(f"y is required for kind={kind!r}; pass the outcomes")
            y_codes, outcome_labels = np.zeros(len(pi), dtype=np.intp), (None,)
        else:
            y_codes, outcome_labels = encode(y, "y", outcome_labels, "outcome_labels")
        check_lengths(y=y_codes, action_proba=pi, sensitive_features=g)
        shape = (len(group_labels), len(outcome_labels))
        M = _rates.sample_marginal(pi, y_codes, g, *shape)
        rate, den = _rates.conditional_rates(M, kind)
        n = _rates.sample_counts(pi, y_codes, g, *shape, kind)
        empty = ~(den > 0)
        lower = upper = np.full(rate.shape, np.nan)
        if n_boot:
            Mb = _rates.bootstrap_marginals(pi, y_codes, g, *shape, n_boot, rng)
            lower, upper, undefined = _rates.percentile_intervals(
                _rates.conditional_rates(Mb, kind)[0], level)
            names = _rates.cell_names(kind, group_labels, action_labels, outcome_labels)
            _rates.warn_undefined_replicates(kind, np.where(empty, 0, undefined), n_boot,
                                             names)
        frame = _rates.rates_frame(kind, rate, lower, upper, n, den, empty, group_labels,
                                   action_labels, outcome_labels)
        return cls(frame, kind=kind, level=level if n_boot else None)

    @classmethod
    def from_result(cls, result: Any, world: Any, problem: Any, *,
                    kind: str = "action") -> GroupRatesDisplay:
        """Exact group rates of an optimised policy in a known world (no intervals).

        From the decision table's group marginal M[z, a, y] = P(z, a, y)
        (:func:`fairdecide.decision_table` ``(result.policy, world, problem)``):
        P(a | z) = sum_y M[z, a, y] / P(z), P(a | y, z) = M[z, a, y] / P(z, y) and
        P(y | a, z) = M[z, a, y] / P(z, a). ``lower`` and ``upper`` equal ``rate``;
        a conditioning mass below 1e-12 counts as zero (the cell is missing).

        Parameters
        ----------
        result : OptimizeResult
            Anything with a ``policy``.
        world : World
        problem : DecisionProblem
        kind : str, default="action"

        Returns
        -------
        GroupRatesDisplay
        """
        kind = check_choice(kind, "kind", _rates.KINDS)
        policy = getattr(result, "policy", None)
        if policy is None:
            raise FairdecideError(
                "result must be an OptimizeResult (with a policy), got "
                f"{type(result).__name__}")
        table = decision_table(problem, world, policy)
        M = table.group_marginal()
        rate, den = _rates.conditional_rates(M, kind, tol=EXACT_MASS_TOL)
        group_labels = getattr(world, "group_labels", None)
        if group_labels is None and table.units is not None:
            group_labels = table.units.group_labels
        if group_labels is None:
            group_labels = tuple(range(M.shape[0]))
        group_labels = check_labels(group_labels, "world.group_labels", M.shape[0])
        frame = _rates.rates_frame(kind, rate, rate, rate, None, den,
                                   ~(den > EXACT_MASS_TOL), group_labels,
                                   problem.action_labels, problem.outcome_labels,
                                   stacklevel=3)
        return cls(frame, kind=kind, level=None)

    def plot(self, ax: Any = None, *, style: str = "bar", **kwargs: Any) -> GroupRatesDisplay:
        """Draw the rates: one colour per group, grouped by action (and outcome).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; default a new figure.
        style : {"bar", "point"}, default="bar"
            Bars with error bars, or points with error bars.
        **kwargs
            Passed to ``Axes.bar`` or ``Axes.errorbar`` for every group.

        Returns
        -------
        self
        """
        style = check_choice(style, "style", ["bar", "point"])
        self.ax_, self.figure_ = axes(ax)
        frame = self.rates_
        keys = ["action"] if self.kind == "action" else ["action", "outcome"]
        cells = Labels.trusted(dict.fromkeys(zip(*(frame[k] for k in keys), strict=True)))
        groups = list(dict.fromkeys(frame["group"]))
        width = 0.8 / len(groups)
        self.containers_, self.missing_texts_ = {}, []
        for k, group in enumerate(groups):
            sub = frame[frame["group"] == group]
            x = cells.lookup(as_object_vector(zip(*(sub[k2] for k2 in keys), strict=True))
                             ).astype(float) + (k - (len(groups) - 1) / 2) * width
            rate = sub["rate"].to_numpy(dtype=float)
            shown = np.isfinite(rate)
            colour = f"C{k}"
            for xi in x[~shown]:
                self.missing_texts_.append(self.ax_.text(
                    xi, 0.01, "n/a", color=colour, ha="center", va="bottom",
                    rotation=90, fontsize="small"))
            err = self._yerr(sub[shown])
            if style == "bar":
                opts = {"width": width, "color": colour, "label": str(group),
                        "yerr": err, "capsize": 3, **kwargs}
                self.containers_[group] = self.ax_.bar(x[shown], rate[shown], **opts)
            else:
                opts = {"fmt": "o", "color": colour, "label": str(group), "yerr": err,
                        "capsize": 3, **kwargs}
                self.containers_[group] = self.ax_.errorbar(x[shown], rate[shown], **opts)
        self.ax_.set_xticks(range(len(cells)))
        self.ax_.set_xticklabels([_tick(self.kind, c) for c in cells])
        self.ax_.set_xlabel({"action": "action", "action_given_outcome": "action | outcome",
                             "outcome_given_action": "outcome | action"}[self.kind])
        self.ax_.set_ylabel(_rates.YLABELS[self.kind])
        self.ax_.set_ylim(0.0, 1.05)
        self.ax_.legend(title="group")
        return self

    @staticmethod
    def _yerr(sub: pd.DataFrame) -> np.ndarray | None:
        """Error bar lengths [rate - lower, upper - rate], or None without intervals."""
        lo, hi, r = (sub[c].to_numpy(dtype=float) for c in ("lower", "upper", "rate"))
        if not np.any(np.isfinite(lo) & np.isfinite(hi) & (hi > lo)):
            return None
        # A cell whose every resample was empty was warned about; it gets no bar.
        return np.nan_to_num(np.vstack([r - lo, hi - r]), nan=0.0).clip(min=0.0)


def _tick(kind: str, cell: tuple) -> str:
    if kind == "action":
        return str(cell[0])
    if kind == "action_given_outcome":
        return f"{cell[0]} | {cell[1]}"
    return f"{cell[1]} | {cell[0]}"
