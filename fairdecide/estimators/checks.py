"""The estimators the test suite runs scikit-learn's common checks on, and the checks each
is expected to fail, with the reason."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from sklearn.base import BaseEstimator

__all__ = ["EXPECTED_FAILED_CHECKS", "GUARANTEE_FAILED_CHECKS", "all_estimators"]

_NEEDS_ACTIONS = (
    "fit(X, y) without the logged actions: FairDecisionPolicy.fit requires "
    "actions= (a policy cannot be learned from outcomes without knowing which decision "
    "produced them); tests/test_estimators.py runs every common check through the same "
    "fit with actions supplied")
_FIT_CHECKS = (
    "check_dict_unchanged", "check_dont_overwrite_parameters",
    "check_dtype_object", "check_estimators_dtypes",
    "check_estimators_fit_returns_self", "check_estimators_nan_inf",
    "check_estimators_overwrite_params", "check_estimators_pickle",
    "check_f_contiguous_array_estimator", "check_fit2d_1feature", "check_fit2d_1sample",
    "check_fit2d_predict1d", "check_fit_check_is_fitted", "check_fit_idempotent",
    "check_fit_score_takes_y", "check_methods_sample_order_invariance",
    "check_methods_subset_invariance", "check_n_features_in",
    "check_n_features_in_after_fitting", "check_pipeline_consistency",
    "check_positive_only_tag_during_fit", "check_readonly_memmap_input",
    "check_estimator_sparse_array", "check_estimator_sparse_matrix",
    "check_estimator_sparse_tag",
)

EXPECTED_FAILED_CHECKS: dict[str, dict[str, str]] = {
    "FairPolicyClassifier": dict.fromkeys(
        ("check_sample_weight_equivalence_on_dense_data",
         "check_sample_weight_equivalence_on_sparse_data"),
        "the score family cross-fits its scores: a row repeated k times falls in other "
        "folds than the row with weight k, so the scores and bins differ (with the same "
        "scores the weighted counts equal the repeated rows': "
        "tests/test_score_family.py::test_sample_weight_counts_like_repeated_rows)"),
    "FairDecisionPolicy": dict.fromkeys(_FIT_CHECKS, _NEEDS_ACTIONS),
}


_NO_WEIGHTS = (
    "sample_weight is refused with guarantee=: the safety test's bound is for rows drawn "
    "at random from the population, which weighted rows are not")

#: The checks FairPolicyClassifier(guarantee=...) is expected to fail (run on their own
#: in tests/test_estimators.py): those that pass sample_weight.
GUARANTEE_FAILED_CHECKS: dict[str, str] = dict.fromkeys((
    "check_sample_weights_pandas_series", "check_sample_weights_not_an_array",
    "check_sample_weights_list", "check_sample_weights_shape",
    "check_sample_weights_not_overwritten", "check_sample_weight_equivalence_on_dense_data",
    "check_sample_weight_equivalence_on_sparse_data",
    "check_classifiers_one_label_sample_weights"), _NO_WEIGHTS)


def all_estimators() -> list[type]:
    """Every scikit-learn estimator class defined in :mod:`fairdecide.estimators` (found
    by walking its modules, so a new one is checked without anyone listing it)."""
    # the package imports this module (its __init__ re-exports all_estimators): walked
    # at call time, when the package is whole
    import fairdecide.estimators as package

    found: dict[str, type] = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for name, obj in inspect.getmembers(module, inspect.isclass):
            if (issubclass(obj, BaseEstimator) and obj.__module__ == module.__name__
                    and not name.startswith("_")):
                found[name] = obj
    return [found[k] for k in sorted(found)]
