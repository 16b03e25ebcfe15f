"""FairPolicyClassifier: a scikit-learn classifier whose decisions are the verified
optimum of expected utility under fairness criteria."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from fairdecide._common.defaults import N_SCENARIOS
from fairdecide._common.validation import as_bool, as_float_array
from fairdecide.estimators._fitting import fit_policy
from fairdecide.estimators._guarantee import fit_guaranteed
from fairdecide.estimators._inputs import fit_groups, predict_groups, split_features
from fairdecide.estimators._labels import training_deviations
from fairdecide.exceptions import FairdecideError
from fairdecide.labels import Labels
from fairdecide.models.individuals import check_sample_weight
from fairdecide.policies.base import draw_rows
from fairdecide.problem import DecisionProblem

__all__ = ["FairPolicyClassifier"]


class FairPolicyClassifier(ClassifierMixin, BaseEstimator):
    """A fair classifier: the policy pi(a | x, z) of highest expected utility whose
    fairness deviations meet the chosen trade-off, verified on the training individuals.

    The actions are the classes unless ``actions`` names others (a reject or "refer to a
    person" option, several levels of an offer); the utility U(a, y) defaults to accuracy
    (the identity).
    ``fit`` solves, over the training rows (i) and their labels y_i::

        max_pi  sum_i w_i sum_a pi(a | x_i, z_i) sum_y P(y | i) U(a, y)
        subject to  D_c(pi) <= epsilon  for every criterion c

    P(y | i) the label frequencies of the bin or cell the row falls in (``"score"``,
    ``"tabular"``) or, for ``"softmax"``, ``outcome_model``'s P(y | x_i) under criteria
    that do not read the outcome and the point mass on the row's label under those that
    do, so that every criterion given y is computed on the labels; ``deviation_`` is
    each deviation of ``predict_proba`` on the training rows, at most epsilon. The
    program (or the ``lam`` / ``utility_slack`` trade-offs) is solved by
    :func:`fairdecide.optimize_policy`,
    whose result is kept in ``result_``. ``predict_proba`` returns the policy's action
    probabilities (a randomised classifier, as the optimum under fairness constraints
    generally is); ``predict`` its most probable action, or a sample with
    ``randomized=True``.

    Parameters
    ----------
    policy : {"auto", "score", "softmax", "tabular"}, default="auto"
        The policy family. "auto": "score" for a policy that reads the group, "softmax"
        with ``group_blind=True`` (a rule over the bins of a score without the group cannot
        tell the groups apart: on Adult under demographic parity <= 0.01 its test accuracy
        was 0.762 against the group-blind softmax family's 0.825,
        benchmarks/results/estimators.txt). "score": one free row per bin of a classifier's
        score (``outcome_model``'s P(y = 1 | x), cross-fitted on the training rows; with
        more classes, the most probable class and its probability) and group: the relaxed
        post-processing of a fitted scorer (ThresholdOptimizer's and error-parity's
        policies), solved exactly as one linear program. It is "auto"'s choice for a policy
        that reads the group by measurement (benchmarks/results/frontier.txt, Adult,
        COMPAS, German, DP and EO, five seeds): every fit optimal, 1.41 s on Adult against
        the softmax family's 3.48 s on average, and a frontier at least the softmax
        family's on Adult and COMPAS. A bin a group never reached in training takes that group's
        nearest bin's rule. "softmax": pi(a | x, z) = softmax(W phi(x, z)) on standardised
        features, locally optimal (the gradient route); with ``group_blind=True`` it
        decides from the raw features alone.
        "tabular": one free row per cell of the discretised features (each column cut
        into ``n_bins`` quantile bins, or kept if it has that few values) and group; one
        linear program, globally optimal; a cell not seen with a group in training gets
        that group's average rule P(a | z) at predict time, with a warning.
    criteria : str, Criterion or list, default="independence"
        "independence" (demographic parity), "separation" (equalised odds),
        "sufficiency", "demographic_parity_difference" and "equalized_odds_difference"
        (the largest gap between two groups' rates, Fairlearn's metrics of those names),
        a :class:`~fairdecide.Criterion` (e.g. ``Independence(measure="max")``), a list
        of them, or None.
    epsilon : float, "auto" or None, default="auto"
        Each deviation <= epsilon; "auto" is 0.05 unless ``lam`` or ``utility_slack``
        is set (then there is no tolerance).
    lam, utility_slack : float, optional
        The other trade-offs; set at most one of the three. ``lam``: maximise
        (1 - lam) U - lam F. ``utility_slack``: minimise F subject to
        U >= U* - utility_slack.
    utility : array-like of shape (n_actions, n_classes), optional
        U[a, y], actions in the order of ``actions_`` and outcomes in that of
        ``classes_``. Default: the identity (accuracy), when the actions are the classes.
    actions : sequence, optional
        The decisions, when they are not the classes (at least two distinct labels, e.g.
        ``["deny", "refer", "approve"]`` for a binary outcome); ``utility`` is then
        required. ``predict_proba``'s columns and ``predict``'s values are these actions,
        and ``score`` is the expected utility. With two classes and the score family,
        ``monotone`` orders the actions by how much their utility gains from the
        positive outcome, U(a, 1) - U(a, 0) (distinct for every action; otherwise no
        order is imposed).
    uncertainty : {"plug-in", "mean", "worst", "certified", "refit-band"}, default="plug-in"
        How the unknown outcome model is treated, in :class:`~fairdecide.Belief`'s words:
        the maximum-likelihood model plugged in as if known; the Bayesian decision, the
        mean over ``n_scenarios`` scenarios (bootstrap refits of ``outcome_model`` for
        "softmax", exact Dirichlet posterior draws for "tabular" and "score"), fairness
        included; or the worst case over them (maximin; the labelled rows are one more
        scenario, so epsilon holds on them too). None of these three gives
        ``result_.guarantee``. Two treatments certify, each in its own family:

        - "certified" ("tabular" only): the worst case over a
          :class:`~fairdecide.ConfidenceSet` of the cells at delta 0.1 (pooled over the
          groups of a cell when ``group_blind`` and no criterion reads the outcome),
          every tolerance held on its bound over the whole set inside the program;
          ``result_.guarantee`` states what holds with probability at least 0.9.
        - "refit-band" ("softmax" only): the maximin over the outcome model's refits,
          then certified over their band (``ConfidenceSet.from_refits``, delta 0.1,
          ``n_scenarios`` >= 10): ``result_.guarantee`` holds with probability about
          0.9 (a bootstrap approximation) for the training people; a bound over the
          band above epsilon refuses the fit (:class:`~fairdecide.NotCertifiedError`).
          Named "certified" until this release: that name still works for "softmax"
          one release, with a DeprecationWarning.

        A family without the treatment asked for is an error naming those it takes
        (docs/estimators.md, "The unknown outcome model").
    n_scenarios : int, default=32
        The package's one default (:data:`fairdecide._common.defaults.N_SCENARIOS`).
    outcome_model : scikit-learn classifier, optional
        P(y | x) (cloned), fitted on the features without the group: for "score" the
        scorer whose probabilities are binned (default logistic regression on
        standardised features); for "softmax" on the standardised features (default
        logistic regression; with a criterion given y the plug-in world is the labels
        themselves, and the model's bootstrap refits are the scenarios of
        ``uncertainty="mean"`` or ``"worst"``).
    n_folds : int, optional
        "score": the scorer's folds (3 unless set; a row's score, in training and after,
        is the mean of the fold fits' probabilities); "softmax": cross-fit the outcome
        model's probabilities of the training rows.
    group_blind : bool, default=False
        A policy that does not read the group (then no group is needed to predict).
    group_column : str, optional
        The name of the column of a DataFrame X holding the group; it is taken out of
        the features. Otherwise pass ``sensitive_features=`` to ``fit`` (and to
        ``predict`` when the policy reads the group), routed through Pipeline and
        GridSearchCV by ``set_fit_request(sensitive_features=True)`` with metadata
        routing enabled.
    n_bins : int or "auto", default="auto"
        Quantile bins per feature ("tabular", "auto" = 5) or of the score ("score",
        "auto" = one bin per 150 training rows, at least 20 and at most 200).
    monotone : bool, default=True
        "score" with two classes and an ``epsilon`` tolerance (or no criteria): each
        group's probability of the action that gains from the positive outcome does not
        fall as the score rises (:class:`~fairdecide.MeritOrder` over the bins, held
        exactly and reported as "score order" in ``result_.deviations``). The optimum is
        then a threshold on the score per group, randomised in at most a bin or two, as
        ThresholdOptimizer's and error-parity's are; without it the program can fit the
        noise of the bins' outcome rates (benchmarks/bench_frontier.py). With two actions,
        criteria of the group marginal only (independence, separation, sufficiency, the
        pairwise differences), ``uncertainty="plug-in"`` and a policy that reads the group,
        the optimum returned is then the flattest monotone rule with the optimal group
        rates (the same utility and deviations; ``result_.stats["flattened"]``): a
        threshold mixed with a constant rule, whose rates are estimated from the most rows,
        where the simplex method's vertex would jump at bins few people of a small group
        sit in. Ignored by the other families and by the ``lam`` and ``utility_slack``
        trade-offs.
    l2 : float, default=1e-5
        Ridge penalty of the softmax coefficients (keeps the optimum finite). On Adult
        (31,655 training rows, DP <= 0.01) 1e-5 reached test accuracy 0.8285 in 19 s,
        1e-4 0.8263 in 10 s, 1e-6 0.8286 without converging in 500 iterations.
    n_restarts : int, default=1
    max_iter : int, default=500
        Most solver iterations per start (softmax: on Adult's 31,655 rows every fit of
        benchmarks/bench_frontier.py converged, in 110-210 on seed 0) or linearisation
        steps (tabular, criteria not linear in the policy).
    guarantee : float, optional
        delta in (0, 1): return a policy whose deviation in the population the rows were
        drawn from is at most ``epsilon`` with probability at least 1 - delta, or raise
        :class:`~fairdecide.NotCertifiedError` ("no policy certified"). The rows are split
        at random within each group; the policy is fitted on the candidate part at a
        tolerance tightened by the bound's predicted width, then every criterion's
        deviation is bounded on the safety part (:func:`fairdecide.evaluation.certify_held_out`:
        Hoeffding's relative-entropy intervals for each P(a | c, z) and P(z | c), union
        bound) and the policy is kept only if every bound is at most epsilon. Needs one
        numeric epsilon (not lam or utility_slack), no sample_weight, and criteria
        Independence or Separation (measure "tv" or "max"). The policy is fitted on the
        candidate rows only (refitting on all rows would void the certificate).
    safety_fraction : float, default=0.4
        With ``guarantee``, the share of each group's rows held out for the safety test,
        in (0, 1).
    random_state : int, RandomState or None
    sensitive_feature : str, optional
        Deprecated: the old name of ``group_column``, kept one release (``fit`` warns
        with a DeprecationWarning naming ``group_column``).

    Attributes
    ----------
    classes_ : ndarray
        The outcome labels seen in training.
    actions_ : ndarray
        The decisions, in the order of ``predict_proba``'s columns: ``actions`` or, by
        default, ``classes_``.
    n_features_in_ : int
        Features the policy reads (the sensitive column excluded).
    feature_names_in_ : ndarray of str
        Their names, when X was a DataFrame.
    group_labels_ : tuple
        The groups seen in training (("all",) when none were given: the criteria are then
        vacuous, with a warning).
    problem_ : DecisionProblem
    result_ : OptimizeResult
        The verified optimum: ``result_.utility`` and ``result_.deviations`` recomputed
        from the decision table of the training world.
    deviation_ : dict
        Each criterion's deviation (by its label, as in ``result_.deviations``; not the
        score family's "score order") of ``predict_proba`` on the training rows, measured
        on their labels and weighted by ``sample_weight``: at most ``epsilon`` (up to the
        verification tolerance, 1e-6) whenever ``fit`` returns with an ``epsilon``
        trade-off and ``uncertainty`` "plug-in" or "worst" (docs/estimators.md, "What
        epsilon bounds").
    n_iter_ : int
        Solver iterations (gradient route: over all starts; LP: simplex or interior-point
        iterations, at least 1).
    certificate_ : HeldOutGuarantee or None
        With ``guarantee``: the safety test passed, each criterion's deviation on the
        safety rows (``deviations``) and its upper confidence bound (``bounds``, all
        <= epsilon). None without ``guarantee``.

    Examples
    --------
    >>> import numpy as np
    >>> from fairdecide import FairPolicyClassifier
    >>> rng = np.random.RandomState(0)
    >>> z = rng.randint(2, size=300)
    >>> X = np.c_[rng.normal(size=300) + z, rng.normal(size=300)]
    >>> y = (X[:, 0] + rng.normal(size=300) > 0.5).astype(int)
    >>> clf = FairPolicyClassifier(epsilon=0.02, random_state=0)
    >>> clf = clf.fit(X, y, sensitive_features=z)
    >>> bool(clf.result_.deviations["independence"] <= 0.02 + 1e-6)
    True
    >>> clf.predict_proba(X[:2], sensitive_features=z[:2]).shape
    (2, 2)
    """

    #: a prediction problem: "auto" may choose the score family (estimators/_inputs.py)
    _prediction = True

    def __init__(self, *, policy: str = "auto", criteria: Any = "independence",
                 epsilon: float | str | None = "auto", lam: float | None = None,
                 utility_slack: float | None = None, utility: Any = None,
                 actions: Any = None, uncertainty: str = "plug-in", n_scenarios: int = N_SCENARIOS,
                 outcome_model: Any = None,
                 n_folds: int | None = None, group_blind: bool = False,
                 group_column: str | None = None, n_bins: int | str = "auto",
                 monotone: bool = True, l2: float = 1e-5, n_restarts: int = 1,
                 max_iter: int = 500, guarantee: float | None = None,
                 safety_fraction: float = 0.4,
                 random_state: Any = None,
                 sensitive_feature: str | None = None) -> None:
        self.policy = policy
        self.criteria = criteria
        self.epsilon = epsilon
        self.lam = lam
        self.utility_slack = utility_slack
        self.utility = utility
        self.actions = actions
        self.uncertainty = uncertainty
        self.n_scenarios = n_scenarios
        self.outcome_model = outcome_model
        self.n_folds = n_folds
        self.group_blind = group_blind
        self.group_column = group_column
        self.n_bins = n_bins
        self.monotone = monotone
        self.l2 = l2
        self.n_restarts = n_restarts
        self.max_iter = max_iter
        self.guarantee = guarantee
        self.safety_fraction = safety_fraction
        self.random_state = random_state
        self.sensitive_feature = sensitive_feature  # deprecated: group_column

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.input_tags.sparse = True
        return tags

    def fit(self, X: Any, y: Any, *, sensitive_features: Any = None,
            sample_weight: Any = None) -> FairPolicyClassifier:
        """Estimate the outcome model and optimise the policy; returns self.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n, n_features)
            Sparse X (OneHotEncoder's default output) goes to the score family's
            scorer as it is; the softmax and tabular families read it densely (up to
            50 million entries).
        y : array-like of shape (n,)
            Class labels (at least two classes).
        sensitive_features : array-like of shape (n,) or (n, k), optional
            The group of each row (k columns: their combinations are the groups).
        sample_weight : array-like of shape (n,), optional
            Weights of the rows in the population (and in the outcome model's fit).
        """
        X, z_raw, y = split_features(self, X, sensitive_features, reset=True, y=y)
        check_classification_targets(y)
        y_codes, _ = Labels.factorize(y, "y")
        # each class as y holds it (its dtype kept, as scikit-learn's classes_ are)
        self.classes_ = np.asarray(y)[np.unique(y_codes, return_index=True)[1]]
        if len(self.classes_) < 2:
            raise FairdecideError(
                f"y has only one class ({self.classes_[0]!r}); a classifier needs at least "
                "two classes")
        if X.shape[0] < 2:
            raise FairdecideError("fit needs at least 2 samples, got 1 sample")
        z, self.group_labels_ = fit_groups(z_raw, X.shape[0], self.criteria)
        w = None if sample_weight is None else check_sample_weight(sample_weight, X.shape[0])
        self.actions_, u = self._actions_and_utility()
        n_a, k = u.shape
        self.problem_ = DecisionProblem(u, outcome_depends_on_action=False,
                                        action_labels=range(n_a), outcome_labels=range(k))
        if self.guarantee is None:
            self._rule = fit_policy(self, self.problem_, X, z, len(self.group_labels_),
                                    y_codes, None, w)
            self.certificate_ = None
        else:
            self._rule, self.certificate_ = fit_guaranteed(
                self, self.problem_, X, z, len(self.group_labels_), y_codes, w)
        self.result_ = self._rule.result
        self.n_iter_ = self._rule.n_iter
        rows = self._rule.action_proba(X, z if self._rule.reads_group else None, warn=False)
        self.deviation_ = training_deviations(self._rule, self.problem_, rows, y_codes, z,
                                              len(self.group_labels_), w)
        return self

    def _actions_and_utility(self) -> tuple[np.ndarray, np.ndarray]:
        """The actions (labels) and U[a, y], checked against ``classes_``."""
        k = len(self.classes_)
        if self.actions is None:
            actions = self.classes_
        else:
            codes, labels = Labels.factorize(self.actions, "actions")
            if len(labels) < 2 or len(labels) != len(codes):
                raise FairdecideError(
                    f"actions must be at least two distinct labels, got {self.actions!r}")
            if self.utility is None:
                raise FairdecideError(
                    "actions other than the classes need utility=U[a, y] of shape "
                    f"(n_actions, n_classes) = ({len(codes)}, {k}): what each decision is "
                    "worth under each outcome")
            # in the order given (U's rows); numbers stay numbers, as classes_ do
            actions = np.asarray(np.asarray(self.actions, dtype=object).tolist())
        n_a = len(actions)
        u = np.eye(k) if self.utility is None else as_float_array(self.utility, "utility",
                                                                  ndim=2)
        if u.shape != (n_a, k):
            raise FairdecideError(
                f"utility must have shape (n_actions, n_classes) = ({n_a}, {k}): actions "
                f"{list(actions)}, classes_ {list(self.classes_)}; got {u.shape}")
        return actions, u

    def predict_proba(self, X: Any, *, sensitive_features: Any = None) -> np.ndarray:
        """pi(a | x, z) for each row, shape (n, n_actions), columns in the order of
        ``actions_`` (the classes by default), rows on the simplex.

        ``sensitive_features`` is needed when the policy reads the group (not
        ``group_blind``) and more than one group was seen in training; a group not seen in
        training is an error."""
        check_is_fitted(self, "result_")
        X, z_raw, _ = split_features(self, X, sensitive_features, reset=False)
        z = predict_groups(z_raw, X.shape[0], self.group_labels_, self._rule.reads_group)
        return self._rule.action_proba(X, z)

    def predict(self, X: Any, *, sensitive_features: Any = None,
                randomized: bool = False) -> np.ndarray:
        """The most probable action (class, by default) of each row or, with
        ``randomized=True``, one drawn from the policy (seeded by ``random_state``: the
        same draws on every call)."""
        p = self.predict_proba(X, sensitive_features=sensitive_features)
        if not as_bool(randomized, "randomized"):
            return self.actions_[np.argmax(p, axis=1)]
        idx = draw_rows(p, self.random_state)
        return self.actions_[idx]

    def score(self, X: Any, y: Any, sample_weight: Any = None, *,
              sensitive_features: Any = None) -> float:
        """Expected utility per row of the randomised policy on (X, y): the mean over rows
        of sum_a pi(a | x_i, z_i) U(a, y_i) (the expected accuracy by default)."""
        p = self.predict_proba(X, sensitive_features=sensitive_features)
        codes = Labels(self.classes_.tolist(), "classes_").encode(
            np.asarray(y, dtype=object), "y", what="the label",
            among="the classes seen in fit")
        if len(codes) != len(p):
            raise FairdecideError(f"y has {len(codes)} labels but X has {len(p)} rows")
        gain = np.einsum("na,na->n", p, self.problem_.utility[:, codes].T)
        w = None if sample_weight is None else check_sample_weight(sample_weight, len(p))
        return float(np.average(gain, weights=w))
