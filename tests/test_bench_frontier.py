"""bench_frontier.py's arithmetic on hand-computed cases: the hypervolume of a staircase,
dominance within one standard error, and the verdicts of its report."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from _frontier_report import dominates, hypervolume, report


def test_hypervolume_of_a_staircase():
    """Points (violation, accuracy) (0.1, 0.7), (0.2, 0.6), (0.3, 0.9) above the reference
    (0.5, 0.5): between violations 0.1 and 0.3 the best accuracy is 0.7 (area 0.2 x 0.2);
    from 0.3 to 0.5 it is 0.9 (area 0.2 x 0.4); (0.2, 0.6) is dominated and adds
    nothing; a point beyond the reference counts for nothing."""
    points = np.array([[0.3, 0.9], [0.1, 0.7], [0.2, 0.6]])
    assert hypervolume(points, (0.5, 0.5)) == pytest.approx(0.04 + 0.08)
    assert hypervolume(points[[1, 2]], (0.5, 0.5)) == pytest.approx(0.4 * 0.2)
    assert hypervolume(np.vstack([points, [[0.6, 0.95]]]), (0.5, 0.5)) == pytest.approx(0.12)
    assert hypervolume(np.array([[0.5, 0.9]]), (0.5, 0.5)) == 0.0


def point(acc, viol, acc_se=0.0, viol_se=0.0):
    return pd.Series({"acc": acc, "viol": viol, "acc_se": acc_se, "viol_se": viol_se})


def test_dominance_within_one_standard_error():
    assert dominates(point(0.80, 0.02), point(0.80, 0.02))
    assert not dominates(point(0.79, 0.02), point(0.80, 0.02))
    # within the larger of the two standard errors, either way round
    assert dominates(point(0.79, 0.02, acc_se=0.011), point(0.80, 0.02))
    assert dominates(point(0.79, 0.02), point(0.80, 0.02, acc_se=0.011))
    assert not dominates(point(0.80, 0.04), point(0.80, 0.02, viol_se=0.01))
    assert dominates(point(0.80, 0.03), point(0.80, 0.02, viol_se=0.01))


def test_report_verdicts():
    """Two seeds per point. The score family's points sit above error-parity's at t = 0.01
    and below them beyond one s.e. at t = 0.05; ThresholdOptimizer's point (acc 0.80,
    violation 0.01) is dominated by the family's point at t = 0.01 only. Above the
    reference (violation 0.05, accuracy 0.80) only the family's staircase has area,
    0.04 x 0.01."""
    rows = []
    for seed, jitter in ((0, -0.001), (1, 0.001)):
        for method, t, acc, viol in [("fairdecide score", 0.01, 0.81, 0.01),
                                     ("fairdecide score", 0.05, 0.80, 0.05),
                                     ("error-parity", 0.01, 0.80, 0.01),
                                     ("error-parity", 0.05, 0.83, 0.05),
                                     ("ThresholdOptimizer", 0.0, 0.80, 0.01)]:
            rows.append(dict(data="COMPAS", constraint="DP", method=method, seed=seed, tol=t,
                             accuracy=acc + jitter, violation=viol, seconds=1.0,
                             status="optimal" if method.startswith("fairdecide") else "",
                             run="now"))
    lines = report(pd.DataFrame(rows), ["# header"],
                   ["fairdecide score", "error-parity", "ThresholdOptimizer"],
                   ["fairdecide score"])
    text = "\n".join(lines)
    assert "# statuses of fairdecide's fits: fairdecide score: optimal 4" in text
    assert "| fairdecide score | 0.01 | 0.8100 (0.0010) | 0.0100 (0.0000) | 1.00 | optimal 2 |" \
        in text
    assert "weakly dominates error-parity within one s.e., by t: 0.01 yes, 0.05 no (1 of 2)" \
        in text
    assert ("ThresholdOptimizer's within one s.e.: 0.01 yes, 0.05 no; so the frontier "
            "does: yes (t = 0.01)") in text
    assert ("hypervolume (reference: violation 0.0500, accuracy 0.8000): fairdecide score "
            "4.00e-04, error-parity 0.00e+00, ThresholdOptimizer 0.00e+00") in text
    # the family's hypervolume ranks first of three; no FairGBM run, so no count
    assert lines[-1] == ("| COMPAS | DP | fairdecide score | 1 of 3 (fairdecide score first) "
                         "| no (1 of 2) | yes (t = 0.01) | - |")


def test_report_compares_a_family_with_error_parity_on_its_scorer_and_covers_fairgbm():
    """One seed. The HGB family's point at t = 0.01 (0.85, 0.01) dominates error-parity
    (HGB)'s (0.84, 0.02) but not the LR error-parity's (0.86, 0.01); FairGBM's points
    (0.84, 0.03) and (0.87, 0.005): the first is dominated by a family point, the second
    by none."""
    rows = [dict(data="Adult", constraint="EO", method=m, seed=0, tol=t, accuracy=a,
                 violation=v, seconds=1.0, status="optimal" if "fairdecide" in m else "",
                 run="now")
            for m, t, a, v in [("fairdecide score (HGB)", 0.01, 0.85, 0.01),
                               ("error-parity (HGB)", 0.01, 0.84, 0.02),
                               ("error-parity", 0.01, 0.86, 0.01),
                               ("FairGBM", 0.01, 0.84, 0.03),
                               ("FairGBM", 0.05, 0.87, 0.005)]]
    text = "\n".join(report(pd.DataFrame(rows), ["# header"],
                            ["fairdecide score (HGB)", "error-parity (HGB)", "error-parity",
                             "FairGBM"], ["fairdecide score (HGB)"]))
    assert "weakly dominates error-parity (HGB) within one s.e., by t: 0.01 yes (1 of 1)" \
        in text
    assert "FairGBM's points weakly dominated by one of its points within one s.e.: 1 of 2" \
        in text
    assert "ThresholdOptimizer" not in text.split("## Summary")[0]


def test_comparison_flags_points_beyond_one_standard_error():
    """Two runs of one point, two seeds each: before accuracy 0.80 +- 0.001 (standard
    error 0.001), after 0.797 (lower by 0.003 > 0.001: flagged) and violation 0.0205
    (higher by 0.0005, within its standard error 0.001: not flagged)."""
    from _frontier_report import comparison

    def run(acc, viol):
        return pd.DataFrame([dict(data="German", constraint="DP", method="fairdecide score",
                                  seed=s, tol=0.01, accuracy=acc + j, violation=viol + j,
                                  seconds=1.0, status="optimal", run="now")
                             for s, j in ((0, -0.001), (1, 0.001))])

    lines = comparison(run(0.80, 0.02), run(0.797, 0.0205), ["fairdecide score"], ["# h"])
    row = next(line for line in lines if line.startswith("| German"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[4:8] == ["0.8000 (0.0010)", "0.7970", "-0.0030", "yes"]
    assert cells[8:] == ["0.0200 (0.0010)", "0.0205", "+0.0005", ""]
    assert lines[-1] == "- fairdecide score: 1 / 0 of 1"
