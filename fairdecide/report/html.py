"""The audit report as one self-contained HTML page: inline styles and SVG figures, no
script and no request to the network, readable printed or on a phone."""

from __future__ import annotations

import datetime
from html import escape
from typing import Any

import numpy as np
import pandas as pd

from fairdecide._common.meta import package_version
from fairdecide.report.rates import RATES
from fairdecide.report.svg import dot_chart, frontier_chart
from fairdecide.report.words import RECONCILE, size_text

__all__ = ["render"]

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:980px;margin:2em auto;
padding:0 1em;color:#1a1a1a;line-height:1.45}
h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:2px solid #0072B2;padding-bottom:.2em;
margin-top:2em}h3{margin-top:1.4em}
table{border-collapse:collapse;margin:.6em 0 1em;font-size:.92em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#eef3f8}td.l,th.l{text-align:left}
.meta{color:#555}.finding{background:#f4f8fb;border-left:4px solid #0072B2;padding:.5em 1em;
margin:.4em 0}.warn{background:#fff6e8;border-left:4px solid #E69F00;padding:.5em 1em}
figure{margin:1em 0}figcaption{color:#555;font-size:.9em}
.muted{color:#888}
"""


def _fmt(v: Any, digits: int = 4) -> str:
    if v is None or (isinstance(v, float | np.floating) and not np.isfinite(v)):
        return '<span class="muted">not shown</span>'
    if isinstance(v, bool | np.bool_):
        return "yes" if v else ""
    if isinstance(v, int | np.integer):
        return f"{int(v):,}"
    if isinstance(v, float | np.floating):
        return f"{v:,.0f}" if digits == 0 else f"{v:.{digits}f}"
    return escape(str(v))


def _table(df: pd.DataFrame, digits: dict | None = None, caption: str = "") -> str:
    digits = digits or {}
    head = "".join(f'<th class="{"l" if df[c].dtype == object else ""}">{escape(str(c))}'
                   "</th>" for c in df.columns)
    body = []
    for _, row in df.iterrows():
        cells = "".join(
            f'<td class="{"l" if df[c].dtype == object else ""}">'
            f"{_fmt(row[c], digits.get(c, 4))}</td>" for c in df.columns)
        body.append(f"<tr>{cells}</tr>")
    cap = f"<caption>{escape(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _rate_panels(t: pd.DataFrame, value: str, cond: str | None, actions: list) -> list:
    """Panels of a rate table: one per (condition, value) shown; with two values only the
    second (the first is its complement)."""
    shown = actions[1:] if len(actions) == 2 else actions
    panels = []
    conds = [None] if cond is None else list(dict.fromkeys(t[cond]))
    for c in conds:
        for v in shown:
            sel = t[(t[value] == v) & ((t[cond] == c) if cond else True)]
            rows = [(r["group"], None if r["suppressed"] else r["rate"], r["low"], r["high"])
                    for _, r in sel.iterrows()]
            title = f"{value} = {v}" + (f", {cond} = {c}" if cond else "")
            panels.append((title, rows))
    return panels


def _rates_section(rep: Any) -> str:
    m = rep.meta
    out = ["<h2>Rates by group</h2>",
           f"<p>{m['level']:.0%} intervals. "
           + ("Counts are private releases (noisy); the intervals include the noise."
              if rep.privacy else
              f"A group with a count of 1 to {m['min_cell'] - 1} people has its rates "
              "hidden (see Privacy).") + "</p>"]
    specs = {"P(a | z)": ("action", None, m["action_labels"]),
             "P(a | y, z)": ("action", "outcome", m["action_labels"]),
             "P(y | a, z)": ("outcome", "action", m["outcome_labels"])}
    for key, (value, cond, labels) in specs.items():
        t = rep.rates[key]
        fig = dot_chart(f"{key}: {RATES[key]}", _rate_panels(t, value, cond, labels),
                        "rate")
        out += [f"<h3>{escape(key)}: {escape(RATES[key])}</h3>",
                f"<figure>{fig}<figcaption>Dots: estimates; bars: {m['level']:.0%} "
                "intervals.</figcaption></figure>",
                _table(t, {"count": 0, "total": 0})]
    return "".join(out)


def _policy_section(rep: Any) -> str:
    m = rep.meta
    pts = [(r["policy"], r["deviation"], r["deviation_low"], r["deviation_high"],
            r["value"], r["value_low"], r["value_high"]) for _, r in rep.policies.iterrows()]
    front = list(zip(rep.frontier["deviation"], rep.frontier["utility"], strict=True))
    fig = frontier_chart(f"Value against {m['criterion_label']}", front, pts,
                         f"{m['criterion_label']}", "value (utility per person)")
    blind = " without reading the group" if m["group_blind"] else ""
    return "".join([
        "<h2>The logged decisions and a fair alternative</h2>",
        f"<p>The fair alternative is the policy with the highest value whose "
        f"{escape(m['criterion_label'])} is at most {m['epsilon']:g}{blind}, in the "
        "world estimated from a random half of the rows; the unconstrained best ignores "
        "fairness. Both are evaluated on the other half. The logged decisions were not "
        "fitted to anything, so they are evaluated on all rows: their value is the "
        "average utility of what was actually done, and their deviation the one in the "
        "table of criteria above. Value is the utility per person (utility U(a, y) = "
        f"{escape(str(m['utility']))} for actions {escape(str(m['action_labels']))} and "
        f"outcomes {escape(str(m['outcome_labels']))}).</p>",
        _table(rep.policies),
        f"<figure>{fig}<figcaption>The line is the best value at each tolerance in the "
        "training world; points are estimates on the test half with "
        f"{m['level']:.0%} intervals in both directions.</figcaption></figure>",
        "<h3>The fair alternative's decisions</h3>",
        "<p>Probability of each action in each cell and group (share: the cell's share "
        "of its group).</p>",
        _table(rep.fair_policy, {"share": 3}),
    ])


def render(rep: Any) -> str:
    """The HTML page of an :class:`~fairdecide.report.AuditReport`."""
    m = rep.meta
    n = f"{m['n_rows']:,.0f}" + (" (a noisy count)" if rep.privacy else "")
    crit = rep.criteria.drop(columns=["in_words"])
    def finding(r: Any) -> str:
        words = r["in_words"][0].upper() + r["in_words"][1:]
        size = size_text(r["criterion"], r["log_bayes_factor"], r["deviation"], r["low"],
                         r["high"], m["level"])
        return f'<div class="finding">{escape(words)}. {escape(size)}</div>'

    findings = "".join(finding(r) for _, r in rep.criteria.iterrows())
    findings += f"<p>{escape(RECONCILE)}</p>"
    privacy = (f"<h2>Privacy</h2><p>{escape(rep.privacy['statement'])}</p>" if rep.privacy
               else "<h2>Privacy</h2><p>No differential privacy was applied. A group with "
               f"any count from 1 to {m['min_cell'] - 1} (of a decision and outcome, or of "
               "a decision or an outcome) has all its rates hidden, since its other "
               "counts would give the small one back by subtraction. Suppression has no "
               "formal guarantee (the deviations and tests still use every count); use "
               "differential privacy when the report is public.</p>")
    notes = "".join(f"<li>{escape(s)}</li>" for s in rep.notes)
    limits = "".join(f"<li>{escape(s)}</li>" for s in rep.limitations)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return "".join([
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Fairness audit: {escape(m['action'])} by {escape(m['group'])}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>Fairness audit of {escape(m['action'])} by {escape(m['group'])}</h1>",
        f'<p class="meta">{n} logged decisions from {escape(m["source"])}; outcome '
        f"{escape(m['outcome'])}; features {escape(', '.join(m['features']) or 'none')}; "
        + (f"treated as a {m['kind']} problem. " if m["kind"] else "")
        + f"fairdecide {escape(package_version())}, "
        f"{stamp}, {rep.seconds:.1f} s.</p>",
        "".join(f'<p class="warn"><strong>Warning:</strong> {escape(w)}</p>'
                for w in rep.warnings),
        "<h2>What the data say</h2>", findings,
        "<h2>Groups</h2>", _table(rep.groups, {"n": 0, "share": 3}),
        _rates_section(rep),
        "<h2>Fairness criteria</h2>",
        "<p>Deviation: the bias-corrected estimate with its bootstrap interval (0 = the "
        "criterion holds exactly); posterior: under a Dirichlet model of P(z, a, y); "
        "log_bayes_factor: the log Bayes factor of the criterion holding against not "
        "(negative: evidence of a violation); p_independent: the posterior probability "
        "that it holds, with even prior odds.</p>",
        _table(crit),
        _policy_section(rep) if rep.skipped is None else
        f'<p class="warn">{escape(rep.skipped)}</p>', privacy,
        "<h2>What this audit could not tell</h2>", f"<ul>{limits}</ul>",
        f"<h2>Notes on the data</h2><ul>{notes or '<li>none</li>'}</ul>",
        "</body></html>",
    ])
