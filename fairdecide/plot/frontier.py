"""The trade-off between utility and fairness: Pareto frontiers on one axis."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from fairdecide._common.tables import result_table
from fairdecide.exceptions import FairdecideError
from fairdecide.plot._common import as_finite, axes
from fairdecide.plot._frontier_inputs import (
    ERROR_COLUMNS,
    check_errors,
    check_frontier,
    check_results,
    pick_criterion,
)

__all__ = ["ParetoFrontierDisplay"]


class ParetoFrontierDisplay:
    """Expected utility (y axis) against a criterion's deviation (x axis).

    Each frontier is the curve of best utilities at a range of fairness tolerances,

        U*(epsilon) = max_pi E[U(pi)]  subject to  F(pi) <= epsilon,

    drawn as the points (F(pi_epsilon), E[U(pi_epsilon)]) of the optimised policies,
    sorted by deviation. Several frontiers (the plug-in, Bayesian and maximin policies,
    say) share one axis; other methods' policies can be added as single points
    (:meth:`add_points`).

    Build it with :meth:`from_frontier`, :meth:`from_result` or :meth:`from_estimator`,
    then call :meth:`plot`.

    Parameters
    ----------
    frontiers : mapping of str to DataFrame
        Each frontier by name, with columns ``deviation`` and ``utility`` (others, such
        as ``epsilon`` and ``status``, are kept). Optional columns ``deviation_se`` and
        ``utility_se`` (non-negative) are drawn as error bars of those half-widths, such
        as one standard error over repeated runs.
    criterion : str, optional
        The criterion's label, for the x axis ("<criterion> deviation").

    Attributes
    ----------
    frontiers_ : dict of str to DataFrame
        The frontiers, rows sorted by deviation.
    points_ : dict of str to DataFrame
        Points added by :meth:`add_points` (columns ``deviation``, ``utility``).
    criterion : str or None
    ax_ : matplotlib Axes
        Set by :meth:`plot`, as are the following.
    figure_ : matplotlib Figure
    lines_ : dict of str to Line2D
        One line per frontier.
    markers_ : dict of str to Line2D
        One marker-only line per set of added points.
    errorbars_ : dict of str to ErrorbarContainer
        The error bars of each frontier or set of points that has them.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from fairdecide import Independence, pareto_frontier
    >>> from fairdecide.datasets import make_bail_problem
    >>> from fairdecide.plot import ParetoFrontierDisplay
    >>> problem, world = make_bail_problem()
    >>> front = pareto_frontier(problem, world, Independence(), [0.0, 0.1, 0.2])
    >>> display = ParetoFrontierDisplay.from_frontier(front, name="plug-in",
    ...                                               criterion="independence")
    >>> display = display.add_points([0.0], [0.0], label="detain everyone").plot()
    >>> display.ax_.get_xlabel(), display.ax_.get_ylabel()
    ('independence deviation', 'expected utility')
    >>> [t.get_text() for t in display.ax_.get_legend().get_texts()]
    ['plug-in', 'detain everyone']
    >>> matplotlib.pyplot.close(display.figure_)
    """

    def __init__(self, frontiers: Mapping[str, pd.DataFrame], *,
                 criterion: str | None = None) -> None:
        if not isinstance(frontiers, Mapping):
            raise FairdecideError(
                "frontiers must be a dict {name: DataFrame}, got "
                f"{type(frontiers).__name__}")
        if len(frontiers) == 0:
            raise FairdecideError(
                "frontiers is empty; pass at least one frontier DataFrame, for example "
                "{'plug-in': pareto_frontier(problem, world, criterion, epsilons)}")
        if criterion is not None and not isinstance(criterion, str):
            raise FairdecideError(f"criterion must be a label (str) or None, got {criterion!r}")
        self.frontiers_ = {str(k): check_frontier(v, f"frontiers[{k!r}]")
                           for k, v in frontiers.items()}
        self.criterion = criterion
        self.points_: dict[str, pd.DataFrame] = {}
        self._point_markers: dict[str, str] = {}

    @classmethod
    def from_frontier(cls, frontiers: pd.DataFrame | Mapping[str, pd.DataFrame], *,
                      name: str | None = None,
                      criterion: str | None = None) -> ParetoFrontierDisplay:
        """Display frontiers computed by :func:`fairdecide.pareto_frontier`.

        Parameters
        ----------
        frontiers : DataFrame or dict of str to DataFrame
            One frontier (columns ``epsilon``, ``utility``, ``deviation``, ``status``
            as :func:`~fairdecide.pareto_frontier` returns them; ``utility`` and
            ``deviation`` are required) or several by name.
        name : str, optional
            Legend name of a single frontier (default "frontier"). With a dict, the keys
            are the names and ``name`` must be None.
        criterion : str, optional
            The criterion's label for the x axis; default the frontier's own
            (``frame.attrs["criterion"]``, which :func:`~fairdecide.pareto_frontier`
            records).

        Returns
        -------
        ParetoFrontierDisplay
        """
        if isinstance(frontiers, pd.DataFrame):
            frontiers = {"frontier" if name is None else str(name): frontiers}
        elif isinstance(frontiers, Mapping):
            if name is not None:
                raise FairdecideError(
                    "name labels a single frontier; with a dict of frontiers the keys are "
                    "the names, so leave name as None")
        else:
            raise FairdecideError(
                "frontiers must be a DataFrame from pareto_frontier or a dict "
                f"{{name: DataFrame}}, got {type(frontiers).__name__}")
        if criterion is None:
            named = {f.attrs.get("criterion") for f in frontiers.values()
                     if isinstance(f, pd.DataFrame)}
            criterion = named.pop() if len(named) == 1 else None
        return cls(frontiers, criterion=criterion)

    @classmethod
    def from_result(cls, results: Sequence[Any] | Mapping[str, Sequence[Any]], *,
                    criterion: str | None = None,
                    name: str | None = None) -> ParetoFrontierDisplay:
        """Display the utilities and deviations of optimisation results.

        Parameters
        ----------
        results : list of OptimizeResult, or dict of str to such lists
            Results of :func:`fairdecide.optimize_policy` (anything with ``utility`` and
            a ``deviations`` dict), one frontier per list.
        criterion : str, optional
            Which deviation to plot, by its label (a key of ``result.deviations``).
            Default: the only criterion the results share.
        name : str, optional
            Legend name of a single list of results (default "frontier").

        Returns
        -------
        ParetoFrontierDisplay
        """
        if isinstance(results, Mapping):
            if name is not None:
                raise FairdecideError(
                    "name labels a single list of results; with a dict the keys are the "
                    "names, so leave name as None")
            if len(results) == 0:
                raise FairdecideError(
                    "results is an empty dict; pass at least one list of OptimizeResult")
            groups = {str(k): (v, f"results[{k!r}]") for k, v in results.items()}
        else:
            groups = {"frontier" if name is None else str(name): (results, "results")}
        checked = {k: check_results(v, where) for k, (v, where) in groups.items()}
        every = [r for rs in checked.values() for r in rs]
        label = pick_criterion(criterion, [r.deviations for r in every], "the results")
        frames = {k: pd.DataFrame({"deviation": [float(r.deviations[label]) for r in rs],
                                   "utility": [float(r.utility) for r in rs],
                                   "status": [getattr(r, "status", None) for r in rs]})
                  for k, rs in checked.items()}
        return cls(frames, criterion=label)

    @classmethod
    def from_estimator(cls, estimator: Any, X: Any, y: Any, *, epsilons: Sequence[float],
                       sensitive_features: Any = None, param: str = "epsilon",
                       criterion: str | None = None,
                       name: str | None = None) -> ParetoFrontierDisplay:
        """Fit a copy of ``estimator`` at each tolerance and display the in-sample frontier.

        For each epsilon, ``sklearn.base.clone(estimator).set_params(**{param: epsilon})``
        is fitted on ``(X, y, sensitive_features=sensitive_features)`` (without the
        keyword when it is None); its ``result_`` (an
        :class:`~fairdecide.OptimizeResult`) gives the point
        ``(result_.deviations[criterion], result_.utility)``. The given estimator itself
        is not changed.

        Parameters
        ----------
        estimator : estimator
            A fairdecide estimator such as ``FairPolicyClassifier``, fitted or not.
        X, y : array-like
            Training data.
        epsilons : sequence of float
            The tolerances, one fit each.
        sensitive_features : array-like, optional
            Passed to ``fit``.
        param : str, default="epsilon"
            The parameter that holds the tolerance.
        criterion : str, optional
            Which deviation to plot; default the only one in ``result_.deviations``.
        name : str, optional
            Legend name; default the estimator's class name.

        Returns
        -------
        ParetoFrontierDisplay
            ``frontiers_[name]`` has columns ``epsilon``, ``deviation``, ``utility`` and
            ``status``.
        """
        from sklearn.base import clone

        eps = as_finite(epsilons, "epsilons")
        if eps.ndim != 1 or len(eps) == 0:
            raise FairdecideError(
                f"epsilons must be a non-empty list of tolerances, got {epsilons!r}")
        get_params = getattr(estimator, "get_params", None)
        if not callable(get_params):
            raise FairdecideError(
                "estimator must be a scikit-learn estimator (with get_params), got "
                f"{type(estimator).__name__}")
        known = get_params(deep=False)
        if not isinstance(param, str) or param not in known:
            raise FairdecideError(
                f"param {param!r} is not a parameter of {type(estimator).__name__}; its "
                f"parameters are {sorted(known)}")
        results = []
        for value in eps:
            fitted = clone(estimator).set_params(**{param: float(value)})
            try:
                if sensitive_features is None:
                    fitted.fit(X, y)
                else:
                    fitted.fit(X, y, sensitive_features=sensitive_features)
            except FairdecideError as exc:
                exc.add_note(f"(while fitting {type(estimator).__name__} with "
                             f"{param}={float(value)!r} for the frontier)")
                raise
            result = getattr(fitted, "result_", None)
            if result is None:
                raise FairdecideError(
                    f"{type(estimator).__name__} has no result_ after fit; from_estimator "
                    "needs an estimator that stores its OptimizeResult in result_ (such as "
                    "FairPolicyClassifier)")
            results.append(result)
        checked = check_results(results, "estimator.result_")
        label = pick_criterion(criterion, [r.deviations for r in checked],
                                "the fitted estimators' result_")
        frame = pd.DataFrame({
            "epsilon": eps,
            "deviation": [float(r.deviations[label]) for r in checked],
            "utility": [float(r.utility) for r in checked],
            "status": [getattr(r, "status", None) for r in checked]})
        key = type(estimator).__name__ if name is None else str(name)
        return cls({key: frame}, criterion=label)

    def add_points(self, utilities: Any, deviations: Any, *, label: str,
                   marker: str = "x", utility_se: Any = None,
                   deviation_se: Any = None) -> ParetoFrontierDisplay:
        """Add single points, such as other methods' policies, drawn as markers.

        If the display has been plotted, the points are drawn onto ``ax_`` at once (and
        the legend is redrawn); otherwise :meth:`plot` draws them.

        Parameters
        ----------
        utilities, deviations : float or array-like of shape (n_points,)
            Expected utility and the criterion's deviation of each point.
        label : str
            Legend name, distinct from the frontiers' and other points' names.
        marker : str, default="x"
            A matplotlib marker.
        utility_se, deviation_se : array-like of shape (n_points,), optional
            Half-widths of error bars (non-negative), drawn in the markers' colour.

        Returns
        -------
        self
        """
        if not isinstance(label, str) or not label:
            raise FairdecideError(f"label must be a non-empty str, got {label!r}")
        if label in self.frontiers_ or label in self.points_:
            raise FairdecideError(
                f"label {label!r} is already used by a frontier or other points; pick "
                "another")
        u = np.atleast_1d(as_finite(utilities, "utilities"))
        d = np.atleast_1d(as_finite(deviations, "deviations"))
        if u.ndim != 1 or d.ndim != 1 or len(u) != len(d) or len(u) == 0:
            raise FairdecideError(
                "utilities and deviations must be equally long, non-empty lists of numbers; "
                f"got shapes {u.shape} and {d.shape}")
        if not isinstance(marker, str):
            raise FairdecideError(f"marker must be a matplotlib marker string, got {marker!r}")
        frame = pd.DataFrame({"deviation": d, "utility": u})
        for col, se in zip(ERROR_COLUMNS, (deviation_se, utility_se), strict=True):
            if se is not None:
                se = np.atleast_1d(as_finite(se, col))
                if se.shape not in ((1,), d.shape):
                    raise FairdecideError(
                        f"{col} must be one number or one per point ({len(d)}), got shape "
                        f"{se.shape}")
                frame[col] = np.broadcast_to(se, d.shape)
        self.points_[label] = result_table(check_errors(frame, "the points"))
        self._point_markers[label] = marker
        if hasattr(self, "ax_"):
            self._draw_points(label)
            self.ax_.legend()
        return self

    def plot(self, ax: Any = None, **kwargs: Any) -> ParetoFrontierDisplay:
        """Draw the frontiers (lines with markers, sorted by deviation) and added points.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; default a new figure.
        **kwargs
            Passed to ``Axes.plot`` for every frontier line (``linewidth``, ...). Colours
            follow the Axes' colour cycle, so displays drawn onto one Axes differ.

        Returns
        -------
        self
        """
        self.ax_, self.figure_ = axes(ax)
        self.lines_, self.markers_, self.errorbars_ = {}, {}, {}
        for label, frame in self.frontiers_.items():
            style = {"marker": "o", "label": label, **kwargs}
            (self.lines_[label],) = self.ax_.plot(frame["deviation"].to_numpy(),
                                                  frame["utility"].to_numpy(), **style)
            self._draw_errors(label, frame, self.lines_[label].get_color())
        for label in self.points_:
            self._draw_points(label)
        xlabel = "deviation" if self.criterion is None else f"{self.criterion} deviation"
        self.ax_.set_xlabel(xlabel)
        self.ax_.set_ylabel("expected utility")
        self.ax_.legend()
        return self

    def _draw_points(self, label: str) -> None:
        frame = self.points_[label]
        (self.markers_[label],) = self.ax_.plot(
            frame["deviation"].to_numpy(), frame["utility"].to_numpy(), linestyle="none",
            marker=self._point_markers[label], markersize=9, label=label)
        self._draw_errors(label, frame, self.markers_[label].get_color())

    def _draw_errors(self, label: str, frame: pd.DataFrame, colour: Any) -> None:
        """Error bars of the ``deviation_se`` / ``utility_se`` columns, if any."""
        xerr, yerr = (frame[c].to_numpy() if c in frame.columns else None
                      for c in ERROR_COLUMNS)
        if xerr is not None or yerr is not None:
            self.errorbars_[label] = self.ax_.errorbar(
                frame["deviation"].to_numpy(), frame["utility"].to_numpy(), xerr=xerr,
                yerr=yerr, fmt="none", ecolor=colour, elinewidth=1, capsize=2)

