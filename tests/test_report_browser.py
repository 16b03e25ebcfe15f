"""The audit report opened in headless Chromium: its tables and figures render, with no
console error and no request to the network.

Without Chromium these tests skip, saying how to install it; with
FAIRDECIDE_REQUIRE_BROWSER=1 (set by .ci/run) they fail instead.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.image import imread

from fairdecide.cli import main
from fairdecide.report import audit_report
from tests.browser import render_in_chromium, require_chromium

#: Groups, the three rate tables, the criteria, the policies, the fair decisions.
N_TABLES = 7
#: Three rate figures and the frontier.
N_FIGURES = 4


def _check(rendered, tmp_path) -> None:
    assert rendered.console_errors == [], rendered.summary()
    assert rendered.network_requests == [], rendered.summary()
    assert rendered.n_tables == N_TABLES, rendered.summary()
    assert rendered.n_figures == N_FIGURES, rendered.summary()
    image = imread(rendered.screenshot)[..., :3]
    assert image.shape[1] == 1280 and image.shape[0] > 3000  # the whole page
    assert image.std() > 0.05  # not a blank page
    assert "What this audit could not tell" in rendered.dom


@pytest.mark.slow  # 4-12 s: runs with CI's slow tests
def test_report_renders(tmp_path):
    require_chromium()
    rng = np.random.RandomState(0)
    n = 1500
    z = rng.choice(["f", "m"], n)
    x = rng.choice(["lo", "hi"], n)
    y = (rng.random_sample(n) < np.where(x == "hi", 0.6, 0.3)).astype(int)
    a = np.where(rng.random_sample(n) < 0.75, y, 1 - y)
    df = pd.DataFrame({"x": x, "z": z, "a": a, "y": y})
    path = tmp_path / "report.html"
    audit_report(df, group="z", action="a", outcome="y", features=["x"],
                 n_boot=50).to_html(path)
    _check(render_in_chromium(path, tmp_path / "report.png"), tmp_path)


@pytest.mark.slow  # 4-12 s: runs with CI's slow tests
def test_compas_report_renders(data_dir, tmp_path):
    """The command of docs/audit.md on COMPAS, as a person would run it."""
    require_chromium()
    compas = next(data_dir.glob("compas-scores-two-years.csv*"))
    html = tmp_path / "compas.html"
    code = main(["audit", str(compas), "--group", "race", "--action", "score_text",
                 "--outcome", "two_year_recid", "--kind", "prediction", "--utility",
                 '{"High": {"0": -1, "1": 1}, "Medium": {"0": 0, "1": 0}, '
                 '"Low": {"0": 1, "1": -1}}', "--features", "age_cat", "c_charge_degree",
                 "priors_count", "--html", str(html), "--json", str(tmp_path / "c.json"),
                 "--quiet"])
    assert code == 0
    _check(render_in_chromium(html, tmp_path / "compas.png"), tmp_path)
