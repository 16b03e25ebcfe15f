"""The audit report object: every number, and its three renderings (text, JSON, HTML)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fairdecide._common.meta import package_version
from fairdecide.exceptions import FairdecideError
from fairdecide.report.html import render

__all__ = ["AuditReport"]


def _plain(value: Any) -> Any:
    """JSON-ready: numpy scalars to Python, NaN (suppressed or undefined) to None."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, pd.DataFrame):
        return [_plain(r) for r in value.to_dict(orient="records")]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, np.bool_ | bool):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return None if not math.isfinite(value) else float(value)
    return value


def _sentence(text: str) -> str:
    """``text`` ending with a full stop (unless it ends with other punctuation)."""
    text = text.rstrip()
    return text if text.endswith((".", "!", "?")) else text + "."


def _write(text: str, path: str | Path | None, what: str) -> str:
    if path is not None:
        try:
            Path(path).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise FairdecideError(f"the {what} cannot be written to {str(path)!r}: {exc}") \
                from None
    return text


@dataclass
class AuditReport:
    """The audit of logged decisions, built by :func:`~fairdecide.report.audit_report`.

    Attributes
    ----------
    meta : dict
        What was audited: source, columns, labels, kind, utility, settings, row count
        (the noisy total under privacy). Without the values, ``utility`` is None,
        ``kind`` is the one given (or None), and ``missing`` lists what was missing.
    groups : DataFrame
        ``group``, ``n``, ``share``, ``suppressed``.
    rates : dict of DataFrame
        "P(a | z)", "P(a | y, z)", "P(y | a, z)": tidy tables with ``count``, ``total``,
        ``rate``, ``low``, ``high``, ``suppressed`` (suppressed entries are NaN there and
        None in JSON).
    criteria : DataFrame
        Each criterion's deviation (bias-corrected, interval), posterior, log Bayes factor
        of independence against dependence, ``p_independent`` and ``in_words``.
    policies : DataFrame or None
        The logged decisions on all rows (their value is the mean utility of what was
        done, the number ``evaluate_policy(problem, data, "logged")`` gives, and their
        deviation the criteria table's), then the unconstrained best and the fair
        alternative on the test half (``evaluated_on`` says which): ``value`` and
        ``deviation`` with intervals, ``unsupported`` (share of decisions never logged
        in their cell). None without a utility and kind (see ``skipped``).
    fair_policy : DataFrame or None
        The fair alternative's P(action) per cell and group (None as ``policies``).
    frontier : DataFrame or None
        ``epsilon``, ``utility``, ``deviation`` of the training world's Pareto frontier
        (None as ``policies``).
    notes : list of str
        What was done to the data on the way (rows left out for a missing value and in
        which columns, numeric features binned, a value kept on request although it
        looked like a typo) and what the solvers said.
    limitations : list of str
        What the audit could not tell (small groups, suppressed rates, thin cells, weak
        overlap) and the assumptions its numbers rest on.
    privacy : dict or None
        ``epsilon``, ``mechanism``, ``budget``, ``statement``.
    seconds : float
        How long the audit took.
    skipped : str or None
        Without the utility or the kind (where no default applies) the report holds only
        the fairness parts (groups, rates, criteria): this is the sentence saying what to
        give to get the values and the fair alternative, and ``meta["missing"]`` names
        it. None in a full report.
    warnings : list of str
        What may make the numbers wrong and needs the reader's eyes first, shown first in
        the summary and at the top of the HTML page. (A value of the outcome or action
        that looks like a typo does not get this far: it stops the audit, with a
        :class:`~fairdecide.exceptions.SuspiciousLabelError`; kept on request, it is
        named in ``notes``.)
    """

    meta: dict
    groups: pd.DataFrame
    rates: dict
    criteria: pd.DataFrame
    policies: pd.DataFrame | None
    fair_policy: pd.DataFrame | None
    frontier: pd.DataFrame | None
    notes: list = field(default_factory=list)
    limitations: list = field(default_factory=list)
    privacy: dict | None = None
    seconds: float = 0.0
    skipped: str | None = None
    warnings: list = field(default_factory=list)

    def to_dict(self) -> dict:
        """Every number of the report, JSON-ready (NaN becomes None); ``skipped`` only when
        the value parts were skipped."""
        extra = {} if self.skipped is None else {"skipped": self.skipped}
        return _plain({
            "fairdecide_version": package_version(), "meta": self.meta,
            "groups": self.groups, "rates": self.rates, "criteria": self.criteria,
            "policies": self.policies, "fair_policy": self.fair_policy,
            "frontier": self.frontier, "notes": self.notes,
            "limitations": self.limitations, "privacy": self.privacy,
            "warnings": self.warnings, "seconds": self.seconds, **extra,
        })

    def to_json(self, path: str | Path | None = None) -> str:
        """The report as JSON text (written to ``path`` too when given)."""
        return _write(json.dumps(self.to_dict(), indent=1, allow_nan=False), path, "JSON")

    def to_html(self, path: str | Path | None = None) -> str:
        """A self-contained HTML page: styles and figures inline, no script, no network
        (written to ``path`` too when given)."""
        return _write(render(self), path, "HTML report")

    def summary(self) -> str:
        """The findings in plain text: every warning first, the tests, the values, then
        every note on the data (rows left out, features binned) and every limitation, as
        the JSON and the HTML page hold them. A number a limitation qualifies says so on
        its line (the fair policy's deviation on the held-out rows, a value borrowed from
        other cells)."""
        m = self.meta
        n = f"{m['n_rows']:.0f}" + (" (noisy)" if self.privacy else "")
        lines = [f"Warning: {_sentence(s)}" for s in self.warnings]
        lines += [f"Audit of {n} logged decisions ({m['action']}) by {m['group']}, "
                  f"outcome {m['outcome']}:"]
        lines += [f"- {s}." for s in self.criteria["in_words"]]
        if self.skipped is not None:
            lines.append(self.skipped)
        else:
            fair = len(self.policies) - 1  # the fair alternative is the last row

            def line(k: int, r: Any) -> str:
                out = (f"- {r['policy']}: value {r['value']:.4f} [{r['value_low']:.4f}, "
                       f"{r['value_high']:.4f}], {m['criterion_label']} {r['deviation']:.4f} "
                       f"[{r['deviation_low']:.4f}, {r['deviation_high']:.4f}]")
                said = []  # what the limitations say of these numbers, said beside them
                if m["kind"] == "intervention" and r["unsupported"] > 0.01:
                    said.append(f"{100 * r['unsupported']:.1f}% of its decisions were never "
                                "logged in their cell: its value there is borrowed from "
                                "other cells")
                if k == fair and r["deviation_high"] > m["epsilon"]:
                    said.append(f"the tolerance {m['epsilon']:g} holds in the world "
                                "estimated from the training half, not necessarily on "
                                "these held-out rows")
                return out + (f" ({'; '.join(said)})" if said else "")

            rows = list(enumerate(r for _, r in self.policies.iterrows()))
            lines.append(f"On all rows ({m['level']:.0%} intervals):")
            lines += [line(k, r) for k, r in rows if r["evaluated_on"] == "all rows"]
            lines.append("Fitted on a random half, evaluated on the other half:")
            lines += [line(k, r) for k, r in rows if r["evaluated_on"] == "test half"]
        if self.privacy:
            lines.append(f"Privacy: {self.privacy['statement']}")
        lines += [f"Note: {_sentence(s)}" for s in self.notes]
        lines += [f"Limitation: {_sentence(s)}" for s in self.limitations]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"AuditReport({self.meta['source']!r}, groups={self.meta['group_labels']}, "
                f"private={self.privacy is not None})")
